/** A target a figure is held to (DESIGN.md §7 and the issue). */
export interface Target {
  readonly op: '=' | '<=' | '>=';
  readonly value: number;
}

/** One measured figure, as a row of the table and an entry of bench-results.json. */
export interface Figure {
  /** Stable across runs, e.g. `noop.listCallsPerPage.sshUsers`, so runs can be compared. */
  readonly id: string;
  /** `1 no-op sync`, ... */
  readonly scenario: string;
  readonly label: string;
  readonly value: number;
  /** Decimals shown in the table. */
  readonly decimals: number;
  readonly unit?: string;
  /** Absent: reported, not held to a target. */
  readonly target?: Target;
  /** Whether the target holds; absent when there is no target. */
  readonly holds?: boolean;
  readonly note?: string;
}

export function figure(f: Omit<Figure, 'holds'>): Figure {
  if (f.target === undefined) return f;
  return { ...f, holds: meets(f.value, f.target, f.decimals) };
}

/** Compared at the precision shown, so a row never reads `1.00  = 1.00  no`. */
export function meets(value: number, target: Target, decimals: number): boolean {
  const scale = 10 ** decimals;
  const shown = Math.round(value * scale) / scale;
  if (!Number.isFinite(value)) return false;
  switch (target.op) {
    case '=':
      return shown === target.value;
    case '<=':
      return shown <= target.value;
    case '>=':
      return shown >= target.value;
  }
}

export function formatTarget(target: Target | undefined, decimals: number): string {
  if (target === undefined) return '—';
  const op = target.op === '<=' ? '≤' : target.op === '>=' ? '≥' : '=';
  return `${op} ${formatNumber(target.value, decimals)}`;
}

export function formatNumber(value: number, decimals: number): string {
  if (!Number.isFinite(value)) return String(value);
  return value.toLocaleString('en-US', { minimumFractionDigits: decimals, maximumFractionDigits: decimals });
}

/** A Markdown table (also readable on a terminal): scenario, figure, value, target, holds. */
export function renderTable(figures: readonly Figure[]): string {
  const rows = figures.map((f) => [
    f.scenario,
    f.label,
    `${formatNumber(f.value, f.decimals)}${f.unit ? ` ${f.unit}` : ''}`,
    formatTarget(f.target, f.decimals),
    f.holds === undefined ? '—' : f.holds ? 'yes' : '**NO**',
  ]);
  const header = ['scenario', 'figure', 'value', 'target', 'holds'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: readonly string[]) => `| ${cells.map((c, i) => (i === 2 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join(' | ')} |`;
  const rule = `|${widths.map((w, i) => (i === 2 ? `${'-'.repeat(w + 1)}:` : '-'.repeat(w + 2))).join('|')}|`;
  return [line(header), rule, ...rows.map(line)].join('\n');
}

/** Notes of the figures that have one, numbered by row. */
export function renderNotes(figures: readonly Figure[]): string {
  return figures
    .filter((f) => f.note)
    .map((f) => `- ${f.label}: ${f.note}`)
    .join('\n');
}
