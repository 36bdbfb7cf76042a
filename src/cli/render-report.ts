import type { Report } from '../plan/index.js';
import { renderJson, renderMarkdown, renderText } from '../plan/index.js';
import type { OutputFormat } from './shared-options.js';

/** Colour only for a terminal, and never when NO_COLOR is set (https://no-color.org). */
export function useColor(env: Readonly<Record<string, string | undefined>>): boolean {
  return Boolean(process.stdout.isTTY) && !env.NO_COLOR;
}

export function renderReport(report: Report, format: OutputFormat, env: Readonly<Record<string, string | undefined>>): string {
  if (format === 'json') return renderJson(report);
  if (format === 'markdown') return renderMarkdown(report);
  return renderText(report, { color: useColor(env) });
}
