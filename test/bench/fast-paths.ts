/**
 * The four hand-written fast paths beside the libraries they shadow, each measured on the case
 * it exists for, the fast path and the library alternately (a busy spell of the shared machine
 * hits both): median and range of the runs. docs/performance.md ("Fast paths") has the figures.
 *
 *   npx vite-node test/bench/fast-paths.ts [yaml] [glob] [quick-check] [guard] [--runs N] [--items N]
 *
 * With no name, all four. In-process figures are CPU (process.cpuUsage) per call after one
 * warm-up call; "held" is the heap the result keeps alive (after a full GC, when node runs with
 * --expose-gc, e.g. NODE_OPTIONS=--expose-gc). "Cold" figures are the first call in a fresh
 * process (this script run again as a child), module loading included.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import picomatch from 'picomatch';
import * as z from 'zod';
import { apikeyPageSchema, apikeySchema, pageCursorSchema, sshUserPageSchema, sshUserSchema } from '../../src/api/schemas.js';
import { desiredFileSchema } from '../../src/desired/desired-schema.js';
import { quickCheckDesired } from '../../src/desired/quick-check.js';
import { compileGlob, globOptions } from '../../src/glob/glob-matcher.js';
import { compileNamePattern } from '../../src/glob/name-pattern.js';
import { readPlainYaml } from '../../src/yaml/plain-yaml.js';
import { readYaml } from '../../src/yaml/yaml-source.js';
import { median } from './alternate.js';

const gc = (globalThis as { gc?: () => void }).gc;

function cpuMs(fn: () => unknown): { ms: number; result: unknown } {
  const start = process.cpuUsage();
  const result = fn();
  const used = process.cpuUsage(start);
  return { ms: (used.user + used.system) / 1000, result };
}

/** Heap the value returned by `fn` keeps alive, in MB (NaN without --expose-gc). */
function heldMb(fn: () => unknown): number {
  if (gc === undefined) return Number.NaN;
  gc();
  const before = process.memoryUsage().heapUsed;
  const kept = fn();
  gc();
  const after = process.memoryUsage().heapUsed;
  void kept;
  return (after - before) / 1024 / 1024;
}

const fmt = (values: readonly number[], digits = 1): string => {
  const m = median(values).toFixed(digits);
  const lo = Math.min(...values).toFixed(digits);
  const hi = Math.max(...values).toFixed(digits);
  return `${m} (${lo}–${hi})`;
};

/** Runs the named functions alternately `runs` times after one warm-up each: CPU ms per run. */
function alternate(runs: number, fns: Record<string, () => unknown>): Record<string, number[]> {
  const out: Record<string, number[]> = {};
  for (const [name, fn] of Object.entries(fns)) {
    fn();
    out[name] = [];
  }
  for (let i = 0; i < runs; i += 1) for (const [name, fn] of Object.entries(fns)) out[name]!.push(cpuMs(fn).ms);
  return out;
}

function report(title: string, rows: Record<string, number[]>, unit = 'ms', digits = 1): void {
  console.log(`  ${title}`);
  for (const [name, values] of Object.entries(rows)) console.log(`    ${name.padEnd(44)} ${fmt(values, digits)} ${unit}`);
}

/** A cold first call measured in a child process: the child prints its figure on stdout. */
function cold(mode: string, runs: number, file = ''): number[] {
  const viteNode = fileURLToPath(new URL('../../node_modules/vite-node/vite-node.mjs', import.meta.url));
  const script = fileURLToPath(import.meta.url);
  const out: number[] = [];
  for (let i = 0; i < runs; i += 1) {
    const child = spawnSync(process.execPath, [viteNode, script, '--child', mode], { encoding: 'utf8', env: { ...process.env, FAST_PATHS_FILE: file } });
    if (child.status !== 0) throw new Error(`child ${mode} exited ${child.status}: ${child.stderr}`);
    const line = child.stdout.trim().split('\n').pop()!;
    out.push(Number(line));
  }
  return out;
}

// ---------------------------------------------------------------- inputs

/** A desired file as people and `amsync export` write it: `items` users and `items` keys. */
export function largeDesired(items: number): string {
  const lines: string[] = ['# generated for the fast-path benchmark', 'sshUsers:'];
  for (let i = 1; i <= items; i += 1) {
    lines.push(`  - username: user-${i}`, `    level: n${(i % 3) + 1}`);
    if (i % 10 === 0) lines.push('    password: { env: DEPLOY_PASSWORD }');
    if (i % 50 === 0) lines.push('    ensure: absent');
  }
  lines.push('apikeys:');
  for (let i = 1; i <= items; i += 1) {
    lines.push(`  - name: key-${i}`);
    if (i % 4 === 0) lines.push(`    roles: [${(i % 7) + 1}, ${(i % 7) + 10}]`);
    if (i % 100 === 0) lines.push('    superuser: true');
  }
  lines.push('prune:', '  sshUsers: true', '  apikeys: false', 'protect:', '  sshUsers: ["root", "admin*"]', '');
  return lines.join('\n');
}

const tenLines = ['sshUsers:', '  - username: deploy', '    level: n1', '  - username: ops', 'apikeys:', '  - name: billing', '    roles: [3, 7]', '  - name: monitor', 'prune:', '  sshUsers: false', ''].join('\n');

function targetsFile(n: number): string {
  const lines = ['targets:'];
  for (let i = 1; i <= n; i += 1) lines.push(`  - name: t${i}`, `    url: https://am-${i}.example.test`, '    credentials: { env: AM_TOKEN }', `    file: desired/t${i}.yaml`);
  return `${lines.join('\n')}\n`;
}

// ---------------------------------------------------------------- yaml

function benchYaml(runs: number, items: number): void {
  const text = largeDesired(items);
  console.log(`plain-yaml beside yaml: a desired file of ${items} users + ${items} keys (${(Buffer.byteLength(text) / 1e6).toFixed(1)} MB)`);
  if (readPlainYaml(text, 'a.yaml') === undefined) throw new Error('the fast reader declined the benchmark file');
  report('CPU per read', alternate(runs, { 'readPlainYaml (fast path)': () => readPlainYaml(text, 'a.yaml'), 'readYaml (yaml: Parser, Composer, toJS)': () => readYaml(text, 'a.yaml') }), 'ms', 0);
  const held = { plain: [] as number[], yaml: [] as number[] };
  for (let i = 0; i < Math.min(runs, 3); i += 1) {
    held.plain.push(heldMb(() => readPlainYaml(text, 'a.yaml')));
    held.yaml.push(heldMb(() => readYaml(text, 'a.yaml')));
  }
  report('heap the result keeps (MB)', { 'readPlainYaml (value + item positions)': held.plain, 'readYaml (value + Document)': held.yaml }, 'MB', 0);
  const file = join(mkdtempSync(join(tmpdir(), 'fast-paths-')), 'large.yaml');
  writeFileSync(file, text);
  const peakRuns = Math.min(runs, 3);
  const peak = { none: cold('peak-none', peakRuns, file), plain: cold('peak-plain', peakRuns, file), yaml: cold('peak-yaml', peakRuns, file) };
  rmSync(dirname(file), { recursive: true, force: true });
  report('peak RSS of a fresh process that reads the file and then (MB)', { 'nothing more (the baseline)': peak.none, 'readPlainYaml': peak.plain, 'readYaml': peak.yaml }, 'MB', 0);

  const targets = targetsFile(500);
  report('a targets file of 500 targets, CPU per read', alternate(runs, { readPlainYaml: () => readPlainYaml(targets, 't.yaml'), readYaml: () => readYaml(targets, 't.yaml') }), 'ms', 2);
  report('a 10-line file, cold (first read in a fresh process, loading yaml included), wall', { readPlainYaml: cold('cold-plain', runs), readYaml: cold('cold-yaml', runs) }, 'ms', 1);

  // What declining costs: the reader throws once to unwind (NotPlain), at the first thing it
  // does not read; a decline at the very end of the large file is the worst case.
  const lateDecline = `${text}anchor: &a [1]\n`;
  const early = 'a: &x [1]\nb: *x\n';
  const decline = alternate(runs, {
    'decline at the last line of the large file': () => readPlainYaml(lateDecline, 'a.yaml'),
    'then readYaml of it (what follows a decline)': () => readYaml(lateDecline, 'a.yaml'),
  });
  report('a decline (NotPlain thrown once) against the full read that follows it', decline, 'ms', 0);
  const n = 10_000;
  const perDecline = alternate(runs, { [`${n} early declines (2-line file)`]: () => { for (let i = 0; i < n; i += 1) readPlainYaml(early, 'a.yaml'); }, [`${n} readYaml of the same`]: () => { for (let i = 0; i < n; i += 1) readYaml(early, 'a.yaml'); } });
  report('early declines', perDecline, 'ms', 1);
}

// ---------------------------------------------------------------- glob

const protectGlobs = ['root', 'admin*', 'svc-*', '*-prod', 'ci-{build,deploy}-*', 'backup-[0-9]*', '!(tmp-*)', '@(ops|sre)-*', '*.bot', 'user-1?'];

function benchGlob(runs: number, items: number): void {
  console.log(`glob/ beside picomatch: ${protectGlobs.length} protect globs`);
  const names = Array.from({ length: items }, (_, i) => (i % 5 === 0 ? `svc-worker-${i}` : `user-${i}`));
  const ours = protectGlobs.map(compileGlob);
  const theirs = protectGlobs.map((g) => picomatch(g, globOptions));
  const countOurs = (): number => names.filter((n) => ours.some((m) => m(n))).length;
  const countTheirs = (): number => names.filter((n) => theirs.some((m) => m(n))).length;
  if (countOurs() !== countTheirs()) throw new Error('the matchers disagree on the benchmark names');
  report(`CPU to check ${items} names against all ${protectGlobs.length} globs (the planner's protect check)`, alternate(runs, { 'compileGlob (linear automaton)': countOurs, 'picomatch (V8 regex)': countTheirs }), 'ms', 0);
  report(`CPU to compile the ${protectGlobs.length} globs`, alternate(runs, { compileGlob: () => protectGlobs.map(compileGlob), 'picomatch': () => protectGlobs.map((g) => picomatch(g, globOptions)) }), 'ms', 2);

  // The case it exists for: a name under someone else's control against a glob whose regex
  // backtracks. picomatch makes ^(?:.*?-.*?-.*?-.*?-.*?-.*?-prod)$ of this one.
  const hostile = '*-*-*-*-*-*-prod';
  const slow = picomatch(hostile, globOptions);
  const fast = compileGlob(hostile);
  console.log(`  hostile glob ${hostile} against a name of n dashes (no match), CPU of one call`);
  let last = 0;
  for (const dashes of [10, 20, 30, 40, 50, 60, 70, 80]) {
    const name = '-'.repeat(dashes);
    const t = cpuMs(() => slow(name));
    const f = alternate(Math.min(runs, 3), { f: () => fast(name) }).f!;
    console.log(`    n = ${String(dashes).padEnd(4)} picomatch ${t.ms.toFixed(1).padStart(9)} ms   compileGlob ${fmt(f, 3)} ms`);
    last = t.ms;
    if (t.ms > 5_000) break;
  }
  void last;
  for (const dashes of [200, 400, 10_000]) {
    const name = '-'.repeat(dashes);
    const f = alternate(Math.min(runs, 3), { f: () => fast(name) }).f!;
    console.log(`    n = ${String(dashes).padEnd(6)} compileGlob ${fmt(f, 3)} ms (picomatch not run)`);
  }
  const negated = compileGlob('!(*-*-*-prod)');
  const negatedSlow = picomatch('!(*-*-*-prod)', globOptions);
  for (const dashes of [1_000, 3_000]) {
    const name = '-'.repeat(dashes);
    console.log(`    !(*-*-*-prod), n = ${dashes}: picomatch ${fmt([cpuMs(() => negatedSlow(name)).ms], 1)} ms, compileGlob ${fmt(alternate(Math.min(runs, 3), { f: () => negated(name) }).f!, 2)} ms`);
  }
  const pattern = '(a+)+b';
  const native = new RegExp(`^(?:${pattern})$`);
  const linear = compileNamePattern(pattern);
  console.log(`  policy usernamePattern ${pattern} against a name of n 'a's (no match)`);
  for (const length of [16, 20, 22, 24]) {
    const name = 'a'.repeat(length);
    console.log(`    n = ${String(length).padEnd(4)} V8 RegExp ${cpuMs(() => native.test(name)).ms.toFixed(1).padStart(8)} ms   compileNamePattern ${fmt(alternate(Math.min(runs, 3), { f: () => linear(name) }).f!, 3)} ms`);
  }
}

// ---------------------------------------------------------------- quick-check

function benchQuickCheck(runs: number, items: number): void {
  const read = readPlainYaml(largeDesired(items), 'a.yaml')!;
  const raw = read.value;
  const schema = desiredFileSchema();
  if (quickCheckDesired(raw) === undefined || !schema.safeParse(raw).success) throw new Error('the benchmark file is not plainly right');
  console.log(`desired/quick-check.ts beside zod: ${items} users + ${items} keys, read`);
  report('CPU per check', alternate(runs, { quickCheckDesired: () => quickCheckDesired(raw), 'desiredFileSchema().safeParse (zod)': () => schema.safeParse(raw) }), 'ms', 0);
  report('a 10-line file, cold (first check in a fresh process, schemas built included), wall', { quickCheckDesired: cold('cold-quick', runs), 'zod': cold('cold-zod', runs) }, 'ms', 2);
  // A command checks its file once: the large file's first check in a fresh process.
  const file = join(mkdtempSync(join(tmpdir(), 'fast-paths-')), 'large.yaml');
  writeFileSync(file, largeDesired(items));
  const first = { quick: cold('first-quick', Math.min(runs, 5), file), zod: cold('first-zod', Math.min(runs, 5), file) };
  rmSync(dirname(file), { recursive: true, force: true });
  report('the large file, first check in a fresh process, wall', { quickCheckDesired: first.quick, 'zod': first.zod }, 'ms', 0);
}

// ---------------------------------------------------------------- guard

function benchGuard(runs: number, items: number): void {
  const pages = Math.ceil(items / 100);
  const userPages = Array.from({ length: pages }, (_, p) => JSON.stringify({ cursor: { current: p, next: p + 1 < pages ? p + 1 : null }, users: Array.from({ length: 100 }, (_, i) => ({ id: p * 100 + i + 1, username: `user-${p * 100 + i}`, level: 'n1', created_at: '2026-01-01T00:00:00Z', updated_at: null })) }));
  const keyPages = Array.from({ length: pages }, (_, p) => JSON.stringify({ cursor: { current: p, next: p + 1 < pages ? p + 1 : null }, apikeys: Array.from({ length: 100 }, (_, i) => ({ id: p * 100 + i + 1, name: `key-${p * 100 + i}`, superuser: false, roles: i % 4 === 0 ? [{ id: 1, name: 'r1' }, { id: 3, name: 'r3' }] : [], token: `tok-${i}`, created_at: '2026-01-01T00:00:00Z' })) }));
  // zod alone: the same item schemas (with their conversions) checked per item by z.array.
  const zodUsers = z.object({ cursor: pageCursorSchema, users: z.array(sshUserSchema) });
  const zodKeys = z.object({ cursor: pageCursorSchema, apikeys: z.array(apikeySchema) });
  const parsedUsers = userPages.map((p) => JSON.parse(p) as unknown);
  const parsedKeys = keyPages.map((p) => JSON.parse(p) as unknown);
  const a = sshUserPageSchema.parse(parsedUsers[0]);
  const b = zodUsers.parse(parsedUsers[0]);
  if (JSON.stringify(a.items) !== JSON.stringify(b.users)) throw new Error('the two page checks disagree');
  console.log(`api/schemas.ts hand guard beside zod: ${pages} pages of 100 (${pages * 100} items per kind), already JSON.parsed`);
  const all = (schema: { parse: (v: unknown) => unknown }, list: unknown[]) => () => {
    for (const page of list) schema.parse(page);
  };
  report('users, CPU for all pages', alternate(runs, { 'guard then convert (sshUserPageSchema)': all(sshUserPageSchema, parsedUsers), 'zod alone (z.array(sshUserSchema))': all(zodUsers, parsedUsers) }), 'ms', 1);
  report('apikeys, CPU for all pages', alternate(runs, { 'guard then convert (apikeyPageSchema)': all(apikeyPageSchema, parsedKeys), 'zod alone (z.array(apikeySchema))': all(zodKeys, parsedKeys) }), 'ms', 1);
  report('for scale: JSON.parse of the same key pages', alternate(runs, { 'JSON.parse': () => keyPages.map((p) => JSON.parse(p) as unknown) }), 'ms', 1);
}

// ---------------------------------------------------------------- child modes

function child(mode: string): void {
  const t0 = performance.now();
  switch (mode) {
    case 'cold-plain':
      readPlainYaml(tenLines, 'a.yaml');
      break;
    case 'cold-yaml':
      readYaml(tenLines, 'a.yaml');
      break;
    case 'cold-quick':
      quickCheckDesired(readPlainYaml(tenLines, 'a.yaml')!.value);
      break;
    case 'cold-zod':
      desiredFileSchema().safeParse(readPlainYaml(tenLines, 'a.yaml')!.value);
      break;
    case 'first-quick':
    case 'first-zod': {
      const raw = readPlainYaml(readFileSync(process.env.FAST_PATHS_FILE!, 'utf8'), 'a.yaml')!.value;
      const start = performance.now();
      if (mode === 'first-quick') quickCheckDesired(raw);
      else desiredFileSchema().safeParse(raw);
      console.log((performance.now() - start).toFixed(3));
      return;
    }
    case 'peak-none':
    case 'peak-plain':
    case 'peak-yaml': {
      const text = readFileSync(process.env.FAST_PATHS_FILE!, 'utf8');
      const out = mode === 'peak-plain' ? readPlainYaml(text, 'a.yaml') : mode === 'peak-yaml' ? readYaml(text, 'a.yaml') : text.length;
      void out;
      console.log((process.resourceUsage().maxRSS / 1024).toFixed(1));
      return;
    }
    default:
      throw new Error(`unknown child mode ${mode}`);
  }
  console.log((performance.now() - t0).toFixed(3));
}

function main(): void {
  const args = process.argv.slice(2);
  const childAt = args.indexOf('--child');
  if (childAt !== -1) return child(args[childAt + 1]!);
  const runsAt = args.indexOf('--runs');
  const runs = runsAt === -1 ? 7 : Number(args[runsAt + 1]);
  const itemsAt = args.indexOf('--items');
  const items = itemsAt === -1 ? 100_000 : Number(args[itemsAt + 1]);
  const names = args.filter((a, i) => !a.startsWith('--') && args[i - 1] !== '--runs' && args[i - 1] !== '--items');
  const all: Record<string, () => void> = {
    yaml: () => benchYaml(runs, items),
    glob: () => benchGlob(runs, items),
    'quick-check': () => benchQuickCheck(runs, items),
    guard: () => {
      benchGuard(runs, 10_000);
      if (items > 10_000) benchGuard(runs, items);
    },
  };
  const chosen = names.length === 0 ? Object.keys(all) : names;
  console.log(`fast paths — ${new Date().toISOString()} — Node.js ${process.version}, ${runs} runs, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  for (const name of chosen) {
    const run = all[name];
    if (run === undefined) throw new Error(`unknown fast path ${name}; one of ${Object.keys(all).join(', ')}`);
    run();
  }
}

main();
