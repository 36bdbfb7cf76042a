// What idle tenants cost: `amsync emulator --tenants N` as a child process (the build), one
// GET to every tenant, then the process's resident memory, against the same with one tenant.
// In this process too, with the GC run by hand, the heap that N tenants' state holds.
//
//   npm run build && node --expose-gc test/bench/tenant-memory.mjs [N]
//
// Prints one JSON document on stdout. Linux only for the child's RSS (/proc/PID/status).
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const tenants = Number(process.argv[2] ?? 500);
const token = 'bench';
const agent = new Agent({ keepAlive: true, maxSockets: 8 });

function get(url) {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent, headers: { authorization: `Bearer ${token}` } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('error', reject);
    req.end();
  });
}

/** One GET to each tenant, 8 at a time; every answer must be 200. */
async function touchAll(base, count) {
  let next = 1;
  const worker = async () => {
    while (next <= count) {
      const status = await get(`${base}/t/t${next++}/api/sshusers?cursor=0`);
      if (status !== 200) throw new Error(`answered ${status}`);
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
}

function rssKb(pid) {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) : Number.NaN;
}

async function childRss(count) {
  const child = spawn(process.execPath, [`${root}bin/amsync.js`, 'emulator', '--port', '0', '--token', token, '--tenants', String(count)], { stdio: ['ignore', 'pipe', 'ignore'] });
  const first = await new Promise((resolve) => createInterface({ input: child.stdout }).once('line', resolve));
  const base = String(first).slice('amsync emulator listening on '.length);
  await touchAll(base, count);
  // Let the process settle (its GC runs on its own schedule; RSS rarely shrinks).
  await new Promise((r) => setTimeout(r, 500));
  const kb = rssKb(child.pid);
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  return kb;
}

async function inProcessHeap(count) {
  const { startEmulator } = await import(`${root}dist/emulator/index.js`);
  const emu = await startEmulator({ tokens: [token], tenants: count });
  globalThis.gc?.();
  const before = process.memoryUsage().heapUsed;
  await touchAll(emu.url, count);
  globalThis.gc?.();
  const after = process.memoryUsage().heapUsed;
  const active = emu.activeTenants();
  await emu.close();
  return { active, heapKb: Math.round((after - before) / 1024) };
}

const one = await childRss(1);
const many = await childRss(tenants);
const heap = await inProcessHeap(tenants);
agent.destroy();
console.log(
  JSON.stringify({
    tenants,
    childRssKbOneTenant: one,
    childRssKbAllTenants: many,
    childRssKbPerTenant: Math.round(((many - one) / (tenants - 1)) * 10) / 10,
    inProcessHeapKbAllTenants: heap.heapKb,
    inProcessHeapKbPerTenant: Math.round((heap.heapKb / heap.active) * 10) / 10,
    gcExposed: typeof globalThis.gc === 'function',
  }),
);
