import { escapeControls } from '../text/index.js';

/**
 * Inside a Markdown code span: no backticks, no pipes (they end the table cell), no newlines;
 * other control and bidi characters as visible `\uXXXX` (GITHUB_STEP_SUMMARY is read in a browser).
 */
export function mdCode(value: string): string {
  return escapeControls(value.replace(/[`|\r\n]/g, (ch) => (ch === '|' ? '\\|' : ' ')));
}

/** Plain text in Markdown (a cell or a line): HTML and Markdown punctuation escaped, controls as in mdCode. */
export function mdText(value: string): string {
  return escapeControls(value.replace(/[\\`*_{}[\]<>|#\r\n]/g, (ch) => (ch === '\n' || ch === '\r' ? ' ' : `\\${ch}`)));
}
