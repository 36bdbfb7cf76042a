import { spawnSync } from 'node:child_process';
import type { Family } from './daemon-prom-parse.js';

/**
 * The naming rules `promtool check metrics` enforces (client_golang's promlint), for machines
 * without promtool. Each problem reads as promtool prints it: `<metric> <problem>`, so a test
 * can compare the two where promtool is installed.
 */

// Units promlint knows, mapped to their base unit; a prefixed one (milliseconds) is not base.
const units: Readonly<Record<string, string>> = {
  amperes: 'amperes', bytes: 'bytes', celsius: 'celsius', grams: 'grams', joules: 'joules', kelvin: 'kelvin',
  meters: 'meters', metres: 'metres', seconds: 'seconds', volts: 'volts',
  minutes: 'seconds', hours: 'seconds', days: 'seconds', weeks: 'seconds',
  kelvins: 'kelvin', fahrenheit: 'celsius', rankine: 'celsius',
  inches: 'meters', yards: 'meters', miles: 'meters', bits: 'bytes', calories: 'joules', pounds: 'grams', ounces: 'grams',
};
const unitPrefixes = ['pico', 'nano', 'micro', 'milli', 'centi', 'deci', 'deca', 'hecto', 'kilo', 'kibi', 'mega', 'mibi', 'giga', 'gibi', 'tera', 'tebi', 'peta', 'pebi'];
const unitAbbreviations = ['s', 'ms', 'us', 'ns', 'sec', 'b', 'kb', 'mb', 'gb', 'tb', 'pb', 'm', 'h', 'd'];
const typeNames = ['counter', 'gauge', 'summary', 'histogram', 'gauge_histogram'];
const camelCase = /[a-z][A-Z]/;

/** `name problem` lines, in promtool's words; empty when the families follow the conventions. */
export function lintFamilies(families: Iterable<Family>): string[] {
  const problems: string[] = [];
  for (const f of families) for (const problem of lintFamily(f)) problems.push(`${f.name} ${problem}`);
  return problems;
}

function lintFamily(f: Family): string[] {
  const name = f.name;
  const lower = name.toLowerCase();
  const labels = new Set(f.samples.flatMap((s) => Object.keys(s.labels)));
  const out: string[] = [];
  if (f.help === undefined) out.push('no help text');
  const unit = unitIn(name);
  if (unit !== undefined && unit.unit !== unit.base) out.push(`use base unit "${unit.base}" instead of "${unit.unit}"`);
  const total = name.endsWith('_total');
  if (f.type === 'counter' && !total) out.push('counter metrics should have "_total" suffix');
  if (f.type !== 'counter' && f.type !== 'untyped' && total) out.push('non-counter metrics should not have "_total" suffix');
  if (f.type !== 'untyped') {
    const histogram = f.type === 'histogram';
    const summary = f.type === 'summary';
    if (!histogram && name.endsWith('_bucket')) out.push('non-histogram metrics should not have "_bucket" suffix');
    if (!histogram && !summary && name.endsWith('_count')) out.push('non-histogram and non-summary metrics should not have "_count" suffix');
    if (!histogram && !summary && name.endsWith('_sum')) out.push('non-histogram and non-summary metrics should not have "_sum" suffix');
    if (!histogram && labels.has('le')) out.push('non-histogram metrics should not have "le" label');
    if (!summary && labels.has('quantile')) out.push('non-summary metrics should not have "quantile" label');
  }
  for (const t of typeNames) if (lower.includes(`_${t}_`) || lower.endsWith(`_${t}`)) out.push(`metric name should not include type '${t}'`);
  if (name.includes(':')) out.push("metric names should not contain ':'");
  if (camelCase.test(name)) out.push("metric names should be written in 'snake_case' not 'camelCase'");
  if ([...labels].some((l) => camelCase.test(l))) out.push("label names should be written in 'snake_case' not 'camelCase'");
  for (const a of unitAbbreviations) if (lower.includes(`_${a}_`) || lower.endsWith(`_${a}`)) out.push('metric names should not contain abbreviated units');
  return out;
}

function unitIn(name: string): { unit: string; base: string } | undefined {
  for (const segment of name.split('_')) {
    const base = units[segment];
    if (base !== undefined) return { unit: segment, base };
    for (const prefix of unitPrefixes) {
      const rest = units[segment.slice(prefix.length)];
      if (segment.startsWith(prefix) && rest !== undefined) return { unit: segment, base: rest };
    }
  }
  return undefined;
}

export interface PromtoolRun {
  readonly status: number | null;
  /** promtool's problem lines, trimmed. */
  readonly problems: string[];
}

/** Whether `promtool` is on PATH (Debian's `prometheus` package installs it). */
export function promtoolAvailable(): boolean {
  return spawnSync('promtool', ['--version'], { stdio: 'ignore' }).status === 0;
}

/** `promtool ARGS` with `input` on stdin. */
export function promtool(args: readonly string[], input = ''): PromtoolRun {
  const run = spawnSync('promtool', args, { input, encoding: 'utf8', timeout: 60_000 });
  const problems = `${run.stdout}${run.stderr}`
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  return { status: run.status, problems };
}
