import type { Report } from '../report/index.js';
import { renderJson, renderMarkdown, renderText } from '../report/index.js';
import type { OutputFormat } from './shared-options.js';

export interface RenderOptions {
  /** ANSI colours in text (see useColor). */
  readonly color: boolean;
  /** `--report FILE`: where a cut Markdown summary sends its reader for the rest. */
  readonly reportFile?: string;
}

/** GitHub refuses a comment over 65,536 characters: the Markdown summary stays under it. */
export const markdownMaxChars = 60_000;

export function renderReport(report: Report, format: OutputFormat, options: RenderOptions): string {
  if (format === 'json') return renderJson(report);
  if (format === 'markdown') return renderMarkdown(report, { maxChars: markdownMaxChars, ...(options.reportFile === undefined ? {} : { reportFile: options.reportFile }) });
  return renderText(report, { color: options.color });
}
