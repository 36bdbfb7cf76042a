import { dirname, isAbsolute, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { AmsyncError, UsageError } from '../errors.js';
import type { ActualState } from '../model/index.js';
import type { DesiredFromActual } from '../plan/index.js';
import type { CommandContext } from './commands.js';
import { addServiceOptions, type ServiceOptions } from './shared-options.js';

type Env = Readonly<Record<string, string | undefined>>;

export interface ExportOptions extends ServiceOptions {
  readonly output?: string;
  readonly schema?: string;
}

/** The installed JSON Schema of the desired-state file (dist/cli/ and src/cli/ alike). */
const installedSchema = fileURLToPath(new URL('../../config/access.schema.json', import.meta.url));

/** Shared flags that mean nothing to an export: refused, not silently ignored. */
const unusedFlags: readonly { key: keyof ExportOptions; flag: string; hint: string }[] = [
  { key: 'file', flag: '-f/--file', hint: 'export writes a desired-state file: name it with -o FILE' },
  { key: 'prune', flag: '--prune', hint: 'an export never prunes: it leaves prune off' },
  { key: 'maxDeletes', flag: '--max-deletes', hint: 'an export deletes nothing' },
  { key: 'detailedExitcode', flag: '--detailed-exitcode', hint: 'an export has no plan' },
  { key: 'json', flag: '--json', hint: 'an export is YAML, a desired-state file' },
  { key: 'format', flag: '--format', hint: 'an export is YAML, a desired-state file' },
];

/**
 * `amsync export [-o FILE]`: the actual state as a desired-state file, with no secrets, that
 * validates and plans zero changes against the same service (the import round trip that
 * Terraform's import-verify checks). amsync checks that round trip itself before writing.
 */
export function registerExportCommand(program: Command, _ctx: CommandContext): void {
  const cmd = program.command('export').description('write the actual state as a desired-state file (no secrets) that plans zero changes: the way to start managing a service');
  addServiceOptions(cmd)
    .option('-o, --output <FILE>', 'write to FILE (atomically) instead of stdout')
    .option('--schema <REF>', 'the `$schema` reference in the header (default: the installed config/access.schema.json, relative to the output)')
    .action(async (opts: ExportOptions) => {
      await runExport(opts, process.env);
    });
}

export async function runExport(opts: ExportOptions, env: Env): Promise<void> {
  for (const { key, flag, hint } of unusedFlags) {
    if (opts[key] !== undefined && opts[key] !== false) throw new UsageError(`${flag} has no meaning for export: ${hint}`, 'conflicting_flags');
  }
  if (opts.output !== undefined && opts.out !== undefined) throw new UsageError('-o/--output and --out both name the output: give one', 'conflicting_flags');
  const output = opts.output ?? opts.out;
  // Loaded here, not at start: a cold `amsync validate` needs none of it.
  const [{ createServiceContext }, { readActualState }, { desiredFromActual }, { limits, stringifyDesiredChunks }, { writeFileAtomic }] = await Promise.all([
    import('./service-context.js'),
    import('../state/index.js'),
    import('../plan/index.js'),
    import('../spec/index.js'),
    import('../secrets/atomic-write.js'),
  ]);
  const context = await createServiceContext(opts, env);
  try {
    context.client(); // a missing URL or token is a usage error, found before any request
    // No tokens: an export writes none (at 1M keys they would be ~100 MB held for nothing).
    const { state } = await readActualState(context.service(), { tokens: false });
    const exported = desiredFromActual(state);
    const schemaRef = opts.schema ?? schemaRefFor(output === undefined ? process.cwd() : dirname(resolve(output)));
    // Written as chunks (about 1,000 items each), and checked before the first one goes out.
    const chunks = [`${exportHeader(context.settings.url!, schemaRef, exported)}\n\n`, ...stringifyDesiredChunks(exported.desired, { omitDefaults: true })];
    await verifyRoundTrip(chunks.join(''), state);
    let bytes = 0;
    for (const chunk of chunks) bytes += Buffer.byteLength(chunk);
    if (bytes > limits.maxFileBytes) {
      process.stderr.write(
        `warning: the export is ${(bytes / 1024 / 1024).toFixed(1)} MB, more than the ${limits.maxFileBytes / 1024 / 1024} MB a desired-state file may have; validate and plan will refuse it\n`,
      );
    }
    if (output === undefined) {
      await writeChunks(process.stdout, chunks);
      return;
    }
    // Not a secret, so the usual mode; atomic, so an existing file is never left half written.
    await writeFileAtomic(resolve(output), chunks, 0o644);
    const { desired, skipped, pinned } = exported;
    const notes = [pinned > 0 ? `${pinned} apikeys pinned by id` : '', skipped.length > 0 ? `${skipped.length} left out, see the header` : ''].filter(Boolean);
    process.stderr.write(`Exported ${desired.sshUsers.length} SSH users and ${desired.apikeys.length} apikeys to ${output}${notes.length > 0 ? ` (${notes.join('; ')})` : ''}.\n`);
  } finally {
    context.close();
  }
}

/**
 * The header: what the file is, why it holds no secrets, and what was left out. Names are
 * JSON-quoted in comments, so a name with a line break cannot end the comment and inject YAML.
 */
export function exportHeader(serviceUrl: string, schemaRef: string, exported: DesiredFromActual): string {
  const url = new URL(serviceUrl);
  const lines = [
    `yaml-language-server: $schema=${schemaRef}`,
    '',
    `The actual state of ${url.origin}${url.pathname.replace(/\/+$/, '')} as a desired-state file, written by \`amsync export\`.`,
    'As it is, it plans zero changes against that service (`amsync plan --detailed-exitcode` exits 0).',
    '',
    '- No secrets: passwords are write-only and apikey tokens are made by the service, so neither',
    '  is here. An existing SSH user needs no password (its password is left alone); add',
    '  `password: { env: NAME }` to a user for amsync to set and track it.',
    '- Values equal to the defaults are left out: level n1, superuser false, roles [].',
    ...(exported.pinned > 0 ? ['- Apikeys that share a name carry `id:`, which tells them apart (names are not unique).'] : []),
    '- prune is off: an item removed from this file is left alone on the service, not deleted.',
    ...(schemaRef === 'access.schema.json' ? ["- Point $schema above at amsync's config/access.schema.json for completion in editors."] : []),
  ];
  if (exported.skipped.length > 0) {
    lines.push('- Left out, as a desired-state file cannot declare them (they stay unmanaged):');
    for (const s of exported.skipped) lines.push(`    ${s.kind} ${JSON.stringify(s.key)} (id ${s.id}): ${s.reason}`);
  }
  return lines.map((l) => (l === '' ? '#' : `# ${l}`)).join('\n');
}

/**
 * The installed schema, relative to the folder the file is written to (a language server
 * resolves it from there), when that path stays inside the folder's tree or leads into a
 * node_modules: a path that climbs out to wherever amsync happens to be installed would be
 * meaningless in a repository. Otherwise the schema's bare name, for the user to point.
 */
export function schemaRefFor(folder: string, schemaPath: string = installedSchema): string {
  const ref = relative(folder, schemaPath).split('\\').join('/');
  if (!isAbsolute(ref) && (!ref.startsWith('../') || ref.includes('/node_modules/'))) return ref;
  return 'access.schema.json';
}

/**
 * Writes each chunk, waiting whenever the stream asks to (a pipe to a slow reader); stops when
 * the reader went away (`amsync export | head`: the entry ignores that EPIPE).
 */
async function writeChunks(stream: NodeJS.WriteStream, chunks: readonly string[]): Promise<void> {
  for (const chunk of chunks) {
    if (stream.destroyed) return;
    if (stream.write(chunk)) continue;
    await new Promise<void>((resolve) => {
      const done = (): void => {
        for (const event of ['drain', 'close', 'error']) stream.off(event, done);
        resolve();
      };
      for (const event of ['drain', 'close', 'error']) stream.once(event, done);
    });
  }
}

/**
 * Import-verify, built in: the text must parse as a valid desired-state file and plan zero
 * changes against the listing it came from. Anything else is a bug in amsync, and nothing
 * is written rather than a file that would change the service. The size limit on files amsync
 * reads does not apply to this check of its own output: an export may be larger.
 */
async function verifyRoundTrip(text: string, actual: ActualState): Promise<void> {
  const [{ parseDesired }, { plan }] = await Promise.all([import('../spec/index.js'), import('../plan/index.js')]);
  const parsed = parseDesired(text, { file: 'export', env: {}, readSecretFile: () => new Error('an export references no secret file'), maxBytes: Number.POSITIVE_INFINITY });
  if (!parsed.value) {
    const first = parsed.errors[0];
    throw new AmsyncError('export_invalid', `the export does not validate (${first ? `${first.message} at ${first.path}` : 'unknown error'}); nothing was written. This is a bug in amsync: please report it`);
  }
  const roundTrip = plan(parsed.value, actual, { prune: parsed.value.prune, isProtected: () => false, passwords: { mode: 'create-only' } });
  if (roundTrip.changes.length > 0 || roundTrip.problems.length > 0) {
    throw new AmsyncError(
      'export_not_round_trip',
      `the export would plan ${roundTrip.changes.length} changes and ${roundTrip.problems.length} problems instead of none; nothing was written. This is a bug in amsync: please report it`,
    );
  }
}
