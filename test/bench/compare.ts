/**
 * Two runs of the benchmark side by side, as a Markdown table: each figure of either run, its
 * value before and after, and its target (whether the second run holds it).
 *
 *   npx vite-node test/bench/compare.ts BEFORE.json AFTER.json
 */
import { readFileSync } from 'node:fs';
import { formatNumber, formatTarget, type Figure } from './figures.js';

interface Run {
  readonly startedAt: string;
  readonly loadAverage: { readonly before: number; readonly after: number };
  readonly seconds: number;
  readonly figures: readonly Figure[];
}

const [beforeFile, afterFile] = process.argv.slice(2);
if (beforeFile === undefined || afterFile === undefined) throw new Error('Expected two bench-results.json files: BEFORE AFTER');
const read = (file: string): Run => JSON.parse(readFileSync(file, 'utf8')) as Run;
const before = read(beforeFile);
const after = read(afterFile);

const shown = (f: Figure | undefined): string => (f === undefined ? '—' : `${formatNumber(f.value, f.decimals)}${f.unit ? ` ${f.unit}` : ''}`);
const ids = [...new Set([...before.figures.map((f) => f.id), ...after.figures.map((f) => f.id)])];
const rows = ids.map((id) => {
  const b = before.figures.find((f) => f.id === id);
  const a = after.figures.find((f) => f.id === id);
  const f = (a ?? b)!;
  return `| ${f.scenario} | ${(a ?? b)!.label.replace(/\|/g, '\\|')} | ${shown(b)} | ${shown(a)} | ${formatTarget(f.target, f.decimals)} | ${a?.holds === undefined ? '—' : a.holds ? 'yes' : '**no**'} |`;
});
const runLine = (name: string, r: Run) => `- ${name}: ${r.startedAt}, ${r.seconds.toFixed(0)} s, load average ${r.loadAverage.before.toFixed(1)} at the start, ${r.loadAverage.after.toFixed(1)} at the end`;
process.stdout.write(
  [runLine('before', before), runLine('after', after), '', '| scenario | figure (labels of the after run) | before | after | target | holds after |', '|---|---|--:|--:|---|---|', ...rows, ''].join('\n'),
);
