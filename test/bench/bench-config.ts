/** One server of the rate scenarios: its limit R (a one-second token bucket) and mean latency L. */
export interface RateCase {
  readonly rate: number;
  readonly latencyMs: number;
}

/** One case of scenario 13, polite discovery (discovery-scenario.ts). */
export interface DiscoveryCase extends RateCase {
  /** `creates`: `creates` creates on an empty service; `apply`: scenario 7's apply. */
  readonly run: 'creates' | 'apply';
  readonly retryAfter: boolean;
  /** Target on the 503s of the first discovery; none when undefined. */
  readonly firstTarget?: number;
}

/** Scenario 13's runs. */
export interface DiscoverySize {
  readonly creates: number;
  readonly cases: readonly DiscoveryCase[];
}

/** R = 50 at ~0 ms, 1,200 creates; R = 200 at R·L 10 and 20, scenario 7's apply; each with and without Retry-After (issue 32). */
export const fullDiscoverySize: DiscoverySize = {
  creates: 1_200,
  cases: [
    { rate: 50, latencyMs: 0, run: 'creates', retryAfter: true, firstTarget: 2 },
    { rate: 50, latencyMs: 0, run: 'creates', retryAfter: false, firstTarget: 2 },
    { rate: 200, latencyMs: 50, run: 'apply', retryAfter: true },
    { rate: 200, latencyMs: 100, run: 'apply', retryAfter: true },
    { rate: 200, latencyMs: 50, run: 'apply', retryAfter: false },
    { rate: 200, latencyMs: 100, run: 'apply', retryAfter: false },
  ],
};

/** `noop` includes the contrast; see run.ts for what each runs. */
export const scenarioNames = ['noop', 'apply', 'footprint', 'rates', 'pages', 'tokens', 'cold', 'export', 'fleet', 'discovery'] as const;
export type ScenarioName = (typeof scenarioNames)[number];

export interface BenchConfig {
  /** Users and keys each, for scenarios 1, 2, 3 and 5. */
  readonly items: number;
  readonly pageSize: number;
  /** Server rate limit R of scenarios 2 and 3; undefined: none (the small version). */
  readonly serverRate: number | undefined;
  /** `--rate` of scenario 2: R when R is known. */
  readonly clientRate: number;
  /** Mean server latency L of every scenario. */
  readonly latencyMs: number;
  /** Changes applied in scenarios 2 and 3. */
  readonly changes: number;
  /** `--concurrency` of scenarios 2 and 3; undefined: the client's default. */
  readonly applyConcurrency: number | undefined;
  /** Users and keys each in the footprint scenario (peak RSS of a whole no-op sync). */
  readonly footprintItems: number;
  /** Desired and actual items each, per kind, of the in-process plan() measurement. */
  readonly planItems: number;
  /** Requests in flight of the per-item refresh (terraform's -parallelism). */
  readonly refreshParallelism: number;
  /** Servers of scenario 6: writes with `--rate R` at a high R·L. */
  readonly configuredRateCases: readonly RateCase[];
  /** Servers of scenario 7: writes against a hidden limit R with a one-second burst, no `--rate`. */
  readonly discoveredRateCases: readonly RateCase[];
  /** Users and keys each, and changes, of scenarios 6 and 7. */
  readonly rateItems: number;
  readonly rateChanges: number;
  /** Users and keys each behind a server whose largest page is `largePageMax` (scenario 8). */
  readonly largePageItems: number;
  readonly largePageMax: number;
  /** Users and keys each of the `tokensDir` no-op (scenario 9). */
  readonly tokensItems: number;
  /** Runs of `amsync validate` and of `node -e 0` each (scenario 10). */
  readonly coldRuns: number;
  /**
   * Alternating pairs behind the CPU ratio of two long runs: `amsync plan` beside the bare
   * listing (scenario 4) and the no-op with and without tokensDir (scenario 9). Medians compared.
   */
  readonly cpuPairs: number;
  /** Users and keys each of the export (scenario 11). */
  readonly exportItems: number;
  /** Scenario 13, polite discovery. @default fullDiscoverySize */
  readonly discovery?: DiscoverySize;
  /** The fleet scenario (12): targets, users and keys each per target, --target-concurrency. @default a small fleet */
  readonly fleet?: FleetBenchSize;
  /** Scenarios to run; all when absent. */
  readonly only?: readonly ScenarioName[];
  /**
   * The emulator in the runner's process rather than a child of its own (the small version:
   * its figures are about the CLI's calls, not the emulator's memory). @default false
   */
  readonly emulatorInProcess?: boolean;
  /** Node flags for every measured amsync process (e.g. `--cpu-prof`, to find a cause). */
  readonly cliNodeFlags?: readonly string[];
  /** Progress lines. */
  readonly log?: (line: string) => void;
}

/** The fleet scenario's size (issue 18). */
export interface FleetBenchSize {
  readonly targets: number;
  /** Users and keys each per target. */
  readonly items: number;
  readonly concurrency: number;
  /** Fleet sizes of the growth figures (a no-op plan of the first N targets each); none: not measured. */
  readonly growth?: readonly number[];
}

/**
 * 500 targets × 200 items at --target-concurrency 32, and the no-op at 100, 250 and 500
 * targets: a few minutes on 2 cores. Issue 32's 2,000 targets (18–21 minutes on a busy 2-core
 * machine, most of it the two drift runs): `--fleet-targets 2000 --fleet-growth
 * 100,500,1000,2000`, or AMSYNC_BENCH_FLEET_TARGETS=2000 AMSYNC_BENCH_FLEET_GROWTH=100,500,1000,2000
 * (`none`: no growth runs). Growth sizes above the fleet's are left out.
 */
export const fullFleetSize: FleetBenchSize = { targets: 500, items: 100, concurrency: 32, growth: [100, 250, 500] };
/** What the small benchmark (npm test) runs: the exact figures, quickly. */
export const smallFleetSize: FleetBenchSize = { targets: 12, items: 30, concurrency: 4, growth: [4, 8, 12] };

/** `100,500,1000` (or `none`) as fleet sizes; undefined when not given. */
export function fleetGrowth(value: string | undefined, from: string): readonly number[] | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  if (value.trim() === 'none') return [];
  const sizes = value.split(',').map((part) => Number(part.trim()));
  if (!sizes.every((n) => Number.isInteger(n) && n > 0)) throw new Error(`Expected ${from} to be sizes such as 100,500,1000 (or none), got ${value}`);
  return sizes;
}

export const fullConfig: BenchConfig = {
  items: 20_000,
  pageSize: 100,
  serverRate: 200,
  clientRate: 200,
  latencyMs: 20,
  changes: 2_000,
  applyConcurrency: undefined,
  footprintItems: 100_000,
  planItems: 100_000,
  refreshParallelism: 10,
  configuredRateCases: [
    { rate: 200, latencyMs: 50 },
    { rate: 200, latencyMs: 100 },
  ],
  discoveredRateCases: [
    { rate: 50, latencyMs: 20 },
    { rate: 200, latencyMs: 50 },
  ],
  rateItems: 1_000,
  rateChanges: 2_000,
  largePageItems: 20_000,
  largePageMax: 1_000,
  tokensItems: 100_000,
  coldRuns: 10,
  cpuPairs: 3,
  exportItems: 500_000,
  fleet: fullFleetSize,
};

