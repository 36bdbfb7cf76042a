import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { defaultFaultSettings, startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { call } from '../helpers/emulator-client.js';
import { runInProcess, startDaemonInProcess, type InProcessDaemon } from '../helpers/in-process.js';
import { waitFor } from '../helpers/daemon-deferred.js';

/**
 * Issue 29, items 3-5, as a user runs amsync against the emulator: `renamedFrom:` renames in
 * place (one PUT, same id, same token and token file), `ignore:` leaves a field another owner
 * edits alone across syncs and daemon runs, `mode: observe` reports drift and never writes.
 * Every claim is checked against the emulator's request log.
 */

const TOKEN = 'item-controls-token';
const PASSWORD = 'pw-canary-29c1';
let dir: string;
let emu: RunningEmulator;
const daemons: InProcessDaemon[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'amsync-item-controls-'));
  emu = await startEmulator({ tokens: [TOKEN] });
});

afterEach(async () => {
  for (const d of daemons.splice(0)) await d.stop();
  emu.setFaults({ ...defaultFaultSettings, rules: [] });
  emu.reset();
  emu.clearRequests();
  await rm(join(dir, 'state.json'), { force: true });
  await rm(join(dir, 'tokens'), { recursive: true, force: true });
});

afterAll(async () => {
  await emu.close();
  await rm(dir, { recursive: true, force: true, maxRetries: 20, retryDelay: 50 });
});

async function file(name: string, text: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, text);
  return path;
}

const env = () => ({ AMSYNC_URL: emu.url, AMSYNC_TOKEN: TOKEN, AMSYNC_STATE_FILE: join(dir, 'state.json'), AMSYNC_TOKENS_DIR: join(dir, 'tokens'), DEPLOY_PASSWORD: PASSWORD });
const amsync = (args: string[]) => runInProcess(args, { env: env(), cwd: dir });
const writes = () => emu.requests().filter((r) => r.method !== 'GET');
const key = (name: string) => emu.state().apikeys.find((k) => k.name === name);
const user = (name: string) => emu.state().sshUsers.find((u) => u.username === name);

describe('renamedFrom: rename in place', () => {
  it('renames an SSH user and an apikey by PUT on their ids: id, token and token file kept, password not sent again', async () => {
    const before = await file('before.yaml', 'sshUsers:\n  - username: old-deploy\n    password: { env: DEPLOY_PASSWORD }\napikeys:\n  - name: ci-old\n    roles: [1]\n');
    expect((await amsync(['sync', '-f', before])).code).toBe(0);
    const { id: userId, passwordVersion } = user('old-deploy')!;
    expect(passwordVersion).toBe(1);
    const { id: keyId, token } = key('ci-old')!;
    expect(await readFile(join(dir, 'tokens', 'ci-old'), 'utf8')).toContain(token);
    emu.clearRequests();

    const after = await file(
      'after.yaml',
      'sshUsers:\n  - username: deploy\n    renamedFrom: [old-deploy]\n    password: { env: DEPLOY_PASSWORD }\napikeys:\n  - name: ci-new\n    renamedFrom: [ci-old]\n    roles: [1]\n',
    );
    const plan = await amsync(['plan', '-f', after]);
    expect(plan.code).toBe(0);
    expect(plan.stdout).toContain('~ sshUser "deploy" (renamed from "old-deploy") {');
    expect(plan.stdout).toContain('~ apikey "ci-new" (renamed from "ci-old") {');
    expect(plan.stdout).not.toContain('rename by id');
    const json = JSON.parse((await amsync(['plan', '-f', after, '--json'])).stdout) as { changes: { key: string; renamedFrom?: string; action: string; id: number }[] };
    expect(json.changes.map((c) => [c.action, c.key, c.renamedFrom, c.id])).toEqual([
      ['update', 'deploy', 'old-deploy', userId],
      ['update', 'ci-new', 'ci-old', keyId],
    ]);
    const md = await amsync(['plan', '-f', after, '--format', 'markdown']);
    expect(md.stdout).toContain('`ci-new` (renamed from `ci-old`)');

    const sync = await amsync(['sync', '-f', after]);
    expect(sync.code).toBe(0);
    // One PUT each, with the new name only: the password follows the item (its fingerprint is by id).
    expect(writes().map((r) => `${r.method} ${r.path}`).sort()).toEqual([`PUT /api/3rdparty/apikeys/${keyId}`, `PUT /api/sshusers/${userId}`]);
    expect(writes().map((r) => r.item?.name).sort()).toEqual(['ci-new', 'deploy']);
    expect(user('deploy')!.passwordVersion).toBe(1);
    expect(user('deploy')!.id).toBe(userId);
    expect(key('ci-new')).toMatchObject({ id: keyId, token });
    expect(await readFile(join(dir, 'tokens', 'ci-new'), 'utf8')).toContain(token);
    expect(sync.stdout).not.toContain(token);

    emu.clearRequests();
    const again = await amsync(['plan', '-f', after, '--detailed-exitcode']);
    expect(again.code).toBe(0);
  });

  it('a rename the service refuses fails that change with a clear error: nothing deleted or created', async () => {
    await amsync(['sync', '-f', await file('r1.yaml', 'apikeys:\n  - name: ci-old\n')]);
    const { id } = key('ci-old')!;
    emu.clearRequests();
    emu.setFaults({ ...defaultFaultSettings, rules: [{ method: 'PUT', path: '^/api/3rdparty/apikeys/', status: 409 }] });
    const run = await amsync(['sync', '-f', await file('r2.yaml', 'apikeys:\n  - name: ci-new\n    renamedFrom: [ci-old]\n')]);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain(`the service refused to rename apikey "ci-old" (id ${id}) to "ci-new": the name "ci-new" is taken (409); nothing was deleted or created instead`);
    expect(writes().map((r) => r.method)).toEqual(['PUT']);
    expect(emu.state().apikeys.map((k) => [k.id, k.name])).toEqual([[id, 'ci-old']]);
  });

  it('two items claiming one former name: exit 65 naming both positions, no request', async () => {
    const f = await file('twice.yaml', 'sshUsers:\n  - username: a\n    renamedFrom: [old]\n  - username: b\n    renamedFrom: [old]\n');
    const run = await amsync(['sync', '-f', f]);
    expect(run.code).toBe(65);
    expect(run.stderr).toContain(`${f}:5:19: error: SSH user 'old' is claimed as a former username twice: by sshUsers[0] at ${f}:3:19 and by sshUsers[1] here`);
    expect(emu.requests()).toEqual([]);
  });
});

describe('ignore: fields another owner edits', () => {
  it('an unknown field name: exit 65 at file:line:col with a suggestion, no request', async () => {
    const f = await file('bad-ignore.yaml', 'apikeys:\n  - name: ci\n    ignore: [role]\n');
    const run = await amsync(['plan', '-f', f]);
    expect(run.code).toBe(65);
    expect(run.stderr).toMatch(new RegExp(`${f.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:3:14: error: .*'role'.*did you mean 'roles'\\?`));
    expect(emu.requests()).toEqual([]);
  });

  it('ignore: [roles] sends roles on create, then leaves roles edited in the service alone across syncs and daemon runs', async () => {
    const f = await file('ignore.yaml', 'apikeys:\n  - name: ci\n    roles: [1]\n    ignore: [roles]\n');
    expect((await amsync(['sync', '-f', f])).code).toBe(0);
    expect(key('ci')!.roles.map((r) => r.id)).toEqual([1]);
    const { id } = key('ci')!;
    expect((await call(emu.url, 'PUT', `/api/3rdparty/apikeys/${id}`, { token: TOKEN, body: { roles: [4] } })).status).toBe(200);
    emu.clearRequests();

    const plan = await amsync(['plan', '-f', f, '--detailed-exitcode']);
    expect(plan.code).toBe(0);
    expect(plan.stdout).toContain('Ignored fields (sent on create, never updated, not drift): apikey roles (every apikey)');
    expect(plan.stdout).toContain('No changes.');
    const json = JSON.parse((await amsync(['plan', '-f', f, '--json'])).stdout) as { ignored: unknown };
    expect(json.ignored).toEqual([{ kind: 'apikey', field: 'roles', keys: 'all' }]);
    expect((await amsync(['sync', '-f', f])).code).toBe(0);

    await mkdir(join(dir, 'daemon'), { recursive: true });
    const settings = await file('daemon/settings.yaml', 'daemon:\n  debounceMs: 300\n');
    const d = await startDaemonInProcess(['-f', f, '--url', emu.url, '--listen', '127.0.0.1:0', '--schedule', '*/5 * * * *', '--state-file', join(dir, 'state.json'), '--settings', settings], { cwd: dir, env: env() });
    daemons.push(d);
    await d.waitForLog((l) => l.msg === 'sync finished', 'the start run', 15_000);
    for (let run = 0; run < 2; run += 1) {
      const from = d.logs.length;
      d.fireSchedule();
      await d.waitForLog((l) => l.msg === 'sync finished', `scheduled run ${run + 1}`, 15_000, from);
    }
    expect(writes()).toEqual([]);
    expect(key('ci')!.roles.map((r) => r.id)).toEqual([4]);
  });
});

describe('mode: observe', () => {
  it("an observed item's drift is reported (plan, --json, daemon metrics) and never written; ensure: absent on it deletes nothing", async () => {
    await amsync(['sync', '-f', await file('o1.yaml', 'apikeys:\n  - name: watched\n  - name: leaving\n')]);
    const watched = key('watched')!;
    expect((await call(emu.url, 'PUT', `/api/3rdparty/apikeys/${watched.id}`, { token: TOKEN, body: { superuser: true } })).status).toBe(200);
    emu.clearRequests();

    const f = await file('o2.yaml', 'apikeys:\n  - name: watched\n    mode: observe\n  - name: leaving\n    ensure: absent\n    mode: observe\n');
    const run = await amsync(['sync', '-f', f]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Observed only (mode: observe): 2 items have drifted; reported, not written:');
    expect(run.stdout).toContain('~ superuser = true -> false');
    expect(run.stdout).toContain('not deleted (observe only) (ensure: absent)');
    expect(run.stdout).toContain('Observed: 2 items drifted (observe only: not corrected).');
    const json = JSON.parse((await amsync(['plan', '-f', f, '--json'])).stdout) as { changes: unknown[]; observed: { key: string; action: string }[] };
    expect(json.changes).toEqual([]);
    expect(json.observed.map((c) => [c.action, c.key])).toEqual([
      ['delete', 'leaving'],
      ['update', 'watched'],
    ]);
    expect(writes()).toEqual([]);
    expect(key('watched')!.superuser).toBe(true);
    expect(key('leaving')).toBeDefined();

    await mkdir(join(dir, 'daemon'), { recursive: true });
    const settings = await file('daemon/settings.yaml', 'daemon:\n  debounceMs: 300\n');
    const d = await startDaemonInProcess(['-f', f, '--url', emu.url, '--listen', '127.0.0.1:0', '--schedule', '*/5 * * * *', '--state-file', join(dir, 'state.json'), '--settings', settings], { cwd: dir, env: env() });
    daemons.push(d);
    await d.waitForLog((l) => l.msg === 'sync finished', 'the start run', 15_000);
    const metrics = await waitFor(async () => {
      const m = await d.get('/metrics');
      return /amsync_drifted_items\{kind="apikey"\} 2/.test(m.text) ? m.text : undefined;
    }, 'the drift metric');
    expect(metrics).toContain('amsync_drifted_items{kind="apikey"} 2');
    expect(writes()).toEqual([]);
  });
});
