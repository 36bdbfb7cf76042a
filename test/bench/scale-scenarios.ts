import { mkdir, readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BenchConfig } from './bench-config.js';
import { amsync, logOf, noopAgain, noopSync, pagesOf, TOKEN, withEmulator, type SyncOutcome } from './bench-runs.js';
import { runNode, type MeasuredCliRun } from './cli-process.js';
import type { EmulatorProcess } from './emulator-process.js';
import { figure, type Figure } from './figures.js';

const bareListing = fileURLToPath(new URL('./bare-listing.mjs', import.meta.url));

const seconds = (ms: number | undefined): string => `${((ms ?? Number.NaN) / 1000).toFixed(2)} s`;
const megabytes = (run: MeasuredCliRun): number => (run.maxRssKb ?? Number.NaN) / 1024;
const count = (n: number): string => n.toLocaleString('en-US');

export interface PlanBesideBare {
  readonly figures: Figure[];
  readonly details: Record<string, unknown>;
}

/**
 * `amsync plan` (the whole command: start, reading and checking the file, listing, planning,
 * printing) on data already seeded and a file already written, beside a bare node:http +
 * JSON.parse listing of the same pages: the CPU ratio is how much amsync costs on top of the
 * floor any client pays.
 */
export async function planBesideBareListing(emu: EmulatorProcess, config: BenchConfig, items: number, dir: string): Promise<PlanBesideBare> {
  const planned = await noopAgain(emu, config, items, dir, { command: 'plan' });
  const bare = await runNode([bareListing, emu.url, TOKEN, String(config.pageSize)], { cwd: dir, env: {} });
  if (bare.code !== 0) throw new Error(`the bare listing exited with ${bare.code}: ${bare.stderr.slice(-1000)}`);
  const listed = JSON.parse(bare.stdout) as { sshUsers: number; apikeys: number; pages: number };
  if (listed.sshUsers !== items || listed.apikeys !== items) throw new Error(`the bare listing saw ${bare.stdout.trim()}, expected ${items} of each`);
  const scenario = '4 footprint';
  const n = count(items);
  const ratio = (planned.run.cpuMs ?? Number.NaN) / (bare.cpuMs ?? Number.NaN);
  return {
    figures: [
      figure({
        id: 'footprint.planPeakRssMb',
        scenario,
        label: `peak RSS, \`amsync plan\`, ${n} users + ${n} keys`,
        value: megabytes(planned.run),
        unit: 'MB',
        decimals: 0,
        target: { op: '<=', value: 256 },
        note: `node's default heap sizing on this host; wall ${seconds(planned.run.wallMs)}, CPU ${seconds(planned.run.cpuMs)}`,
      }),
      figure({
        id: 'footprint.planCpuPerBareListing',
        scenario,
        label: `\`amsync plan\` CPU ÷ bare listing CPU (${seconds(planned.run.cpuMs)} ÷ ${seconds(bare.cpuMs)})`,
        value: ratio,
        unit: '×',
        decimals: 2,
        target: { op: '<=', value: 1.5 },
        note: `the same ${count(listed.pages)} pages (size ${config.pageSize}) listed by test/bench/bare-listing.mjs: node:http, one keep-alive agent, JSON.parse, nothing else (its peak RSS ${megabytes(bare).toFixed(0)} MB); amsync's figure is the whole command, file and plan included`,
      }),
    ],
    details: {
      plan: { wallMs: planned.run.wallMs, cpuMs: planned.run.cpuMs, maxRssKb: planned.run.maxRssKb, stats: planned.stats },
      bare: { wallMs: bare.wallMs, cpuMs: bare.cpuMs, maxRssKb: bare.maxRssKb, pages: listed.pages },
    },
  };
}

/** Scenario 8: a server whose largest page is `largePageMax`, listed with the client's own page size. */
export async function largePages(config: BenchConfig, workDir: string, figures: Figure[], details: Record<string, unknown>): Promise<void> {
  const items = config.largePageItems;
  const max = config.largePageMax;
  const scenario = `8 server page max ${count(max)}`;
  logOf(config)(`${scenario}: no-op sync of ${items} users and ${items} keys without --page-size, L = ${config.latencyMs} ms`);
  const outcome = await withEmulator(config, { latencyMs: config.latencyMs, pageSizeMax: max }, (emu) => noopSync(emu, config, items, join(workDir, 'pages'), { pageSize: null }));
  const { stats, run } = outcome;
  const floor = 2 * pagesOf(items, max);
  const listCalls = stats.listCalls.sshUsers + stats.listCalls.apikeys;
  figures.push(
    figure({
      id: 'largePages.listCallsPerFloor',
      scenario,
      label: `list round trips ÷ ceil(N / server max), both kinds (${listCalls} / ${floor})`,
      value: listCalls / floor,
      decimals: 2,
      target: { op: '=', value: 1 },
      note: `page sizes asked: ${stats.pageSizes.join(', ')}; whole sync wall ${seconds(run.wallMs)}, listing ${seconds(stats.listSpanMs)}`,
    }),
  );
  details.largePages = { items, pageSizeMax: max, wallMs: run.wallMs, cpuMs: run.cpuMs, stats };
}

/**
 * Scenario 9: a no-op sync with `tokensDir` (every declared key's token file already current)
 * beside the same sync without it. A first run writes the files and warms the emulator.
 */
export async function tokensDirScenario(config: BenchConfig, workDir: string, figures: Figure[], details: Record<string, unknown>): Promise<void> {
  const items = config.tokensItems;
  const scenario = '9 tokensDir';
  const dir = join(workDir, 'tokens');
  const tokensArgs = ['--tokens-dir', 'tokens'];
  // The quadratic matching this scenario was made for took minutes at 100k: let it finish, to be measured.
  const timeoutMs = 1_800_000;
  logOf(config)(`${scenario}: no-op sync of ${items} users and ${items} keys with and without --tokens-dir, L = ${config.latencyMs} ms`);
  const [first, without, withTokens] = await withEmulator(config, { latencyMs: config.latencyMs }, async (emu) => {
    const writing = await noopSync(emu, config, items, dir, { args: tokensArgs, timeoutMs });
    const plain = await noopAgain(emu, config, items, dir);
    return [writing, plain, await noopAgain(emu, config, items, dir, { args: tokensArgs, timeoutMs })] as const;
  });
  // The token files, not the sink's index of them (.amsync~index).
  const files = (await readdir(join(dir, 'tokens'))).filter((name) => !name.startsWith('.')).length;
  if (files !== items) throw new Error(`expected ${items} token files, found ${files}`);
  const cpu = (o: SyncOutcome) => o.run.cpuMs ?? Number.NaN;
  figures.push(
    figure({
      id: 'tokensDir.cpuRatio',
      scenario,
      label: `no-op CPU with ÷ without tokensDir, ${count(items)} keys (${seconds(cpu(withTokens))} ÷ ${seconds(cpu(without))})`,
      value: cpu(withTokens) / cpu(without),
      unit: '×',
      decimals: 2,
      target: { op: '<=', value: 1.2 },
      note: `every token file already current; the first run, which wrote the ${count(files)} files, took CPU ${seconds(cpu(first))}, wall ${seconds(first.run.wallMs)}`,
    }),
    figure({
      id: 'tokensDir.wallRatio',
      scenario,
      label: `no-op wall time with ÷ without tokensDir (${seconds(withTokens.run.wallMs)} ÷ ${seconds(without.run.wallMs)})`,
      value: withTokens.run.wallMs / without.run.wallMs,
      unit: '×',
      decimals: 2,
      target: { op: '<=', value: 1.2 },
    }),
  );
  details.tokensDir = {
    items,
    first: { wallMs: first.run.wallMs, cpuMs: first.run.cpuMs },
    without: { wallMs: without.run.wallMs, cpuMs: without.run.cpuMs, maxRssKb: without.run.maxRssKb },
    with: { wallMs: withTokens.run.wallMs, cpuMs: withTokens.run.cpuMs, maxRssKb: withTokens.run.maxRssKb },
  };
}

/** Scenario 11: `amsync export -o FILE` of `exportItems` users and as many keys. */
export async function exportScenario(config: BenchConfig, workDir: string, figures: Figure[], details: Record<string, unknown>): Promise<void> {
  const items = config.exportItems;
  const pageSize = config.largePageMax;
  const scenario = `11 export ${count(2 * items)} items`;
  const dir = join(workDir, 'export');
  logOf(config)(`${scenario}: ${items} users and ${items} keys, page size ${pageSize}, L = ${config.latencyMs} ms`);
  const run = await withEmulator(config, { latencyMs: config.latencyMs, pageSizeMax: pageSize }, async (emu) => {
    await emu.reset();
    await emu.seed({ sshUsers: items, apikeys: items });
    await mkdir(dir, { recursive: true });
    return amsync(emu, config, dir, ['export', '-o', 'export.yaml', '--page-size', String(pageSize)], [], 1_800_000);
  });
  const written = run.code === 0 ? await exportedItems(join(dir, 'export.yaml')) : { items: 0, bytes: 0 };
  figures.push(
    figure({
      id: 'export.itemsWritten',
      scenario,
      label: `items in the exported file ÷ items on the service (${count(written.items)} ÷ ${count(2 * items)})`,
      value: written.items / (2 * items),
      decimals: 3,
      target: { op: '=', value: 1 },
      note:
        run.code === 0
          ? `${(written.bytes / 1024 / 1024).toFixed(1)} MB written; wall ${seconds(run.wallMs)}, CPU ${seconds(run.cpuMs)}, peak RSS ${megabytes(run).toFixed(0)} MB`
          : `amsync export exited with ${run.code}: ${lastLine(run.stderr)}`,
    }),
  );
  details.export = { itemsPerKind: items, code: run.code, wallMs: run.wallMs, cpuMs: run.cpuMs, maxRssKb: run.maxRssKb, written };
}

async function exportedItems(path: string): Promise<{ items: number; bytes: number }> {
  const text = await readFile(path, 'utf8');
  const items = text.match(/^ {2}- (?:username|name): /gm)?.length ?? 0;
  return { items, bytes: (await stat(path)).size };
}

const lastLine = (text: string): string => text.trim().split('\n').pop()?.slice(0, 300) ?? '';
