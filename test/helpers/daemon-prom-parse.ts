/**
 * A strict parser of the Prometheus text exposition format 0.0.4, for tests: it rejects what
 * Prometheus would reject (bad names, bad escapes, samples before their TYPE, a family split
 * in two, duplicate series) and checks histograms (cumulative buckets, `+Inf` = `_count`).
 */

export type MetricType = 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';

export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export interface Family {
  readonly name: string;
  type: MetricType;
  help: string | undefined;
  readonly samples: Sample[];
}

export interface Exposition {
  readonly families: ReadonlyMap<string, Family>;
  /** The value of one series; undefined when absent. Labels must match exactly. */
  value(name: string, labels?: Record<string, string>): number | undefined;
  /** Every sample of every family. */
  samples(): Sample[];
}

const metricName = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const labelName = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const types = new Set<MetricType>(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

export class ExpositionError extends Error {
  constructor(line: number, message: string) {
    super(`line ${line}: ${message}`);
    this.name = 'ExpositionError';
  }
}

export function parseExposition(text: string): Exposition {
  const families = new Map<string, Family>();
  const closed = new Set<string>();
  const seen = new Set<string>();
  let current: string | undefined;
  if (text.length > 0 && !text.endsWith('\n')) throw new ExpositionError(0, 'the text must end with a newline');
  const lines = text.split('\n');
  lines.pop();

  const family = (name: string, n: number): Family => {
    let f = families.get(name);
    if (!f) {
      f = { name, type: 'untyped', help: undefined, samples: [] };
      families.set(name, f);
    }
    if (current !== name) {
      if (closed.has(name)) throw new ExpositionError(n, `metric family ${name} appears in two places`);
      if (current !== undefined) closed.add(current);
      current = name;
    }
    return f;
  };

  lines.forEach((raw, index) => {
    const n = index + 1;
    const line = raw;
    if (line.trim() === '') return;
    if (line.startsWith('#')) {
      const m = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
      if (!m) return; // an ordinary comment
      const [, keyword, name, rest] = m as unknown as [string, string, string, string];
      if (!metricName.test(name)) throw new ExpositionError(n, `bad metric name ${name}`);
      const f = family(name, n);
      if (keyword === 'HELP') {
        if (f.help !== undefined) throw new ExpositionError(n, `second HELP for ${name}`);
        f.help = unescapeHelp(rest, n);
      } else {
        if (f.samples.length > 0) throw new ExpositionError(n, `TYPE of ${name} after its samples`);
        if (!types.has(rest as MetricType)) throw new ExpositionError(n, `unknown type ${rest}`);
        f.type = rest as MetricType;
      }
      return;
    }
    const sample = parseSample(line, n);
    const owner = familyOf(sample.name, families);
    const f = family(owner, n);
    const key = `${sample.name}{${Object.entries(sample.labels).sort().map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(',')}}`;
    if (seen.has(key)) throw new ExpositionError(n, `duplicate series ${key}`);
    seen.add(key);
    if (f.type === 'counter' && !(sample.value >= 0)) throw new ExpositionError(n, `counter ${sample.name} is negative or NaN`);
    f.samples.push(sample);
  });

  for (const f of families.values()) if (f.type === 'histogram') checkHistogram(f);

  return {
    families,
    value(name, labels = {}) {
      const want = JSON.stringify(Object.entries(labels).sort());
      for (const f of families.values()) {
        for (const s of f.samples) if (s.name === name && JSON.stringify(Object.entries(s.labels).sort()) === want) return s.value;
      }
      return undefined;
    },
    samples: () => [...families.values()].flatMap((f) => f.samples),
  };
}

/** `x_bucket`, `x_sum`, `x_count` belong to histogram or summary `x` when it was declared. */
function familyOf(sampleName: string, families: ReadonlyMap<string, Family>): string {
  for (const suffix of ['_bucket', '_sum', '_count']) {
    if (sampleName.endsWith(suffix)) {
      const base = sampleName.slice(0, -suffix.length);
      const f = families.get(base);
      if (f && (f.type === 'histogram' || (f.type === 'summary' && suffix !== '_bucket'))) return base;
    }
  }
  return sampleName;
}

function parseSample(line: string, n: number): Sample {
  let i = 0;
  const nameMatch = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line);
  if (!nameMatch) throw new ExpositionError(n, `bad sample line: ${line}`);
  const name = nameMatch[0];
  i = name.length;
  const labels: Record<string, string> = {};
  if (line[i] === '{') {
    i += 1;
    for (;;) {
      if (line[i] === '}') {
        i += 1;
        break;
      }
      const ln = /^[a-zA-Z_][a-zA-Z0-9_]*/.exec(line.slice(i));
      if (!ln) throw new ExpositionError(n, `bad label name at column ${i + 1}`);
      const label = ln[0];
      if (!labelName.test(label) || label.startsWith('__')) throw new ExpositionError(n, `reserved or bad label name ${label}`);
      if (label in labels) throw new ExpositionError(n, `label ${label} twice`);
      i += label.length;
      if (line.slice(i, i + 2) !== '="') throw new ExpositionError(n, `expected =" after ${label}`);
      i += 2;
      let value = '';
      for (;;) {
        const c = line[i];
        if (c === undefined) throw new ExpositionError(n, 'unterminated label value');
        if (c === '"') {
          i += 1;
          break;
        }
        if (c === '\\') {
          const e = line[i + 1];
          if (e === '\\') value += '\\';
          else if (e === '"') value += '"';
          else if (e === 'n') value += '\n';
          else throw new ExpositionError(n, `bad escape \\${e ?? ''}`);
          i += 2;
          continue;
        }
        value += c;
        i += 1;
      }
      labels[label] = value;
      if (line[i] === ',') i += 1;
      else if (line[i] !== '}') throw new ExpositionError(n, `expected , or } at column ${i + 1}`);
    }
  }
  if (line[i] !== ' ') throw new ExpositionError(n, `expected a space before the value: ${line}`);
  const parts = line.slice(i + 1).split(' ');
  if (parts.length < 1 || parts.length > 2) throw new ExpositionError(n, `expected a value and an optional timestamp: ${line}`);
  const value = parseValue(parts[0] ?? '', n);
  if (parts[1] !== undefined && !/^-?\d+$/.test(parts[1])) throw new ExpositionError(n, `bad timestamp ${parts[1]}`);
  return { name, labels, value };
}

function parseValue(text: string, n: number): number {
  // Prometheus parses values with Go's strconv.ParseFloat, which takes NaN and Inf in any case.
  if (/^nan$/i.test(text)) return Number.NaN;
  if (/^\+?inf(inity)?$/i.test(text)) return Number.POSITIVE_INFINITY;
  if (/^-inf(inity)?$/i.test(text)) return Number.NEGATIVE_INFINITY;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) throw new ExpositionError(n, `bad value ${text}`);
  return Number(text);
}

function unescapeHelp(text: string, n: number): string {
  return text.replace(/\\(.?)/g, (_m, e: string) => {
    if (e === '\\') return '\\';
    if (e === 'n') return '\n';
    throw new ExpositionError(n, `bad escape in HELP: \\${e}`);
  });
}

function checkHistogram(f: Family): void {
  const groups = new Map<string, { buckets: { le: number; value: number }[]; count?: number; sum?: number }>();
  for (const s of f.samples) {
    const { le, ...rest } = s.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    const g = groups.get(key) ?? { buckets: [] };
    groups.set(key, g);
    if (s.name === `${f.name}_bucket`) {
      if (le === undefined) throw new ExpositionError(0, `${s.name} without le`);
      g.buckets.push({ le: parseValue(le, 0), value: s.value });
    } else if (s.name === `${f.name}_count`) g.count = s.value;
    else if (s.name === `${f.name}_sum`) g.sum = s.value;
    else throw new ExpositionError(0, `histogram ${f.name} has a stray sample ${s.name}`);
  }
  for (const [key, g] of groups) {
    const sorted = [...g.buckets].sort((a, b) => a.le - b.le);
    const inf = sorted.at(-1);
    if (!inf || inf.le !== Number.POSITIVE_INFINITY) throw new ExpositionError(0, `histogram ${f.name}${key} has no +Inf bucket`);
    for (let i = 1; i < sorted.length; i += 1) {
      if (sorted[i]!.value < sorted[i - 1]!.value) throw new ExpositionError(0, `histogram ${f.name}${key} buckets are not cumulative`);
    }
    if (g.count === undefined || g.sum === undefined) throw new ExpositionError(0, `histogram ${f.name}${key} lacks _count or _sum`);
    if (g.count !== inf.value) throw new ExpositionError(0, `histogram ${f.name}${key}: _count ${g.count} != +Inf bucket ${inf.value}`);
  }
}
