import { appendFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { AmsyncError, SafetyError } from '../errors.js';
import { markdownMaxChars, mdText, renderMarkdown, toJsonDocument, type Report } from '../report/index.js';
import { renderStaleMarkdown, StalePlanError, type SavedPlan } from '../saved-plan/index.js';
import { isFsError, localPathError, writeFileAtomic, scrub } from '../secrets/index.js';
import { jsonSafe } from '../text/index.js';

type Env = Readonly<Record<string, string | undefined>>;

export interface PublishOptions {
  readonly env: Env;
  /** `--report FILE`. */
  readonly reportFile?: string;
  readonly now: Date;
  /** Why nothing was applied, when a guard refused: the report says so. */
  readonly refusal?: AmsyncError;
}

/**
 * Where a report goes besides stdout, the same for `plan`, `sync` and `apply`: the Markdown
 * summary appended to GITHUB_STEP_SUMMARY (GitHub Actions shows it on the run's page) and
 * the `--report` file. Both are built by the redacting renderers, and both pass the one
 * redaction step on the way out, so neither holds a secret.
 */
export async function publishReport(report: Report, options: PublishOptions): Promise<void> {
  await appendStepSummary(options.env, renderMarkdown(report, { maxChars: markdownMaxChars, ...(options.reportFile === undefined ? {} : { reportFile: options.reportFile }) }));
  if (options.reportFile !== undefined) {
    const refusal = options.refusal ? { code: options.refusal.code, message: options.refusal.message } : undefined;
    await writeReportFile(options.reportFile, reportDocument(report, options.now, refusal));
  }
}

/**
 * A saved plan `amsync apply` refused: Markdown in the step summary, and the report file with
 * what moved, so that a CI run's page says why nothing was applied.
 */
export async function publishRefusal(error: SafetyError, saved: SavedPlan, options: { env: Env; planFile: string; desiredFile: string; reportFile?: string | undefined }): Promise<void> {
  const { env, planFile, reportFile } = options;
  if (error instanceof StalePlanError) await appendStepSummary(env, renderStaleMarkdown(planFile, error.staleness));
  else await appendStepSummary(env, `### amsync apply: refused\n\n${mdText(error.message)} **Nothing was written.**\n`);
  if (reportFile === undefined) return;
  const detail = error instanceof StalePlanError && error.staleness.reason === 'service' ? { serviceChanges: error.staleness.changes } : {};
  const report: Report = { plan: saved.plan, dryRun: true, file: options.desiredFile, command: 'apply', planFile };
  await writeReportFile(reportFile, reportDocument(report, new Date(), { code: error.code, message: error.message, ...detail }));
}

/** The --json document with a timestamp after its version, and why it was refused, if it was. */
export function reportDocument(report: Report, now: Date, refusal?: Record<string, unknown>): Record<string, unknown> {
  const { formatVersion, ...rest } = toJsonDocument(report);
  return { formatVersion, timestamp: now.toISOString(), ...rest, ...(refusal ? { refusal } : {}) };
}

/** Appends to GITHUB_STEP_SUMMARY when it is set (GitHub Actions); does nothing elsewhere. */
export async function appendStepSummary(env: Env, markdown: string): Promise<void> {
  if (!env.GITHUB_STEP_SUMMARY) return;
  try {
    await appendFile(env.GITHUB_STEP_SUMMARY, `${scrub(markdown)}\n`);
  } catch (error) {
    if (!isFsError(error)) throw error;
    const target = { what: 'the step summary', path: env.GITHUB_STEP_SUMMARY, setting: 'GITHUB_STEP_SUMMARY', knob: 'GITHUB_STEP_SUMMARY' };
    throw localPathError(error, target, { code: 'step_summary_unwritable' });
  }
}

/** The `--report` file: the JSON document of --json plus a timestamp; 0600, written atomically. */
export async function writeReportFile(path: string, doc: Record<string, unknown>): Promise<void> {
  try {
    await writeFileAtomic(resolve(path), `${jsonSafe(scrub(JSON.stringify(doc, null, 2)))}\n`, 0o600);
  } catch (error) {
    if (!isFsError(error)) throw error;
    throw localPathError(error, { what: 'the report', path: resolve(path), setting: '--report', knob: '--report' }, { code: 'report_unwritable' });
  }
}
