import { delimiter } from 'node:path';

type Env = Readonly<Record<string, string | undefined>>;

/** Where the desired state is read from (the shape of desired/'s DesiredSource). */
export interface DesiredPaths {
  readonly paths: readonly string[];
  readonly recursive?: boolean;
  /** Neither -f nor AMSYNC_FILE was given: ./access.yaml by default. */
  readonly defaulted?: boolean;
}

/**
 * `-f` (each time given), else AMSYNC_FILE (several paths separated by the platform's path
 * delimiter, `:` on Linux and macOS), else ./access.yaml.
 */
export function resolveDesiredSource(opts: { readonly file?: string | readonly string[]; readonly recursive?: boolean }, env: Env): DesiredPaths {
  const given = opts.file === undefined ? [] : typeof opts.file === 'string' ? [opts.file] : [...opts.file];
  const fromEnv = (env.AMSYNC_FILE ?? '').split(delimiter).filter((p) => p !== '');
  const defaulted = given.length === 0 && fromEnv.length === 0;
  const paths = defaulted ? ['access.yaml'] : given.length > 0 ? given : fromEnv;
  return { paths, ...(opts.recursive === true ? { recursive: true } : {}), ...(defaulted ? { defaulted: true } : {}) };
}

/** The desired state's name in headings and messages: the one path, or all of them. */
export function describeSource(source: DesiredPaths): string {
  return source.paths.join(', ');
}

/** `-f` as one name: the flag, else AMSYNC_FILE, else ./access.yaml (several: joined). */
export function resolveDesiredFile(opts: { readonly file?: string | readonly string[]; readonly recursive?: boolean }, env: Env): string {
  return describeSource(resolveDesiredSource(opts, env));
}
