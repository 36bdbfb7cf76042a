/**
 * The control law against simulated token-bucket servers of several burst sizes, in virtual
 * time. Run: npx vite-node test/bench/limiter-simulation.ts
 */
import { simulate, type SimulationOptions } from '../unit/api/limiter-simulator.js';


const cases: SimulationOptions[] = [];
for (const burst of [1, 5, 100]) {
  for (const ceiling of [undefined, 100]) {
    for (const retryAfterSeconds of [undefined, 1]) {
      cases.push({ limit: 100, burst, latencyMs: 4, jitterMs: 1, requests: 3000, ceiling, retryAfterSeconds });
    }
  }
}
for (const c of cases) {
  const r = await simulate(c);
  console.log(
    `burst=${c.burst} ceiling=${c.ceiling ?? '-'} retryAfter=${c.retryAfterSeconds ?? '-'}: ` +
      `ratio=${r.ratio.toFixed(3)} 503/1000=${r.throttledPerThousand.toFixed(2)} (${r.throttled}) t=${r.seconds.toFixed(1)}s rate=${r.finalRate.toFixed(1)}`,
  );
}

