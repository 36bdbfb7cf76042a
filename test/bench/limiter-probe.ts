/**
 * The adaptive limiter against the real emulator with a rate limit: requests/s achieved ÷ the
 * limit, and 503s per 1,000 requests, with and without the ceiling (`rate`) on the client.
 *
 *   npx vite-node test/bench/limiter-probe.ts [writes=3000] [limit=100]
 *
 * Each run starts a fresh emulator (its bucket full: one second's worth of burst), creates
 * `writes` SSH users through one client as fast as the limiter allows, and reads the
 * emulator's own request log. Figures are for the whole run, ramp-up included.
 */
import { createClient } from '../../src/api/index.js';
import { startEmulator } from '../../src/emulator/index.js';
import { Secret } from '../../src/secrets/secret.js';

interface ProbeResult {
  readonly label: string;
  readonly seconds: number;
  readonly writesPerSecond: number;
  readonly ratio: number;
  readonly requests: number;
  readonly throttled: number;
  readonly throttledPerThousand: number;
  readonly finalRate: number;
}

async function probe(label: string, writes: number, limit: number, ceiling: number | undefined): Promise<ProbeResult> {
  const emulator = await startEmulator({ tokens: ['bench-token'], rateLimit: limit, seed: 1 });
  const client = createClient({ url: emulator.url, token: new Secret('bench-token'), ...(ceiling === undefined ? {} : { rate: ceiling }) });
  try {
    const password = new Secret('bench-password-1');
    const started = performance.now();
    await Promise.all(
      Array.from({ length: writes }, (_, index) => client.createSshUser({ username: `probe-${index}`, level: 'n1', password })),
    );
    const seconds = (performance.now() - started) / 1000;
    const log = emulator.requests();
    const throttled = log.filter((entry) => entry.status === 503).length;
    return {
      label,
      seconds,
      writesPerSecond: writes / seconds,
      ratio: writes / seconds / limit,
      requests: log.length,
      throttled,
      throttledPerThousand: (throttled * 1000) / log.length,
      finalRate: client.limiter.rate,
    };
  } finally {
    client.close();
    await emulator.close();
  }
}

const writes = Number(process.argv[2] ?? process.env.PROBE_WRITES ?? 3000);
const limit = Number(process.argv[3] ?? process.env.PROBE_LIMIT ?? 100);
for (const [label, ceiling] of [
  ['discovered (no --rate)', undefined],
  [`configured (--rate ${limit})`, limit],
] as const) {
  const r = await probe(label, writes, limit, ceiling);
  console.log(
    `${r.label}: ${writes} writes in ${r.seconds.toFixed(1)} s = ${r.writesPerSecond.toFixed(1)}/s, ` +
      `ratio ${r.ratio.toFixed(3)}; ${r.throttled} × 503 in ${r.requests} requests = ${r.throttledPerThousand.toFixed(2)} per 1,000; ` +
      `final rate ${r.finalRate.toFixed(1)}/s`,
  );
}
