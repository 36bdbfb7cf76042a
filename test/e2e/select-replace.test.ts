import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import type { RunningEmulator, SeedData } from '../../src/emulator/index.js';
import { emulatorPerTest } from '../helpers/emulator-per-test.js';
import { runInProcess, type InProcessRun as CliRun } from '../helpers/in-process.js';
import { passwordMatches as checkPassword } from '../helpers/emulator-client.js';

// issue 29, items 1 and 2: --only / --exclude and --replace, against the emulator's own log.

const TOKEN = 'CANARY-bearer-select-8c1e';
const ALICE = 'CANARY-password-alice-"\\-ü';
const BOB = 'CANARY-password-bob-4d2a';

let emu: RunningEmulator;
let dir: string;

emulatorPerTest(TOKEN, 'amsync-select-', (e, d) => {
  emu = e;
  dir = d;
});
beforeEach(async () => {
  emu.setFaults({ rules: [], maintenance: false });
  await writeFile(join(dir, 'access.yaml'), accessFile);
});

const accessFile = `
sshUsers:
  - username: alice
    level: n1
    password: { env: ALICE_PASSWORD }
  - username: bob
    level: n1
    password: { env: BOB_PASSWORD }
apikeys:
  - name: ci-build
    roles: [1]
  - name: ci-deploy
  - name: billing
    roles: [2]
prune:
  sshUsers: true
  apikeys: true
`;

/** Drift everywhere: roles off on every declared key, an undeclared key of each family, an undeclared user. */
const seed: SeedData = {
  sshUsers: [
    { username: 'alice', level: 'n1', password: 'old-a' },
    { username: 'bob', level: 'n1', password: 'old-b' },
    { username: 'stray', level: 'n1', password: 'x' },
  ],
  apikeys: [{ name: 'ci-build', roles: [3] }, { name: 'ci-deploy', superuser: true }, { name: 'ci-old' }, { name: 'billing', roles: [3] }, { name: 'manual' }],
};

function amsync(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  return runInProcess(args, { cwd: dir, env: { AMSYNC_URL: emu.url, AMSYNC_TOKEN: TOKEN, ALICE_PASSWORD: ALICE, BOB_PASSWORD: BOB, ...env } });
}

const writes = () => emu.requests().filter((r) => r.method !== 'GET');
const idOf = (name: string) => emu.state().apikeys.find((k) => k.name === name)?.id;
const userId = (name: string) => emu.state().sshUsers.find((u) => u.username === name)!.id;

interface JsonResult {
  kind: string;
  key: string;
  action: string;
  status: string;
  id?: number | null;
  replaces?: number;
  replacedBy?: number;
  error?: string;
}

const passwordMatches = (username: string, password: string): Promise<boolean> => checkPassword(emu.url, username, password);

describe('--only / --exclude', () => {
  it('--only apikey:ci-* with prune on changes only the ci keys: what it reports is what the service received', async () => {
    emu.seed(seed);
    const ids = { build: idOf('ci-build')!, deploy: idOf('ci-deploy')!, old: idOf('ci-old')! };
    emu.clearRequests();
    const run = await amsync(['sync', '--only', 'apikey:ci-*', '--json']);
    expect(run.code, run.stderr).toBe(0);
    const doc = JSON.parse(run.stdout) as { changes: { kind: string; action: string; key: string; id: number }[]; results: JsonResult[]; selection: unknown; summary: Record<string, number> };
    expect(doc.selection).toEqual({ only: ['apikey:ci-*'], exclude: [], omitted: { declared: 3, remote: 5 } });
    expect(doc.changes.map((c) => `${c.action} ${c.key}`)).toEqual(['update ci-build', 'update ci-deploy', 'delete ci-old']);
    // The emulator's log: exactly these three writes, nothing to alice, bob, stray, billing or manual.
    expect(writes().map((r) => `${r.method} ${r.path}`).sort()).toEqual(
      [`PUT /api/3rdparty/apikeys/${ids.build}`, `PUT /api/3rdparty/apikeys/${ids.deploy}`, `DELETE /api/3rdparty/apikeys/${ids.old}`].sort(),
    );
    expect(doc.results.every((r) => r.status === 'applied')).toBe(true);
    const state = emu.state();
    expect(state.apikeys.map((k) => k.name).sort()).toEqual(['billing', 'ci-build', 'ci-deploy', 'manual']);
    expect(state.apikeys.find((k) => k.name === 'billing')!.roles.map((r) => r.id)).toEqual([3]);
    expect(state.sshUsers.map((u) => u.username).sort()).toEqual(['alice', 'bob', 'stray']);
  });

  it('says the plan is partial in text and Markdown; --exclude leaves an item out; a saved partial plan is applied as planned', async () => {
    emu.seed(seed);
    const text = await amsync(['plan', '--only', 'apikey:ci-*', '--exclude', 'apikey:ci-old']);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain('Partial plan (--only apikey:ci-* --exclude apikey:ci-old): 3 declared and 6 remote items were left out');
    expect(text.stdout).not.toContain('# apikey "ci-old"');
    expect(text.stdout).toContain('Plan: 0 to create, 2 to update, 0 to delete, 0 unchanged, 0 unmanaged.');
    const md = await amsync(['plan', '--only', 'apikey:ci-*', '--format', 'markdown']);
    expect(md.stdout).toContain('Partial plan (--only apikey:ci-\\*)');

    emu.clearRequests();
    const planned = await amsync(['plan', '--only', 'apikey:ci-*', '--exclude', 'apikey:ci-old', '--out', 'plan.json']);
    expect(planned.code, planned.stderr).toBe(0);
    const saved = JSON.parse(await readFile(join(dir, 'plan.json'), 'utf8')) as { settings: { selection: unknown }; plan: { selection: unknown } };
    expect(saved.settings.selection).toEqual({ only: ['apikey:ci-*'], exclude: ['apikey:ci-old'], replace: [] });
    expect(saved.plan.selection).toEqual({ only: ['apikey:ci-*'], exclude: ['apikey:ci-old'], omitted: { declared: 3, remote: 6 } });
    const applied = await amsync(['apply', 'plan.json', '--json']);
    expect(applied.code, applied.stderr).toBe(0);
    expect(writes().map((r) => r.method)).toEqual(['PUT', 'PUT']);
    expect(idOf('ci-old')).toBeDefined();
  });

  it('apply refuses a saved plan whose changes lie outside its recorded selection (edited), before any write', async () => {
    emu.seed(seed);
    expect((await amsync(['plan', '--only', 'apikey:ci-*', '--out', 'plan.json'])).code).toBe(0);
    const path = join(dir, 'plan.json');
    const saved = JSON.parse(await readFile(path, 'utf8')) as { settings: { selection: { only: string[] } } };
    saved.settings.selection.only = ['apikey:ci-build'];
    await writeFile(path, JSON.stringify(saved));
    emu.clearRequests();
    const applied = await amsync(['apply', 'plan.json']);
    expect(applied.code).toBe(3);
    expect(applied.stderr).toContain('it changes apikey "ci-deploy", which its selection (--only apikey:ci-build) leaves out');
    expect(writes()).toEqual([]);
  });

  it('an address that matches nothing is exit 64 naming it; a malformed one is exit 64 naming the flag; nothing is written', async () => {
    emu.seed(seed);
    emu.clearRequests();
    const none = await amsync(['sync', '--only', 'apikey:nope-*']);
    expect(none.code).toBe(64);
    expect(none.stderr).toContain('--only apikey:nope-* matches no declared and no remote item');
    const byId = await amsync(['plan', '--exclude', 'sshUser#999']);
    expect(byId.code).toBe(64);
    expect(byId.stderr).toContain('--exclude sshUser#999 matches no declared and no remote item');
    const bad = await amsync(['sync', '--only', 'user:alice']);
    expect(bad.code).toBe(64);
    expect(bad.stderr).toContain('`--only`');
    expect(bad.stderr).toContain('KIND sshUser or apikey');
    expect(writes()).toEqual([]);
    // The malformed flag is refused before any request at all.
    const before = emu.requests().length;
    expect((await amsync(['plan', '--exclude', 'apikey#0'])).code).toBe(64);
    expect(emu.requests().length).toBe(before);
  });
});

describe('--replace', () => {
  it('--replace sshUser:alice sends exactly one PUT, with her declared password', async () => {
    await writeFile(join(dir, 'access.yaml'), accessFile.replace(/prune:[\s\S]*$/, ''));
    emu.seed({ sshUsers: [{ username: 'alice', level: 'n1', password: 'old-a' }, { username: 'bob', level: 'n1', password: 'old-b' }], apikeys: [{ name: 'ci-build', roles: [1] }, { name: 'ci-deploy' }, { name: 'billing', roles: [2] }] });
    const before = emu.state().sshUsers.find((u) => u.username === 'alice')!.passwordVersion;
    emu.clearRequests();
    const run = await amsync(['sync', '--replace', 'sshUser:alice', '--json']);
    expect(run.code, run.stderr).toBe(0);
    expect(writes().map((r) => `${r.method} ${r.path}`)).toEqual([`PUT /api/sshusers/${userId('alice')}`]);
    expect(emu.state().sshUsers.find((u) => u.username === 'alice')!.passwordVersion).toBe(before + 1);
    expect(await passwordMatches('alice', ALICE)).toBe(true);
    expect(await passwordMatches('bob', 'old-b')).toBe(true);
    const doc = JSON.parse(run.stdout) as { changes: { key: string; fields: Record<string, unknown>; reason: string }[] };
    expect(doc.changes).toEqual([expect.objectContaining({ key: 'alice', fields: { password: { before: '(sensitive)', after: '(sensitive)' } } })]);
    expect(run.stdout + run.stderr).not.toContain('CANARY-password');
  });

  it('--replace apikey:X creates the successor, writes its token, then deletes the old key (verified); both ids in the results', async () => {
    emu.seed({ apikeys: [{ name: 'ci-build', roles: [1] }, { name: 'ci-deploy' }, { name: 'billing', roles: [2] }] });
    await writeFile(join(dir, 'access.yaml'), 'apikeys:\n  - name: ci-build\n    roles: [1]\n  - name: ci-deploy\n  - name: billing\n    roles: [2]\n');
    const old = idOf('ci-build')!;
    const oldToken = emu.state().apikeys.find((k) => k.id === old)!.token;
    const plan = await amsync(['plan', '--replace', 'apikey:ci-build', '--tokens-dir', 'tokens']);
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toContain(`-/+ apikey "ci-build"`);
    expect(plan.stdout).toContain('Plan: 1 to create, 0 to update, 1 to delete');

    emu.clearRequests();
    const run = await amsync(['sync', '--replace', 'apikey:ci-build', '--tokens-dir', 'tokens', '--json']);
    expect(run.code, run.stderr).toBe(0);
    const successor = emu.state().apikeys.find((k) => k.name === 'ci-build')!;
    expect(successor.id).not.toBe(old);
    expect(emu.state().apikeys.filter((k) => k.name === 'ci-build')).toHaveLength(1);
    // The log: the create, then the verified delete's GET by id, then the DELETE.
    const log = emu.requests().filter((r) => r.path.startsWith('/api/3rdparty/apikeys') && !(r.method === 'GET' && r.query.cursor !== undefined));
    expect(log.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /api/3rdparty/apikeys', `GET /api/3rdparty/apikeys/${old}`, `DELETE /api/3rdparty/apikeys/${old}`]);
    expect(await readFile(join(dir, 'tokens', 'ci-build'), 'utf8')).toBe(successor.token);
    expect(successor.token).not.toBe(oldToken);
    const doc = JSON.parse(run.stdout) as { results: JsonResult[]; changes: { action: string; replaces?: number; replaced?: boolean }[] };
    expect(doc.changes).toEqual([expect.objectContaining({ action: 'create', replaces: old }), expect.objectContaining({ action: 'delete', replaced: true })]);
    expect(doc.results).toEqual([
      { kind: 'apikey', key: 'ci-build', action: 'create', status: 'applied', id: successor.id, replaces: old },
      { kind: 'apikey', key: 'ci-build', action: 'delete', status: 'applied', id: old, replacedBy: successor.id },
    ]);
    expect(run.stdout + run.stderr).not.toContain(successor.token);
    // Converged: the next run changes nothing.
    emu.clearRequests();
    const again = await amsync(['sync', '--tokens-dir', 'tokens']);
    expect(again.code).toBe(0);
    expect(writes()).toEqual([]);
  });

  it('a token that cannot be written keeps the old key: no DELETE is sent, the run fails', async () => {
    emu.seed({ apikeys: [{ name: 'ci-build', roles: [1] }] });
    await writeFile(join(dir, 'access.yaml'), 'apikeys:\n  - name: ci-build\n    roles: [1]\n');
    const old = idOf('ci-build')!;
    // A folder where the token file goes: the sink cannot write it.
    await mkdir(join(dir, 'tokens', 'ci-build'), { recursive: true });
    emu.clearRequests();
    const run = await amsync(['sync', '--replace', 'apikey:ci-build', '--tokens-dir', 'tokens', '--json']);
    expect(run.code).toBe(1);
    expect(writes().map((r) => r.method)).toEqual(['POST']);
    expect(emu.state().apikeys.some((k) => k.id === old)).toBe(true);
    const doc = JSON.parse(run.stdout) as { results: JsonResult[] };
    const successor = emu.state().apikeys.find((k) => k.id !== old)!;
    expect(doc.results[0]).toMatchObject({ action: 'create', status: 'applied', id: successor.id, replaces: old });
    expect(doc.results[1]).toMatchObject({ action: 'delete', status: 'skipped', id: old, replacedBy: successor.id });
    expect(doc.results[1]!.error).toContain("its successor's token was not written");
  });

  it('a create that fails keeps the old key', async () => {
    emu.seed({ apikeys: [{ name: 'ci-build', roles: [1] }] });
    await writeFile(join(dir, 'access.yaml'), 'apikeys:\n  - name: ci-build\n    roles: [1]\n');
    const old = idOf('ci-build')!;
    emu.setFaults({ rules: [{ method: 'POST', path: '^/api/3rdparty/apikeys$', status: 400 }], maintenance: false });
    emu.clearRequests();
    const run = await amsync(['sync', '--replace', 'apikey:ci-build', '--tokens-dir', 'tokens']);
    expect(run.code).toBe(1);
    expect(writes().map((r) => r.method)).toEqual(['POST']);
    expect(emu.state().apikeys.map((k) => k.id)).toEqual([old]);
  });

  it('refuses, exit 64 and nothing written: an undeclared item, an `ensure: absent` one, an apikey without a token sink', async () => {
    emu.seed(seed);
    await writeFile(join(dir, 'access.yaml'), `${accessFile.replace(/prune:[\s\S]*$/, '')}  - name: gone\n    ensure: absent\n`);
    emu.clearRequests();
    const undeclared = await amsync(['sync', '--replace', 'apikey:manual', '--tokens-dir', 'tokens']);
    expect(undeclared.code).toBe(64);
    expect(undeclared.stderr).toContain('--replace apikey:manual names no item the file declares');
    const absent = await amsync(['sync', '--replace', 'apikey:gone', '--tokens-dir', 'tokens']);
    expect(absent.code).toBe(64);
    expect(absent.stderr).toContain('is declared `ensure: absent`');
    const before = emu.requests().length;
    const noSink = await amsync(['sync', '--replace', 'apikey:billing']);
    expect(noSink.code).toBe(64);
    expect(noSink.stderr).toContain('needs a token sink');
    expect(emu.requests().length).toBe(before);
    expect(writes()).toEqual([]);
  });
});
