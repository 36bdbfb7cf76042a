import { createServiceContext as contextOf, type ContextOverrides, type ServiceContext } from '../app/index.js';
import { resolveDesiredSource, resolveSettings, type Settings } from '../settings/index.js';
import type { CliIo } from './io.js';
import type { ServiceOptions } from './shared-options.js';

export { createNotifier, noUrlMessage, renewalGraceMs, type ContextOverrides, type LoadedDesiredState, type ServiceContext, type SyncOptions } from '../app/index.js';

/**
 * The application's context for a command: settings from the command's flags, env and
 * settings file (or a fleet target's own, handed in), and the desired source from -f.
 */
export async function createServiceContext(
  opts: ServiceOptions,
  io: Pick<CliIo, 'env' | 'stderr'>,
  overrides: ContextOverrides & { readonly settings?: Settings } = {},
): Promise<ServiceContext> {
  const { settings: given, ...rest } = overrides;
  const settings = given ?? (await resolveSettings(opts, io.env));
  const source = resolveDesiredSource(opts, io.env);
  return contextOf({ settings, source, env: io.env, stderr: io.stderr }, rest);
}
