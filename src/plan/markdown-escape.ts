/** Inside a Markdown code span: no backticks, no pipes (they end the table cell), no newlines. */
export function mdCode(value: string): string {
  return value.replace(/[`|\r\n]/g, (ch) => (ch === '|' ? '\\|' : ' '));
}

/** Plain text in Markdown (a cell or a line): HTML and Markdown punctuation escaped. */
export function mdText(value: string): string {
  return value.replace(/[\\`*_{}[\]<>|#\r\n]/g, (ch) => (ch === '\n' || ch === '\r' ? ' ' : `\\${ch}`));
}
