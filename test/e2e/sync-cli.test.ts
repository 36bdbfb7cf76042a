import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { runInProcess } from '../helpers/in-process.js';
import { passwordMatches as checkPassword } from '../helpers/emulator-client.js';

const TOKEN = 'CANARY-bearer-5e1d7a';
const RO_TOKEN = 'CANARY-readonly-0b9c';
const PASSWORD = 'CANARY-password-c41f';

let emu: RunningEmulator;
let dir: string;

beforeAll(async () => {
  emu = await startEmulator({ tokens: [TOKEN], readOnlyTokens: [RO_TOKEN] });
});
afterAll(async () => {
  await emu.close();
});
beforeEach(async () => {
  emu.reset();
  emu.setFaults({ rules: [], maintenance: false });
  emu.clearRequests();
  dir = await mkdtemp(join(tmpdir(), 'amsync-sync-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const baseFile = `
sshUsers:
  - username: deploy
    password: { env: DEPLOY_PASSWORD }
  - username: old
    ensure: absent
apikeys:
  - name: ci
    roles: [2, 1]
`;

async function amsync(args: string[], opts: { file?: string; token?: string; env?: Record<string, string> } = {}) {
  await writeFile(join(dir, 'access.yaml'), opts.file ?? baseFile);
  return runInProcess(args, {
    cwd: dir,
    env: { AMSYNC_URL: emu.url, AMSYNC_TOKEN: opts.token ?? TOKEN, DEPLOY_PASSWORD: PASSWORD, ...opts.env },
  });
}

const writes = () => emu.requests().filter((r) => r.method !== 'GET');

describe('amsync plan and sync --dry-run', () => {
  it('show the plan, change nothing, and exit 0 (2 with --detailed-exitcode)', async () => {
    const plan = await amsync(['plan']);
    expect(plan.code).toBe(0);
    expect(plan.stdout).toContain('+ sshUser "deploy"');
    expect(plan.stdout).toContain('Plan: 2 to create, 0 to update, 0 to delete, 1 unchanged, 0 unmanaged.');
    const dry = await amsync(['sync', '--dry-run', '--detailed-exitcode']);
    expect(dry.code).toBe(2);
    expect(writes()).toEqual([]);
  });

  it('prints the JSON document of DESIGN.md §5', async () => {
    const run = await amsync(['sync', '--dry-run', '--json']);
    expect(run.code).toBe(0);
    const doc = JSON.parse(run.stdout);
    expect(doc).toMatchObject({ formatVersion: 1, dryRun: true, summary: { create: 2, update: 0, delete: 0, unchanged: 1, unmanaged: 0 } });
    expect(doc.results).toBeUndefined();
  });
});

describe('amsync sync', () => {
  it('applies the plan, and the next sync makes zero writes', async () => {
    emu.seed({ sshUsers: [{ username: 'old', level: 'n1', password: 'x' }], apikeys: [{ name: 'ci', roles: [4] }] });
    const first = await amsync(['sync', '--json']);
    expect(first.code).toBe(0);
    const doc = JSON.parse(first.stdout);
    expect(doc.dryRun).toBe(false);
    expect(doc.results.map((r: { status: string }) => r.status)).toEqual(['applied', 'applied', 'applied']);
    expect((await emu.state()).sshUsers.map((u) => u.username)).toEqual(['deploy']);
    expect((await fetchCheck('deploy', PASSWORD))).toBe(true);

    emu.clearRequests();
    const second = await amsync(['sync', '--detailed-exitcode']);
    expect(second.code).toBe(0);
    expect(second.stdout).toMatch(/^No changes\./m);
    expect(writes()).toEqual([]);
    expect(emu.requests().map((r) => `${r.method} ${r.path}`).sort()).toEqual(['GET /api/3rdparty/apikeys', 'GET /api/sshusers']);
  });

  it('plans a password change it has a fingerprint for, and sets it', async () => {
    expect((await amsync(['sync'])).code).toBe(0);
    const changed = await amsync(['plan', '--json'], { env: { DEPLOY_PASSWORD: 'CANARY-new-pw-77aa' } });
    expect(JSON.parse(changed.stdout).changes).toMatchObject([{ kind: 'sshUser', action: 'update', key: 'deploy', fields: { password: { before: '(sensitive)', after: '(sensitive)' } } }]);
    expect((await amsync(['sync'], { env: { DEPLOY_PASSWORD: 'CANARY-new-pw-77aa' } })).code).toBe(0);
    expect(await fetchCheck('deploy', 'CANARY-new-pw-77aa')).toBe(true);
    const files = await readdir(join(dir, '.amsync'));
    expect(files.sort()).toEqual(['state.json', 'state.json.key']);
    expect((await stat(join(dir, '.amsync', 'state.json'))).mode & 0o777).toBe(0o600);
  });

  it('writes new apikey tokens to --tokens-dir, 0600, and never prints them', async () => {
    const run = await amsync(['sync', '--tokens-dir', 'tokens', '--log-level', 'debug']);
    expect(run.code).toBe(0);
    const token = (await emu.state()).apikeys[0]!.token;
    expect(await readFile(join(dir, 'tokens', 'ci'), 'utf8')).toBe(token);
    expect((await stat(join(dir, 'tokens', 'ci'))).mode & 0o777).toBe(0o600);
    expect(run.stdout + run.stderr).not.toContain(token);
  });

  it('adopts a user created between listing and create (409), and reports the drift', async () => {
    emu.setFaults({ rules: [{ method: 'POST', path: '^/api/sshusers$', times: 1, delayMs: 1500 }] });
    const running = amsync(['sync', '--json'], { file: 'sshUsers:\n  - username: deploy\n    password: { env: DEPLOY_PASSWORD }\n' });
    await until(() => emu.requests().some((r) => r.path === '/api/sshusers' && r.method === 'GET'));
    emu.seed({ sshUsers: [{ username: 'deploy', level: 'n1', password: 'someone-elses' }] });
    const run = await running;
    expect(run.code).toBe(0);
    const result = JSON.parse(run.stdout).results[0];
    expect(result).toMatchObject({ action: 'create', status: 'applied', drift: expect.stringContaining('existed already') });
    expect((await emu.state()).sshUsers).toHaveLength(1);
    expect(await fetchCheck('deploy', PASSWORD)).toBe(true);
  });

  it('treats a 404 on delete as done, and creates again after a 404 on update', async () => {
    emu.seed({ sshUsers: [{ username: 'old', level: 'n1', password: 'x' }, { username: 'deploy', level: 'n1', password: 'x' }] });
    // Someone else deletes each item just before the sync's update or delete of it arrives
    // (deterministic: direct deletes raced the client, which now starts without a pause).
    emu.setFaults({ rules: [{ method: ['PUT', 'DELETE'], path: '^/api/sshusers/\\d+$', times: 2, concurrentWrite: 'delete' }] });
    const run = await amsync(['sync', '--json', '--rotate-passwords']);
    expect(run.code).toBe(0);
    const results = JSON.parse(run.stdout).results as { key: string; drift?: string; status: string }[];
    expect(results.find((r) => r.key === 'old')).toMatchObject({ status: 'applied', drift: 'was already deleted' });
    expect(results.find((r) => r.key === 'deploy')).toMatchObject({ status: 'applied', drift: expect.stringContaining('created it again') });
    expect((await emu.state()).sshUsers.map((u) => u.username)).toEqual(['deploy']);
  });
});

describe('exit codes', () => {
  it('65: an invalid file, with file:line:col, and not one request', async () => {
    const run = await amsync(['sync'], { file: 'sshUsers:\n  - username: a\n    levl: n1\n' });
    expect(run.code).toBe(65);
    expect(run.stderr).toMatch(/access\.yaml:3:5/);
    expect(run.stderr).toContain("did you mean 'level'");
    expect(emu.requests()).toEqual([]);
  });

  it('65: an unset password variable, before any request', async () => {
    const run = await amsync(['sync'], { env: { DEPLOY_PASSWORD: '' } });
    expect(run.code).toBe(65);
    expect(run.stderr).toContain('DEPLOY_PASSWORD');
    expect(emu.requests()).toEqual([]);
  });

  it('64: a bad flag, and a missing URL that suggests the demo', async () => {
    const bad = await amsync(['sync', '--rate', 'fast']);
    expect(bad.code).toBe(64);
    expect(bad.stderr).toContain('--rate');
    const noUrl = await runInProcess(['plan'], { cwd: dir, env: { AMSYNC_TOKEN: TOKEN, DEPLOY_PASSWORD: PASSWORD } });
    expect(noUrl.code).toBe(64);
    expect(noUrl.stderr).toContain('amsync demo');
    expect(emu.requests()).toEqual([]);
  });

  it('3: more deletes than the budget, nothing changed, and the message says how to raise it', async () => {
    emu.seed({ count: { sshUsers: 12 } });
    const run = await amsync(['sync', '--prune']);
    expect(run.code).toBe(3);
    expect(run.stderr).toContain('--max-deletes 12');
    expect(writes()).toEqual([]);
    const raised = await amsync(['sync', '--prune', '--max-deletes', '12']);
    expect(raised.code).toBe(0);
  });

  it('3: prune with nothing declared for a kind refuses to wipe it', async () => {
    emu.seed({ apikeys: [{ name: 'k1' }, { name: 'k2' }] });
    const run = await amsync(['sync', '--prune'], { file: 'sshUsers:\n  - username: deploy\n    password: { env: DEPLOY_PASSWORD }\n' });
    expect(run.code).toBe(3);
    expect(run.stderr).toContain('--allow-empty-prune');
    expect(writes()).toEqual([]);
  });

  it('1: a read-only token plans but cannot apply, and the message says it may not write (the scope preflight, before any write)', async () => {
    const plan = await amsync(['plan'], { token: RO_TOKEN });
    expect(plan.code).toBe(0);
    const run = await amsync(['sync'], { token: RO_TOKEN });
    expect(run.code).toBe(1);
    expect(run.stdout + run.stderr).toMatch(/may not change|403|forbidden/i);
    expect(run.stdout + run.stderr).toMatch(/read-only/);
  });

  it('64: a URL amsync refuses to send a token to (plain http to another host), with no request', async () => {
    const run = await amsync(['plan', '--url', 'http://192.0.2.10:8080']);
    expect(run.code).toBe(64);
    expect(run.stderr).toMatch(/allow-insecure-http|insecure/);
  });

  it('1: the service is down for maintenance', async () => {
    emu.setFaults({ maintenance: true });
    await writeFile(join(dir, 'fast.yaml'), 'retry:\n  maxAttempts: 2\n  baseDelayMs: 10\n  maxDelayMs: 20\n');
    const down = await amsync(['plan', '--settings', 'fast.yaml']);
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(/503|unavailable/);
  });
});

describe('secrets', () => {
  it('never print the bearer token or a password, in any format or log level', async () => {
    emu.seed({ sshUsers: [{ username: 'old', level: 'n1', password: 'x' }] });
    const outputs: string[] = [];
    for (const format of ['text', 'json', 'markdown']) {
      const run = await amsync(['sync', '--dry-run', '--format', format, '--log-level', 'trace']);
      outputs.push(run.stdout, run.stderr);
    }
    const applied = await amsync(['sync', '--log-level', 'trace', '--rotate-passwords']);
    outputs.push(applied.stdout, applied.stderr);
    const denied = await amsync(['sync', '--log-level', 'trace'], { token: 'CANARY-wrong-token-11' });
    expect(denied.code).toBe(1);
    outputs.push(denied.stdout, denied.stderr);
    const all = outputs.join('\n');
    const apikeyTokens = (await emu.state()).apikeys.map((k) => k.token);
    expect(apikeyTokens.length).toBeGreaterThan(0);
    for (const canary of [TOKEN, PASSWORD, 'CANARY-wrong-token-11', ...apikeyTokens]) expect(all).not.toContain(canary);
  });
});

const fetchCheck = (username: string, password: string): Promise<boolean> => checkPassword(emu.url, username, password);

async function until(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('every wait bounded (issue 12)', () => {
  it('a FIFO at tokensDir/<name> does not block the sync: an error for that key, exit 1, the other key written', async () => {
    const { execFileSync } = await import('node:child_process');
    const { mkdir } = await import('node:fs/promises');
    emu.seed({ apikeys: [{ name: 'ci', roles: [1, 2] }, { name: 'monitor', roles: [] }] });
    await mkdir(join(dir, 'tokens'));
    execFileSync('mkfifo', [join(dir, 'tokens', 'ci')]);
    const run = await amsync(['sync', '--tokens-dir', 'tokens'], { file: `${baseFile}  - name: monitor\n` });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('error: apikey "ci": the token file');
    expect(run.stderr).toContain('is a FIFO (named pipe), not a regular file; its token was not written');
    const monitor = (await emu.state()).apikeys.find((k) => k.name === 'monitor')!;
    expect(await readFile(join(dir, 'tokens', 'monitor'), 'utf8')).toBe(monitor.token);
  });
});

describe('the fewest round trips: listings learn the service largest page', () => {
  it('against `amsync emulator --page-size-max 250`, 1000 users are listed in 4 GETs, asking 1000 then 250', async () => {
    const capped = await startEmulator({ tokens: [TOKEN], pageSizeMax: 250 });
    try {
      capped.seed({ count: { sshUsers: 1000, apikeys: 0 } });
      capped.clearRequests();
      const run = await amsync(['plan', '--json'], { env: { AMSYNC_URL: capped.url }, file: 'sshUsers: []\n' });
      expect(run.code).toBe(0);
      const pages = capped.requests().filter((r) => r.method === 'GET' && r.path === '/api/sshusers');
      expect(pages.map((r) => r.query.size)).toEqual(['1000', '250', '250', '250']);
      expect(pages).toHaveLength(Math.ceil(1000 / 250));
    } finally {
      await capped.close();
    }
  });
});
