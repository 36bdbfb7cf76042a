import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sameService } from '../../src/app/index.js';
import { runInProcess } from '../helpers/in-process.js';
import { startHostileService, type HostileService } from '../helpers/hostile-service.js';

const TOKEN = 'CANARY-bearer-apply-url-6a0d';

let dir: string;
let services: HostileService[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'amsync-apply-url-'));
  await writeFile(join(dir, 'access.yaml'), 'apikeys:\n  - name: ci\n    roles: [1]\n');
});
afterEach(async () => {
  await Promise.all(services.map((s) => s.close()));
  services = [];
  await rm(dir, { recursive: true, force: true });
});

async function service(): Promise<HostileService> {
  const s = await startHostileService({ token: TOKEN, apikeys: [{ id: 7, name: 'ci', roles: [2], token: 'tok-7-3c1f' }] });
  services.push(s);
  return s;
}

const amsync = (args: string[], url?: string) => runInProcess(args, { cwd: dir, env: { AMSYNC_TOKEN: TOKEN, AMSYNC_URL: url } });

/** A plan saved against `made`, then its serviceUrl rewritten to `named` (an edited CI artifact). */
async function planFor(made: HostileService, named?: HostileService): Promise<void> {
  const run = await amsync(['plan', '--out', 'plan.json'], made.url);
  expect(run.code, run.stderr).toBe(0);
  if (named === undefined) return;
  const saved = JSON.parse(await readFile(join(dir, 'plan.json'), 'utf8')) as { serviceUrl: string };
  saved.serviceUrl = named.url;
  await writeFile(join(dir, 'plan.json'), JSON.stringify(saved));
}

describe('amsync apply never takes the service URL from the plan file alone', () => {
  it('without --url or AMSYNC_URL it refuses (exit 3) and nothing reaches the service the plan names', async () => {
    const planned = await service();
    await planFor(planned);
    const before = planned.requests.length;
    const run = await amsync(['apply', 'plan.json']);
    expect(run.code).toBe(3);
    expect(run.stderr).toContain(`error: the plan was made for ${planned.url}, and amsync apply does not take the service URL from a plan file alone; nothing was sent; set --url or AMSYNC_URL`);
    expect(planned.requests.length).toBe(before);
  });

  it('a plan file edited to name another server: no request, no bearer token, reaches it', async () => {
    const real = await service();
    const attacker = await service();
    await planFor(real, attacker);
    const realBefore = real.requests.length;
    const unconfirmed = await amsync(['apply', 'plan.json']);
    const elsewhere = await amsync(['apply', 'plan.json'], real.url);
    expect(unconfirmed.code).toBe(3);
    expect(elsewhere.code).toBe(3);
    expect(elsewhere.stderr).toContain(`the plan was made for ${attacker.url}, but the service configured now is ${real.url}`);
    expect(attacker.requests).toEqual([]);
    expect(real.requests.length).toBe(realBefore);
  });

  it('applies when the configured URL is the plan’s (a trailing slash aside)', async () => {
    const svc = await service();
    await planFor(svc);
    const run = await amsync(['apply', 'plan.json'], `${svc.url}/`);
    expect(run.code, run.stderr).toBe(0);
    expect(svc.requests.filter((r) => r.method === 'PUT').map((r) => `${r.path} ${r.authorization}`)).toEqual([`/api/3rdparty/apikeys/7 Bearer ${TOKEN}`]);
  });

  it('compares scheme, host, port and path', () => {
    expect(sameService('http://127.0.0.1:8080/', 'http://127.0.0.1:8080')).toBe(true);
    expect(sameService('https://Access.Example.com:443/api/', 'https://access.example.com/api')).toBe(true);
    expect(sameService('https://access.example.com', 'http://access.example.com')).toBe(false);
    expect(sameService('https://access.example.com', 'https://access.example.com.evil.io')).toBe(false);
    expect(sameService('https://access.example.com/a', 'https://access.example.com/b')).toBe(false);
    expect(sameService('https://user@access.example.com', 'https://access.example.com')).toBe(false);
    expect(sameService('not a url', 'not a url')).toBe(false);
  });
});
