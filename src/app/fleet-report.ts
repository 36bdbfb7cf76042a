import {
  fleetSummaryLine,
  notStartedTargetsLine,
  renderFleetJson,
  renderFleetMarkdown,
  summarizeFleet,
  toFleetJsonDocument,
  type FleetReportContext,
  type TargetOutcome,
} from '../fleet/index.js';
import { markdownMaxChars, type ReportFormat } from '../report/index.js';
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
