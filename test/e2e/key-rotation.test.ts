import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/index.js';
import { emulatorPerTest } from '../helpers/emulator-per-test.js';
import { call } from '../helpers/emulator-client.js';
import { runInProcess, type InProcessRun as CliRun } from '../helpers/in-process.js';

// issue 30, item 3 (apikeys): `rotate: {every, overlap}` against the emulator's request log,
// on a moved clock: the successor's token is in the sink before the predecessor is deleted.

const TOKEN = 'CANARY-bearer-keyrot-81c4';

let emu: RunningEmulator;
let dir: string;

emulatorPerTest(TOKEN, 'amsync-keyrot-', (e, d) => {
  emu = e;
  dir = d;
});
beforeEach(async () => {
  await writeFile(join(dir, 'access.yaml'), 'apikeys:\n  - name: ci-build\n    roles: [1]\n    rotate: { every: 90d, overlap: 24h }\n');
});
afterEach(() => {
  vi.useRealTimers();
});

async function amsync(args: string[]): Promise<CliRun> {
  return runInProcess(args, { cwd: dir, env: { AMSYNC_URL: emu.url, AMSYNC_TOKEN: TOKEN } });
}

const sync = () => amsync(['sync', '--tokens-dir', 'tokens', '--audit-log', 'audit.jsonl']);
const writes = () => emu.requests().filter((r) => r.method !== 'GET');
const keyLog = () => emu.requests().filter((r) => r.path.startsWith('/api/3rdparty/apikeys') && !(r.method === 'GET' && (r.query.cursor !== undefined || r.path === '/api/3rdparty/apikeys')));
const keys = () => emu.state().apikeys.filter((k) => k.name === 'ci-build');
const sinkToken = () => readFile(join(dir, 'tokens', 'ci-build'), 'utf8');

/** A sync whose only requests to keys are the verified delete of `id` (GET by id, then DELETE), and exits 0. */
async function expectRetires(id: number): Promise<void> {
  emu.clearRequests();
  const retired = await sync();
  expect(retired.code, retired.stdout + retired.stderr).toBe(0);
  expect(keyLog().map((r) => `${r.method} ${r.path}`)).toEqual([`GET /api/3rdparty/apikeys/${id}`, `DELETE /api/3rdparty/apikeys/${id}`]);
}

describe('apikey rotation with an overlap (issue 30, item 3), on a moved clock', () => {
  it('a successor whose token is in the sink before the predecessor is deleted; then converged', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-01-01T00:00:00Z'));
    const created = await sync();
    expect(created.code, created.stderr).toBe(0);
    const [first] = keys();
    expect(await sinkToken()).toBe(first!.token);

    // 89 days on: not due.
    vi.setSystemTime(new Date('2026-03-31T00:00:00Z'));
    emu.clearRequests();
    expect((await sync()).code).toBe(0);
    expect(writes()).toEqual([]);

    // 90 days on: a successor (same name and roles), its token in the sink; the old key still valid.
    vi.setSystemTime(new Date('2026-04-01T00:00:01Z'));
    const plan = await amsync(['plan', '--tokens-dir', 'tokens']);
    expect(plan.stdout).toContain(`rotation: token created 90d ago, rotated every 90d; replaces id ${first!.id}`);
    emu.clearRequests();
    const rotated = await sync();
    expect(rotated.code, rotated.stderr).toBe(0);
    expect(keyLog().map((r) => r.method)).toEqual(['POST']);
    expect(keys().map((k) => k.id)).toEqual([first!.id, expect.any(Number)]);
    const successor = keys().find((k) => k.id !== first!.id)!;
    expect(successor.roles).toEqual(first!.roles);
    expect(await sinkToken()).toBe(successor.token);
    expect(rotated.stdout + rotated.stderr).not.toContain(successor.token);

    // During the overlap: two keys of one name are one rotating key: no ambiguity, no write.
    vi.setSystemTime(new Date('2026-04-01T12:00:00Z'));
    emu.clearRequests();
    const during = await sync();
    expect(during.code, during.stderr).toBe(0);
    expect(writes()).toEqual([]);
    expect(keys()).toHaveLength(2);

    // The overlap passed: the predecessor's verified delete (GET by id, then DELETE).
    vi.setSystemTime(new Date('2026-04-02T00:00:02Z'));
    await expectRetires(first!.id);
    expect(keys().map((k) => k.id)).toEqual([successor.id]);
    expect(await sinkToken()).toBe(successor.token);
    const audit = await readFile(join(dir, 'audit.jsonl'), 'utf8');
    expect(audit).toContain('"reason":"rotation"');
    expect(audit).toContain('"reason":"rotated"');
    expect(audit).not.toContain(successor.token);

    // Converged: the next run makes no write (the successor's age counts from its create).
    emu.clearRequests();
    expect((await sync()).code).toBe(0);
    expect(writes()).toEqual([]);
  });

  it('a rotation that ends during its overlap shows its predecessor: `rotate:` removed deletes it now; `ensure: absent` deletes both (report against the request log)', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const file = (extra: string) => writeFile(join(dir, 'access.yaml'), `apikeys:\n  - name: ci-build\n    roles: [1]\n${extra}`);
    const deleted = () => emu.requests().filter((r) => r.method === 'DELETE').map((r) => Number(r.path.split('/').pop()));
    // The deletes the report shows (ids) and their results, in the plan's order.
    const reported = (run: CliRun) => {
      const doc = JSON.parse(run.stdout) as { changes: { action: string; id: number }[]; results: { action: string; status: string }[] };
      const results = doc.results.filter((r) => r.action === 'delete');
      return doc.changes.filter((c) => c.action === 'delete').map((c, i) => [c.id, results[i]?.status]);
    };
    const rotateAt = async (at: string) => {
      vi.setSystemTime(new Date(at));
      expect((await sync()).code).toBe(0);
      expect(keys()).toHaveLength(2);
      return keys().map((k) => k.id);
    };
    vi.setSystemTime(new Date('2026-01-01T00:00:00Z'));
    expect((await sync()).code).toBe(0);
    const [first, second] = await rotateAt('2026-04-01T00:00:01Z');

    // `rotate:` removed during the overlap: the successor stays the key, the predecessor is in the plan and deleted now.
    await file('');
    vi.setSystemTime(new Date('2026-04-01T01:00:00Z'));
    emu.clearRequests();
    const shown = await amsync(['plan', '--tokens-dir', 'tokens', '--json']);
    expect(writes()).toEqual([]);
    expect((JSON.parse(shown.stdout) as { changes: { action: string; id: number }[] }).changes.map((c) => [c.action, c.id])).toEqual([['delete', first]]);
    const ended = await amsync(['sync', '--tokens-dir', 'tokens', '--json']);
    expect(ended.code, ended.stderr).toBe(0);
    expect(deleted()).toEqual([first]);
    expect(reported(ended)).toEqual([[first, 'applied']]);
    expect(keys().map((k) => k.id)).toEqual([second]);
    expect(await sinkToken()).toBe(keys()[0]!.token);

    // Rotating again, then `ensure: absent` during the overlap: both keys are deleted, and both are in the report.
    await file('    rotate: { every: 90d, overlap: 24h }\n');
    const [, third] = await rotateAt('2026-07-01T00:00:01Z');
    await file('    ensure: absent\n');
    emu.clearRequests();
    const gone = await amsync(['sync', '--tokens-dir', 'tokens', '--json']);
    expect(gone.code, gone.stderr).toBe(0);
    expect(deleted().sort((a, b) => a - b)).toEqual([second, third]);
    expect(reported(gone)).toEqual([
      [second, 'applied'],
      [third, 'applied'],
    ]);
    expect(keys()).toEqual([]);
  });

  it('a service that hands a deleted key\'s id to a new key (here: wiped, ids from 1 again): a rotation record of ids no longer listed is forgotten, so a key made by hand under that id is no successor and nothing is deleted (request log)', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-01-01T00:00:00Z'));
    expect((await sync()).code).toBe(0);
    vi.setSystemTime(new Date('2026-04-01T00:00:01Z'));
    expect((await sync()).code).toBe(0);
    expect(keys().map((k) => k.id)).toEqual([1, 2]);
    // The service loses both keys (restored, wiped); the state file still says 2 succeeds 1.
    expect((await call(emu.url, 'POST', '/_emulator/reset', { token: null })).status).toBeLessThan(300);
    vi.setSystemTime(new Date('2026-04-03T00:00:00Z'));
    const recreated = await sync();
    expect(recreated.code, recreated.stderr).toBe(0);
    const [own] = keys();
    expect(own!.id).toBe(1);
    expect(await sinkToken()).toBe(own!.token);
    // Someone makes a key of the name by hand: the service gives it id 2.
    expect((await call(emu.url, 'POST', '/api/3rdparty/apikeys', { token: TOKEN, body: { name: 'ci-build', roles: [1], superuser: false } })).status).toBe(200);
    expect(keys().map((k) => k.id)).toEqual([1, 2]);
    vi.setSystemTime(new Date('2026-04-04T00:00:00Z'));
    emu.clearRequests();
    const after = await amsync(['sync', '--tokens-dir', 'tokens', '--json']);
    // Two keys of the name and no rotation between them: reported, nothing deleted, the sink keeps amsync's key.
    expect(emu.requests().filter((r) => r.method === 'DELETE')).toEqual([]);
    const doc = JSON.parse(after.stdout) as { changes: unknown[]; problems: { key: string; code: string }[] };
    expect(doc.changes).toEqual([]);
    expect(doc.problems.map((p) => [p.key, p.code])).toEqual([['ci-build', 'ambiguous']]);
    expect(keys().map((k) => k.id)).toEqual([1, 2]);
    expect(await sinkToken()).toBe(own!.token);
  });

  it("an interrupted rotation's twin: plan and sync --dry-run write neither the token sink nor the state file; a refused sync adopts it with no request and says so; the next sync deletes the predecessor", async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-01-01T00:00:00Z'));
    await writeFile(join(dir, 'access.yaml'), 'apikeys:\n  - name: ci-build\n    roles: [1]\n    rotate: { every: 90d }\n');
    expect((await sync()).code).toBe(0);
    const [first] = keys();
    // What a run killed after its successor's POST leaves: the twin on the service, the intent in the state file.
    vi.setSystemTime(new Date('2026-04-01T00:00:01Z'));
    expect((await call(emu.url, 'POST', '/api/3rdparty/apikeys', { token: TOKEN, body: { name: 'ci-build', roles: [1], superuser: false } })).status).toBe(200);
    const twin = keys().find((k) => k.id !== first!.id)!;
    const statePath = join(dir, '.amsync', 'state.json');
    const doc = JSON.parse(await readFile(statePath, 'utf8')) as { services: Record<string, Record<string, unknown>> };
    Object.values(doc.services)[0]!.rotationIntents = { [first!.id]: { name: 'ci-build', startedAt: new Date().toISOString() } };
    await writeFile(statePath, JSON.stringify(doc, null, 2));
    const stateBytes = await readFile(statePath, 'utf8');
    const adopted = `apikey "ci-build": id ${twin.id} is the successor of id ${first!.id} that an interrupted run created; its token`;

    for (const args of [['plan'], ['sync', '--dry-run']]) {
      emu.clearRequests();
      const dry = await amsync([...args, '--tokens-dir', 'tokens', '--json']);
      expect(dry.code, dry.stderr).toBe(0);
      const report = JSON.parse(dry.stdout) as { changes: { action: string; id: number }[]; notes: string[] };
      expect(report.changes.map((c) => [c.action, c.id])).toEqual([['delete', first!.id]]);
      expect(report.notes).toContainEqual(expect.stringContaining(`${adopted} is written to`));
      expect(writes()).toEqual([]);
      expect(await sinkToken(), args.join(' ')).toBe(first!.token);
      expect(await readFile(statePath, 'utf8'), args.join(' ')).toBe(stateBytes);
    }

    // Refused by the deletion budget: the twin is adopted (its token in the sink, the pair recorded), no request is sent.
    emu.clearRequests();
    const refused = await amsync(['sync', '--tokens-dir', 'tokens', '--max-deletes', '0', '--json']);
    expect(refused.code).toBe(3);
    expect((JSON.parse(refused.stdout) as { notes: string[] }).notes).toContainEqual(expect.stringContaining(`${adopted} was written to`));
    expect(writes()).toEqual([]);
    expect(await sinkToken()).toBe(twin.token);
    expect(refused.stdout + refused.stderr).not.toContain(twin.token);

    await expectRetires(first!.id);
    expect(keys().map((k) => k.id)).toEqual([twin.id]);
    expect(await sinkToken()).toBe(twin.token);
  });

  it('`amsync rotate` during an overlap: each predecessor is deleted once its own overlap has passed, the sink keeps the newest token', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-01-01T00:00:00Z'));
    expect((await sync()).code).toBe(0);
    const [first] = keys();
    vi.setSystemTime(new Date('2026-04-01T00:00:01Z'));
    expect((await sync()).code).toBe(0);
    const second = keys().find((k) => k.id !== first!.id)!;
    vi.setSystemTime(new Date('2026-04-01T12:00:00Z'));
    const again = await amsync(['rotate', 'apikey:ci-build', '--tokens-dir', 'tokens']);
    expect(again.code, again.stderr).toBe(0);
    // It rotated the successor (it used to find two keys of the name and say "No changes").
    expect(again.stdout).toContain(`will be rotated (rotation: requested now; replaces id ${second.id})`);
    const third = keys().find((k) => k.id !== first!.id && k.id !== second.id)!;
    expect(await sinkToken()).toBe(third.token);

    // The first overlap has passed, the second has not: the first key goes (it was hidden for good before).
    vi.setSystemTime(new Date('2026-04-02T00:00:02Z'));
    await expectRetires(first!.id);

    vi.setSystemTime(new Date('2026-04-02T12:00:01Z'));
    await expectRetires(second.id);
    expect(keys().map((k) => k.id)).toEqual([third.id]);
    expect(await sinkToken()).toBe(third.token);
    emu.clearRequests();
    expect((await sync()).code).toBe(0);
    expect(writes()).toEqual([]);
  });
});
