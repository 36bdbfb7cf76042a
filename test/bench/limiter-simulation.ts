/**
 * The limiter against simulated servers in virtual time: the cases the benchmark runs against
 * the emulator (a one-second bucket, 503s answered at once), and harder ones (small buckets, a
 * queueing server, a listing of serial chains). Run: npx vite-node test/bench/limiter-simulation.ts
 */
import { emulatorLike, simulate, type SimulationOptions } from '../unit/api/limiter-simulator.js';

// The event loop held up for 30 ms before 1 % of events: a machine shared with other work.
const busy = { stallChance: 0.01, stallMs: 30 } as const;
// A client whose own CPU is short: 2 ms a call on its one event loop (500 calls/s at most), as
// on a machine shared with the server and other work; it handles a 503 late.
const shortOfCpu = { clientCpuMs: 2 } as const;

// The service's documentation promises no Retry-After on its 503s.
const noRetryAfter = { uniformLatency: true, throttleAtOnce: true } as const;

const cases: [string, SimulationOptions][] = [
  ['R=50, one-second burst, L~0, 1,200 creates', { limit: 50, burst: 50, latencyMs: 0.5, requests: 1200, listPages: 1, ...emulatorLike }],
  ['same, no Retry-After', { limit: 50, burst: 50, latencyMs: 0.5, requests: 1200, listPages: 1, ...noRetryAfter }],
  ['same, no Retry-After, loaded client', { limit: 50, burst: 50, latencyMs: 0.5, requests: 1200, listPages: 1, ...noRetryAfter, clientCpuMs: 3, stallChance: 0.02, stallMs: 50 }],
  ['same, without the gate before the send', { limit: 50, burst: 50, latencyMs: 0.5, requests: 1200, listPages: 1, ...noRetryAfter, clientCpuMs: 3, stallChance: 0.02, stallMs: 50, gate: false }],
  ['hidden R=200, L=50, no Retry-After', { limit: 200, burst: 200, latencyMs: 50, requests: 2000, listPages: 10, ...noRetryAfter }],
  ['hidden R=200, L=100, no Retry-After', { limit: 200, burst: 200, latencyMs: 100, requests: 2000, listPages: 10, ...noRetryAfter }],
  ['hidden R=50, one-second burst, L=20', { limit: 50, burst: 50, latencyMs: 20, requests: 2000, listPages: 10, ...emulatorLike }],
  ['hidden R=200, one-second burst, L=20', { limit: 200, burst: 200, latencyMs: 20, requests: 2000, listPages: 10, ...emulatorLike }],
  ['hidden R=200, one-second burst, L=50', { limit: 200, burst: 200, latencyMs: 50, requests: 2000, listPages: 10, ...emulatorLike }],
  ['hidden R=200, one-second burst, L=100', { limit: 200, burst: 200, latencyMs: 100, requests: 2000, listPages: 10, ...emulatorLike }],
  ['hidden R=50, L=20, busy machine', { limit: 50, burst: 50, latencyMs: 20, requests: 2000, listPages: 10, ...emulatorLike, ...busy }],
  ['hidden R=200, L=50, busy machine', { limit: 200, burst: 200, latencyMs: 50, requests: 2000, listPages: 10, ...emulatorLike, ...busy }],
  ['hidden R=200, L=20, client CPU 2 ms a call', { limit: 200, burst: 200, latencyMs: 20, requests: 2000, listPages: 10, ...emulatorLike, ...shortOfCpu }],
  ['hidden R=200, L=50, client CPU 2 ms a call', { limit: 200, burst: 200, latencyMs: 50, requests: 2000, listPages: 10, ...emulatorLike, ...shortOfCpu }],
  ['hidden R=200, L=50, client CPU 3 ms a call', { limit: 200, burst: 200, latencyMs: 50, requests: 2000, listPages: 10, ...emulatorLike, clientCpuMs: 3 }],
  ['hidden R=200, L=100, client CPU 2 ms a call', { limit: 200, burst: 200, latencyMs: 100, requests: 2000, listPages: 10, ...emulatorLike, ...shortOfCpu }],
  ['--rate 200, L=50, busy machine', { limit: 200, burst: 200, latencyMs: 50, requests: 2000, listPages: 10, ceiling: 200, ...emulatorLike, ...busy }],
  ['--rate 200, L=20 (R·L 4)', { limit: 200, burst: 200, latencyMs: 20, requests: 2000, listPages: 10, ceiling: 200, ...emulatorLike }],
  ['--rate 200, L=50 (R·L 10)', { limit: 200, burst: 200, latencyMs: 50, requests: 2000, listPages: 10, ceiling: 200, ...emulatorLike }],
  ['--rate 200, L=100 (R·L 20)', { limit: 200, burst: 200, latencyMs: 100, requests: 2000, listPages: 10, ceiling: 200, ...emulatorLike }],
  ['hidden R=100, burst 5, no Retry-After, L=4', { limit: 100, burst: 5, latencyMs: 4, jitterMs: 1, requests: 3000 }],
  ['hidden R=100, burst 1, no Retry-After, L=4', { limit: 100, burst: 1, latencyMs: 4, jitterMs: 1, requests: 3000 }],
  ['queueing server R=100, L=20', { limit: 100, burst: 1, latencyMs: 20, requests: 2000, server: 'queue', queueLimit: 20, retryAfterSeconds: 1 }],
  ['listing, 2 chains × 20 pages, L=20, no limit', { limit: 100_000, burst: 100_000, latencyMs: 20, requests: 40, chains: 2, ...emulatorLike }],
  ['listing, 2 chains × 1000 pages, L=2, no limit', { limit: 100_000, burst: 100_000, latencyMs: 2, requests: 2000, chains: 2, ...emulatorLike }],
  ['listing, 2 chains × 1000 pages, L=2, hidden R=200', { limit: 200, burst: 200, latencyMs: 2, requests: 2000, chains: 2, ...emulatorLike }],
];
for (const [label, c] of cases) {
  const r = await simulate(c);
  console.log(
    `${label.padEnd(48)} ratio ${r.ratio.toFixed(3)}  503/1000 ${r.throttledPerThousand.toFixed(2).padStart(6)} (${r.throttled})  ` +
      `t ${r.seconds.toFixed(2)} s  rate ${r.finalRate.toFixed(1)}  in flight ≤ ${r.maxInFlight}  overshoots ${r.overshoots.join(',') || '-'}  held back ${r.heldBack}`,
  );
}
