import { resolve } from 'node:path';
import { localPathError, probeWritable, type LocalPath, type WriteMode } from '../secrets/index.js';
import { settingOptions, type Settings } from '../settings/index.js';

/** What a command will write on this machine besides the service. */
export interface PlannedOutputs {
  /** It writes to the service (sync, apply): the state file, its lock and key, tokensDir, the audit log. */
  readonly writes: boolean;
  /** `--report FILE`. */
  readonly reportFile?: string | undefined;
  /** `--out PLANFILE`. */
  readonly planFile?: string | undefined;
  /** It appends its report to GITHUB_STEP_SUMMARY when that is set (plan, sync, apply). */
  readonly stepSummary?: boolean;
  /** Other files replaced atomically (export's `-o FILE`): what each is and the flag that names it. */
  readonly files?: readonly { readonly what: string; readonly path: string; readonly flag: string; readonly code: string }[];
}

/** A path a command writes, how it writes it, and the code of the error when it cannot. */
export interface LocalOutput extends LocalPath {
  readonly mode: WriteMode;
  readonly code: string;
}

/**
 * The local paths a command will write, in the order it first writes them: the writer lock is
 * taken before anything is sent, the state file and its key are saved during the apply, tokens
 * when keys are created, the audit log before the first write; a plan or report file at the end.
 */
export function localOutputsOf(settings: Pick<Settings, 'stateFile' | 'tokensDir' | 'auditLog'>, env: Readonly<Record<string, string | undefined>>, planned: PlannedOutputs): LocalOutput[] {
  const outputs: LocalOutput[] = [];
  if (planned.writes) {
    const state = resolve(settings.stateFile);
    const stateSetting = settingWords('stateFile');
    const beside = `beside the state file: ${stateSetting}`;
    outputs.push({ what: 'the state file', path: state, setting: stateSetting, knob: '--state-file', mode: 'replace', code: 'state_file_unwritable' });
    outputs.push({ what: 'the writer lock', path: `${state}.lock`, setting: beside, knob: '--state-file', mode: 'beside', code: 'writer_lock_unwritable' });
    // With AMSYNC_STATE_KEY set, no key file is read or written.
    if ((env.AMSYNC_STATE_KEY ?? '') === '') outputs.push({ what: 'the state key file', path: `${state}.key`, setting: `${beside}; or set AMSYNC_STATE_KEY`, knob: '--state-file', mode: 'replace', code: 'state_key_unwritable' });
    if (settings.tokensDir !== undefined) outputs.push({ what: 'tokensDir', path: resolve(settings.tokensDir), setting: settingWords('tokensDir'), knob: '--tokens-dir', mode: 'folder', folder: true, code: 'tokens_dir' });
    if (settings.auditLog !== undefined) outputs.push({ what: 'the audit log', path: resolve(settings.auditLog), setting: settingWords('auditLog'), knob: '--audit-log', mode: 'append', code: 'audit_open_failed' });
  }
  if (planned.planFile !== undefined) outputs.push({ what: 'the plan file', path: resolve(planned.planFile), setting: '--out', knob: '--out', mode: 'replace', code: 'plan_unwritable' });
  if (planned.reportFile !== undefined) outputs.push({ what: 'the report', path: resolve(planned.reportFile), setting: '--report', knob: '--report', mode: 'replace', code: 'report_unwritable' });
  const summary = env.GITHUB_STEP_SUMMARY;
  if (planned.stepSummary === true && summary) outputs.push({ what: 'the step summary', path: resolve(summary), setting: 'GITHUB_STEP_SUMMARY', knob: 'GITHUB_STEP_SUMMARY', mode: 'append-followed', code: 'step_summary_unwritable' });
  for (const f of planned.files ?? []) outputs.push({ what: f.what, path: resolve(f.path), setting: f.flag, knob: f.flag.split('/')[0]!, mode: 'replace', code: f.code });
  return outputs;
}

/**
 * Checks every local path a command will write before its first request (README, "Safety": a run
 * that cannot keep what it does sends nothing): a read-only or full file system, a folder this
 * user may not write, or a file where a folder must be is one line naming the path, its
 * setting and the fix (LocalPathError, exit 1), instead of an `unexpected failure` with a
 * stack after the writes, or apikeys created whose tokens cannot be stored.
 */
export async function checkLocalOutputs(outputs: readonly LocalOutput[]): Promise<void> {
  for (const output of outputs) {
    try {
      await probeWritable(output.path, output.mode);
    } catch (error) {
      throw localPathError(error, output, { code: output.code, nothingSent: true });
    }
  }
}

/** `--state-file, AMSYNC_STATE_FILE, stateFile`: how the user sets it, as the settings table has it. */
export function settingWords(name: 'stateFile' | 'tokensDir' | 'auditLog' | 'refreshTokenFile'): string {
  const option = settingOptions.find((o) => o.path.length === 1 && o.path[0] === name);
  return [option?.flag, option?.env, name].filter((w) => w !== undefined).join(', ');
}
