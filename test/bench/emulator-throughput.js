// Throughput of the emulator on loopback, with no faults: a bounded loop of keep-alive HTTP
// requests (lists, fetches and creates), printing requests per second. The emulator must
// never be the bottleneck of a benchmark; the target is at least 3,000 requests/s.
//
//   npm run build && node test/bench/emulator-throughput.js [--requests N] [--concurrency C] [--server in-process|child]
//
// `in-process` (default) runs client and server in one process, sharing one core: a lower
// bound. `child` runs `amsync emulator` as a child process, as benchmarks of the CLI do.
import { spawn } from 'node:child_process';
import { Agent, request } from 'node:http';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '30000' },
    concurrency: { type: 'string', default: '32' },
    server: { type: 'string', default: 'in-process' },
    seed: { type: 'string', default: '1000' },
  },
});
const total = Number(values.requests);
const concurrency = Number(values.concurrency);
const TOKEN = 'bench-token';

const server = values.server === 'child' ? await startChild() : await startInProcess();
const agent = new Agent({ keepAlive: true, maxSockets: concurrency });

await send('POST', '/_emulator/seed', { count: { sshUsers: Number(values.seed), apikeys: Number(values.seed) }, returnItems: false });

const statuses = {};
let issued = 0;
const started = performance.now();
await Promise.all(Array.from({ length: concurrency }, () => worker()));
const seconds = (performance.now() - started) / 1000;
agent.destroy();
await server.close();

const rps = Math.round(total / seconds);
process.stdout.write(`${JSON.stringify({ server: values.server, requests: total, concurrency, seconds: Number(seconds.toFixed(3)), requestsPerSecond: rps, statuses })}\n`);
process.stdout.write(`emulator throughput: ${rps} requests/s (${values.server}, ${total} requests, ${concurrency} connections)\n`);

async function worker() {
  while (issued < total) {
    const n = issued;
    issued += 1;
    const kind = n % 20;
    let status;
    if (kind < 14) status = await send('GET', `/api/sshusers?cursor=0&size=25`);
    else if (kind < 17) status = await send('GET', `/api/3rdparty/apikeys/${1 + (n % 500)}`);
    else status = await send('POST', '/api/3rdparty/apikeys', { name: `bench-${n}`, roles: [1] });
    statuses[status] = (statuses[status] ?? 0) + 1;
  }
}

function send(method, path, body) {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const headers = { Accept: 'application/json', Authorization: `Bearer ${TOKEN}` };
  if (payload !== undefined) {
    headers['Content-Type'] = 'application/json';
    headers['Content-Length'] = Buffer.byteLength(payload);
  }
  return new Promise((resolve, reject) => {
    const req = request(`${server.url}${path}`, { method, headers, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

async function startInProcess() {
  const { startEmulator } = await import('../../dist/emulator/index.js');
  const emulator = await startEmulator({ tokens: [TOKEN], seed: 1 });
  return { url: emulator.url, close: () => emulator.close() };
}

async function startChild() {
  const bin = fileURLToPath(new URL('../../bin/amsync.js', import.meta.url));
  const child = spawn(process.execPath, [bin, 'emulator', '--port', '0', '--token', TOKEN, '--seed', '1'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`emulator exited with ${code}`)));
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return {
    url: String(line).replace('amsync emulator listening on ', ''),
    close: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}
