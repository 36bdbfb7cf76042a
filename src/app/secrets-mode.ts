import { UsageError } from '../errors.js';

/**
 * `--secrets required|optional` (README, "Plans without the passwords: `--secrets optional`"). `required` (the default): a password secret
 * that cannot be read is an error (exit 65), nothing sent. `optional`: a plan is made without
 * it: creates show the password as not available, its drift is "not checked" (one note), and
 * a saved plan records that, so that `amsync apply` checks it with the secrets.
 */
export type SecretsMode = 'required' | 'optional';

export const secretsModes: readonly SecretsMode[] = ['required', 'optional'];

/**
 * `--secrets optional` is for plans: a run that writes needs every password, so `sync`
 * without `--dry-run` refuses it as a usage error (exit 64) before anything is read. Refused
 * on the flags, not on what happens to be missing: a job that would write with passwords
 * missing is wrong even on the day they are all there, and is found on its first run.
 * A fleet run (`--targets`) does not take it yet.
 */
export function checkSecretsMode(mode: SecretsMode | undefined, how: { readonly dryRun: boolean; readonly fleet: boolean }): void {
  if (mode !== 'optional') return;
  if (!how.dryRun) {
    throw new UsageError('--secrets optional plans without the passwords it cannot read; a sync writes and needs every one of them: use it with `amsync plan` or `amsync sync --dry-run`', 'conflicting_flags');
  }
  if (how.fleet) {
    throw new UsageError('--secrets optional is not supported with --targets yet: plan each service with -f and --url', 'conflicting_flags');
  }
}
