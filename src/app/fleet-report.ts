import {
  fleetSummaryLine,
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
  // The sections streamed already: the summary line is what is left.
  return fleetSummaryLine(summarizeFleet(outcomes));
}

/** GITHUB_STEP_SUMMARY and `--report FILE`, as for a single service. */
export async function publishFleetReport(outcomes: readonly TargetOutcome[], context: FleetReportContext, env: Env, reportFile: string | undefined): Promise<void> {
  await appendStepSummary(env, renderFleetMarkdown(outcomes, context, { maxChars: markdownMaxChars, ...(reportFile === undefined ? {} : { reportFile }) }));
  if (reportFile === undefined) return;
  const { formatVersion, ...rest } = toFleetJsonDocument(outcomes, context);
  await writeReportFile(reportFile, { formatVersion, timestamp: new Date().toISOString(), ...rest });
}
