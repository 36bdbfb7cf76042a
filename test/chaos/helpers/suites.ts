import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { badInputs, CANARY_PASSWORD, CANARY_TOKEN, runBadInput, type BadInput } from './bad-inputs.js';
import { runDaemonSchedule } from './daemon.js';
import { addSchedule, emptyFigures, publishFigures, type Figures } from './figures.js';
import { fuzzEmulator } from './fuzz-run.js';
import { describeOutcome, invariants, replayHint, runCliSchedule, type ScheduleOutcome } from './run.js';
import { faultFamilies, firedAs, makeSchedule, type FaultFamily } from './schedule.js';
import { seedsFor, type ChaosSeedSet } from './seeds.js';
import { assertBuilt } from '../../helpers/spawn.js';

/**
 * The chaos suites, shared by the fast subset (test/chaos, in the slow project) and the full run
 * (test/chaos/full, `npm run chaos`): schedules run first, then one test per invariant checks
 * every schedule, so the report reads like DESIGN.md §8 and names each failing seed with the
 * command that replays it.
 */

declare module 'vitest' {
  export interface ProvidedContext {
    /** Where each file adds its figures; set by the chaos config's global setup. */
    chaosFiguresFile: string;
  }
}

const figuresFile = (): string | undefined => {
  try {
    return inject('chaosFiguresFile');
  } catch {
    return undefined;
  }
};

/** Runs `work` over `items`, `concurrency` at a time. */
async function pool<T, R>(items: readonly T[], concurrency: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < items.length; i = next++) results[i] = await work(items[i]!);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return results;
}

async function guarded(seed: number, daemon: boolean): Promise<ScheduleOutcome> {
  try {
    return await (daemon ? runDaemonSchedule(seed) : runCliSchedule(seed));
  } catch (error) {
    return {
      seed,
      families: makeSchedule(seed).families,
      violations: [{ invariant: invariants.harness, detail: error instanceof Error ? (error.stack ?? error.message) : String(error) }],
      checks: 1,
      runs: [],
      requests: 0,
      fired: {},
      tokenRotated: false,
    };
  }
}

const cliInvariants = [
  invariants.dryRun,
  invariants.planned,
  invariants.deletes,
  invariants.listing,
  invariants.duplicates,
  invariants.converges,
  invariants.finalPlan,
  invariants.success,
  invariants.zeroWrites,
  invariants.exitCodes,
  invariants.tokens,
  invariants.report,
  invariants.protect,
  invariants.canaries,
  invariants.fingerprints,
  invariants.interrupt,
  invariants.fifo,
  invariants.bounded,
  invariants.memory,
  invariants.noWriteAfterInterrupt,
  invariants.oneWriter,
  invariants.appliedReceived,
  invariants.deletedMeansDeleted,
  invariants.keyKept,
  invariants.tokensRenewed,
  invariants.emulator,
  invariants.harness,
];

const daemonInvariants = [
  invariants.dryRun,
  invariants.planned,
  invariants.deletes,
  invariants.listing,
  invariants.duplicates,
  invariants.converges,
  invariants.success,
  invariants.zeroWrites,
  invariants.tokens,
  invariants.protect,
  invariants.daemonStops,
  invariants.exitCodes,
  invariants.fingerprints,
  invariants.interrupt,
  invariants.bounded,
  invariants.memory,
  invariants.canaries,
  invariants.emulator,
  invariants.harness,
];

/**
 * `describe` per invariant over seeded schedules: the CLI (plan, sync under faults, sync until
 * converged) or the daemon (syncing every second under faults, then converging by itself).
 */
export function describeSchedules(
  title: string,
  set: ChaosSeedSet,
  options: { daemon?: boolean; concurrency: number; timeoutMs: number; everyFamilyFires?: boolean | readonly FaultFamily[] },
): void {
  const daemon = options.daemon === true;
  const seeds = seedsFor(set);
  describe(title, () => {
    if (seeds.length === 0) {
      it.skip(`replays CHAOS_SEED=${process.env.CHAOS_SEED} in the file that owns it`, () => undefined);
      return;
    }
    const outcomes: ScheduleOutcome[] = [];
    const figures: Figures = emptyFigures();
    beforeAll(async () => {
      assertBuilt();
      outcomes.push(
        ...(await pool(seeds, options.concurrency, async (seed) => {
          const started = Date.now();
          const o = await guarded(seed, daemon);
          console.info(`${daemon ? 'daemon ' : ''}${describeOutcome(o)} in ${Date.now() - started} ms${o.violations.length > 0 ? ` — ${o.violations.length} violation(s); ${replayHint(seed)}` : ''}`);
          return o;
        })),
      );
      for (const o of outcomes) addSchedule(figures, o, daemon);
    }, options.timeoutMs);
    afterAll(() => publishFigures(figuresFile(), `${title} (${set})`, figures));

    const families = options.everyFamilyFires === true ? faultFamilies : options.everyFamilyFires === false ? undefined : options.everyFamilyFires;
    if (families !== undefined && process.env.CHAOS_SEED === undefined) {
      it('every fault family fires in at least one schedule', () => {
        const fired = new Set(outcomes.flatMap((o) => Object.keys(o.fired)));
        expect(families.filter((f) => !firedAs[f].some((label) => fired.has(label)))).toEqual([]);
      });
    }
    for (const invariant of daemon ? daemonInvariants : cliInvariants) {
      it(invariant, () => {
        const broken = outcomes.filter((o) => o.violations.some((v) => v.invariant === invariant));
        const report = broken.map((o) =>
          [
            `seed ${o.seed} [${o.families.join(', ')}]: ${replayHint(o.seed)}`,
            ...o.violations.filter((v) => v.invariant === invariant || v.invariant === '(kept for inspection)').map((v) => `    ${v.invariant === invariant ? '' : `${v.invariant}: `}${v.detail}`),
          ].join('\n'),
        );
        expect(outcomes.length, 'schedules that ran').toBe(seeds.length);
        expect(report, `${broken.length} of ${outcomes.length} schedules broke "${invariant}"`).toEqual([]);
      });
    }
  });
}

/** Each bad input: its exit code and a clear error, zero requests, and no secret echoed. */
export function describeBadInputs(title: string, cases: readonly BadInput[] = badInputs): void {
  describe(title, () => {
    const figures: Figures = emptyFigures();
    beforeAll(() => assertBuilt());
    afterAll(() => publishFigures(figuresFile(), title, figures));
    const byExpectation = (c: BadInput) => (c.expect === 'keeps running' ? 'the daemon keeps running and waits for a fix' : `exit ${c.expect}`);
    describe.each(['sync', 'plan', 'daemon'] as const)('amsync %s', (command) => {
      const mine = cases.filter((c) => c.command === command);
      it.concurrent.each(mine.map((c) => [c.name, byExpectation(c), c] as const))('%s: %s, with a clear error and zero requests', async (_name, _expected, c) => {
        const o = await runBadInput(c);
        figures.badInputs += 1;
        const output = `${o.stdout}\n${o.stderr}`;
        const got = { result: o.result, requests: o.requests, clearError: c.message.test(o.stderr), echoesASecret: output.includes(CANARY_TOKEN) || output.includes(CANARY_PASSWORD) };
        expect(got, `stderr:\n${o.stderr.slice(-3000)}`).toEqual({ result: c.expect === 'keeps running' ? 'kept running' : c.expect, requests: 0, clearError: true, echoesASecret: false });
      });
    });
  });
}

/** The emulator under seeded fuzz: it never fails inside and answers only the spec's statuses. */
export function describeFuzz(title: string, seeds: readonly number[], requestsPerSeed: number): void {
  describe(title, () => {
    const figures: Figures = emptyFigures();
    afterAll(() => publishFigures(figuresFile(), title, figures));
    it.each(seeds.map((s) => [s]))(`seed %i: ${requestsPerSeed} random requests (methods, paths, queries, headers, bodies) under random faults`, async (seed) => {
      const o = await fuzzEmulator(seed, requestsPerSeed);
      figures.fuzzRequests += o.requests;
      for (const [status, n] of Object.entries(o.statuses)) figures.statuses[status] = (figures.statuses[status] ?? 0) + n;
      expect(o.problems.slice(0, 20), `${o.problems.length} problems; replay with FUZZ seed ${seed}`).toEqual([]);
      expect(o.answered + o.resets).toBe(requestsPerSeed);
    });
  });
}
