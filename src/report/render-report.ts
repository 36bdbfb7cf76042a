import type { Report } from './report.js';
import { renderJson } from './render-json.js';
import { renderMarkdown } from './render-markdown.js';
import { renderText } from './render-text.js';

/** What a report is printed as: `--format` (`--json` is json). */
export type ReportFormat = 'text' | 'json' | 'markdown';

export interface RenderOptions {
  /** ANSI colours in text (a terminal, without NO_COLOR). */
  readonly color: boolean;
  /** `--report FILE`: where a cut Markdown summary sends its reader for the rest. */
  readonly reportFile?: string;
}

/** GitHub refuses a comment over 65,536 characters: the Markdown summary stays under it. */
export const markdownMaxChars = 60_000;

/** The report in the format asked for, as the commands print it on stdout. */
export function renderReport(report: Report, format: ReportFormat, options: RenderOptions): string {
  if (format === 'json') return renderJson(report);
  if (format === 'markdown') return renderMarkdown(report, { maxChars: markdownMaxChars, ...(options.reportFile === undefined ? {} : { reportFile: options.reportFile }) });
  return renderText(report, { color: options.color });
}
