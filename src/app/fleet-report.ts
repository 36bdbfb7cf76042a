import { InterruptedError } from '../errors.js';
import {
  fleetExitCode,
  fleetSummaryLine,
  notStartedTargetsLine,
  renderFleetJson,
  renderFleetMarkdown,
  summarizeFleet,
  toFleetJsonDocument,
  type FleetReportContext,
  type TargetOutcome,
} from '../fleet/index.js';
import { interruptedSummary, markdownMaxChars, type ReportFormat, type StopReceived } from '../report/index.js';
import { appendStepSummary, writeReportFile } from './publish-report.js';

type Env = Readonly<Record<string, string | undefined>>;

/** What a fleet run prints on stdout when every target is done. */
export function renderFleetReport(outcomes: readonly TargetOutcome[], context: FleetReportContext, format: ReportFormat, options: { color: boolean; reportFile?: string | undefined }): string {
  if (format === 'json') return renderFleetJson(outcomes, context);
  if (format === 'markdown') return renderFleetMarkdown(outcomes, context, { maxChars: markdownMaxChars, ...(options.reportFile === undefined ? {} : { reportFile: options.reportFile }) });
  // The sections streamed already: the targets an interrupt kept from starting, counted, and the summary line are what is left.
  return `${notStartedTargetsLine(outcomes)}${fleetSummaryLine(summarizeFleet(outcomes))}`;
}

/** GITHUB_STEP_SUMMARY and `--report FILE`, as for a single service. */
export async function publishFleetReport(outcomes: readonly TargetOutcome[], context: FleetReportContext, env: Env, reportFile: string | undefined): Promise<void> {
  await appendStepSummary(env, renderFleetMarkdown(outcomes, context, { maxChars: markdownMaxChars, ...(reportFile === undefined ? {} : { reportFile }) }));
  if (reportFile === undefined) return;
  const { formatVersion, ...rest } = toFleetJsonDocument(outcomes, context);
  await writeReportFile(reportFile, { formatVersion, timestamp: new Date().toISOString(), ...rest });
}

/** "error: of 5 targets, 1 failed (sp-2), 2 refused (…): see each target's section above", or nothing when none failed or was refused. */
export function fleetFailureLine(outcomes: readonly TargetOutcome[]): string {
  const summary = summarizeFleet(outcomes);
  const names = (status: TargetOutcome['status']) => outcomes.filter((o) => o.status === status).map((o) => o.name);
  const listed = (list: string[]) => (list.length > 10 ? `${list.slice(0, 10).join(', ')}, … ${list.length - 10} more` : list.join(', '));
  const parts = [summary.failed > 0 ? `${summary.failed} failed (${listed(names('failed'))})` : '', summary.refused > 0 ? `${summary.refused} refused (${listed(names('refused'))})` : ''].filter(Boolean);
  return parts.length > 0 ? `error: of ${summary.targets} targets, ${parts.join(', ')}: see each target's section above\n` : '';
}

/**
 * The fleet's exit code (1 if any target failed, else 3 if any was refused, else 2 for pending
 * changes with --detailed-exitcode), with one stderr line naming the targets that failed or
 * were refused. An interrupt wins: 130 / 143, as for a single service.
 */
export function fleetRunEnd(outcomes: readonly TargetOutcome[], options: { dryRun: boolean; detailedExitcode?: boolean }, interrupts: StopReceived | undefined): { code: number; stderr: string } {
  if (interrupts?.received) throw new InterruptedError(interrupts.received, fleetInterrupted(outcomes, interrupts));
  return { code: fleetExitCode(summarizeFleet(outcomes), options), stderr: fleetFailureLine(outcomes) };
}

/** The single service's counts over every target's results, and the targets the interrupt kept from starting. */
function fleetInterrupted(outcomes: readonly TargetOutcome[], interrupts: StopReceived): string {
  const results = outcomes.flatMap((o) => o.results ?? []);
  const unstarted = outcomes.filter((o) => o.status === 'skipped' && o.error?.code === 'interrupted').length;
  return `${interruptedSummary(interrupts, results)}${unstarted > 0 ? `; ${unstarted} target${unstarted === 1 ? ' was' : 's were'} not started` : ''}`;
}
