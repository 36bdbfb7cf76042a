import { loadDesired } from '../desired/index.js';
import { InvalidInputError } from '../errors.js';
import type { DesiredState, Diagnostic } from '../model/index.js';
import { diagnosticCodes, expiresAtMs, instantText } from '../model/index.js';
import type { ValidateCounts, ValidateReport } from '../report/index.js';
import { sinkNameFindings } from '../secrets/index.js';
import { describeSource, loadSettings, type DesiredPaths } from '../settings/index.js';
import { secretSinkOf } from './secret-sink-of.js';

type Env = Readonly<Record<string, string | undefined>>;

/** What `amsync validate` checks: the desired files, the settings file (and AMSYNC_*), the targets file. */
export interface ValidateRequest {
  readonly source: DesiredPaths;
  readonly settingsFile?: string | undefined;
  readonly targetsFile?: string | undefined;
  /** A password variable unset or a secret file unreadable is an error, not a warning. */
  readonly requireSecrets: boolean;
  /** The wall clock `expires:` is checked against (ms). @default Date.now */
  readonly now?: () => number;
}

/** Findings about the desired files (the others are about the settings): what the exit message names. */
const desiredDiagnostics = new WeakSet<Diagnostic>();

/** Whether a finding of validateFiles is about the desired files. */
export function isDesiredFinding(d: Diagnostic): boolean {
  return desiredDiagnostics.has(d);
}

/**
 * Runs every check offline and gathers the findings; throws only for what is not about the
 * input. Nothing here imports the service client.
 */
export async function validateFiles(request: ValidateRequest, env: Env): Promise<ValidateReport> {
  const { source, targetsFile } = request;
  const errors: Diagnostic[] = [];
  const warnings: Diagnostic[] = [];
  let state: DesiredState | undefined;
  let files: readonly string[] | undefined;
  const secrets = request.requireSecrets ? 'require' : 'warn';
  // Fleet: the targets file first; `targets:` in the desired file names its targets.
  const fleet = targetsFile === undefined ? undefined : await (await import('./fleet-run.js')).validateFleet(targetsFile, env, secrets);
  if (fleet) split(fleet.diagnostics, errors, warnings);
  // A targets file that did not load: its names cannot be checked, so they are not reported as unknown.
  const catalogue = fleet === undefined ? undefined : (fleet.targets ?? []);
  const unchecked = fleet !== undefined && fleet.targets === undefined ? new Set(['unknown_target', 'no_target_selected']) : new Set<string>();
  try {
    const loaded = await loadDesired(source, env, { secrets, ...(catalogue === undefined ? {} : { targets: catalogue }) });
    for (const d of loaded.warnings) desiredDiagnostics.add(d);
    state = loaded.value;
    if (loaded.files.length > 1) files = loaded.files.map((f) => f.file);
    warnings.push(...loaded.warnings.filter((d) => !unchecked.has(d.code)));
    const past = pastExpiries(loaded.value, (request.now ?? Date.now)());
    for (const d of past) desiredDiagnostics.add(d);
    warnings.push(...past);
  } catch (error) {
    if (!(error instanceof InvalidInputError)) throw error;
    const kept = error.diagnostics.filter((d) => !unchecked.has(d.code));
    for (const d of kept) desiredDiagnostics.add(d);
    split(kept, errors, warnings);
  }
  try {
    const settings = await loadSettings({ ...(request.settingsFile !== undefined ? { settingsFile: request.settingsFile } : {}), env });
    // With the sink known (the settings file, AMSYNC_TOKENS_DIR, AMSYNC_KUBERNETES_SECRET): the items whose secret it could not store, as sync refuses them.
    const names = state === undefined ? [] : sinkNameFindings(state, secretSinkOf(settings));
    for (const d of names) desiredDiagnostics.add(d);
    errors.push(...names);
  } catch (error) {
    if (!(error instanceof InvalidInputError)) throw error;
    split(error.diagnostics, errors, warnings);
  }
  const perTarget = fleet?.targets === undefined || state === undefined ? undefined : await fleetCounts(state, fleet.targets);
  return {
    valid: errors.length === 0,
    file: describeSource(source),
    ...(files ? { files } : {}),
    counts: state ? countsOf(state) : null,
    warnings,
    errors,
    ...(targetsFile === undefined ? {} : { fleet: { file: targetsFile, targets: perTarget ?? [] } }),
  };
}

/** How many items each target gets from the file. */
async function fleetCounts(state: DesiredState, targets: readonly { readonly name: string; readonly labels: Readonly<Record<string, string>> }[]): Promise<({ name: string } & ValidateCounts)[]> {
  const { desiredForTarget } = await import('../fleet/index.js');
  return targets.map((t) => ({ name: t.name, ...countsOf(desiredForTarget(state, t)) }));
}

function split(diagnostics: readonly Diagnostic[], errors: Diagnostic[], warnings: Diagnostic[]): void {
  for (const d of diagnostics) (d.severity === 'error' ? errors : warnings).push(d);
}

export function countsOf(state: DesiredState): ValidateCounts {
  const absent = [...state.sshUsers, ...state.apikeys].filter((i) => i.ensure === 'absent').length;
  return { sshUsers: state.sshUsers.length, apikeys: state.apikeys.length, absent };
}

/**
 * `expires:` already past (issue 30): valid, but the item is deleted at the next sync and never
 * created; a warning (exit 0) at the item, so a forgotten contractor entry is noticed.
 */
function pastExpiries(state: DesiredState, now: number): Diagnostic[] {
  const out: Diagnostic[] = [];
  const check = (list: 'sshUsers' | 'apikeys', noun: string, items: readonly { readonly expires?: string; readonly ensure: string; readonly source?: Diagnostic['position'] }[], keyOf: (i: number) => string) => {
    items.forEach((item, i) => {
      const at = item.expires === undefined || item.ensure !== 'present' ? undefined : expiresAtMs(item.expires);
      if (at === undefined || at > now) return;
      out.push({
        severity: 'warning',
        code: diagnosticCodes.alreadyExpired,
        message: `${noun} "${keyOf(i)}" expired at ${instantText(at)}: a sync deletes it and never creates it (remove it, or change its expiry)`,
        path: `${list}[${i}].expires`,
        ...(item.source ? { position: item.source } : {}),
      });
    });
  };
  check('sshUsers', 'SSH user', state.sshUsers, (i) => state.sshUsers[i]!.username);
  check('apikeys', 'apikey', state.apikeys, (i) => state.apikeys[i]!.name);
  return out;
}
