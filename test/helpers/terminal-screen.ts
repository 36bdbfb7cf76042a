/**
 * What a terminal shows after `text` is written to it: enough of VT100 for the sequences
 * log-update writes (erase line, cursor up/down/left, synchronized output), so a test can
 * assert on the screen rather than on escape codes.
 */
export function screen(text: string): string[] {
  const rows: string[] = [''];
  let row = 0;
  let col = 0;
  const put = (ch: string) => {
    const line = rows[row]!.padEnd(col, ' ');
    rows[row] = line.slice(0, col) + ch + line.slice(col + 1);
    col += 1;
  };
  // eslint-disable-next-line no-control-regex
  const tokens = text.match(/\u001b\[[0-9;?]*[A-Za-z]|\r\n|[\s\S]/g) ?? [];
  for (const token of tokens) {
    if (token === '\n' || token === '\r\n') {
      row += 1;
      col = 0;
      while (rows.length <= row) rows.push('');
      continue;
    }
    if (token === '\r') {
      col = 0;
      continue;
    }
    if (!token.startsWith('\u001b[')) {
      put(token);
      continue;
    }
    const n = Number(/\d+/.exec(token)?.[0] ?? '1');
    const op = token.at(-1);
    if (op === 'A') row = Math.max(0, row - n);
    else if (op === 'B') {
      row += n;
      while (rows.length <= row) rows.push('');
    } else if (op === 'G') col = 0;
    else if (op === 'K') rows[row] = token === '\u001b[2K' ? '' : rows[row]!.slice(0, col);
  }
  return rows.map((r) => r.trimEnd());
}

/** The last line of the screen that shows anything. */
export function lastScreenLine(text: string): string {
  return screen(text).filter((l) => l !== '').at(-1) ?? '';
}
