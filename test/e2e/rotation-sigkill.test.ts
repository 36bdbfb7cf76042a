import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/index.js';
import { emulatorPerTest } from '../helpers/emulator-per-test.js';
import { runInProcess } from '../helpers/in-process.js';
import { assertBuilt, spawnAmsync, type AmsyncRun } from '../helpers/spawn.js';

// issue 30, "Done when": a rotation interrupted by SIGKILL converges on the next run with no
// duplicate and no lost key. The built CLI runs as a child process; the emulator (in this
// process) holds one of its requests (a `hold` fault rule) and the test kills the child while
// it is held: at a known point of the run, with no timer to race.

const TOKEN = 'CANARY-bearer-rotkill-5e1d';
const KEYS = '/api/3rdparty/apikeys';

let emu: RunningEmulator;
let dir: string;

emulatorPerTest(TOKEN, 'amsync-rotkill-', (e, d) => {
  emu = e;
  dir = d;
});

const env = () => ({ AMSYNC_URL: emu.url, AMSYNC_TOKEN: TOKEN, AMSYNC_STATE_KEY: 'rotkill-state-key' });
const args = ['sync', '--tokens-dir', 'tokens', '--audit-log', 'audit.jsonl'];
const keys = () => emu.state().apikeys.filter((k) => k.name === 'ci-build');
const sinkToken = () => readFile(join(dir, 'tokens', 'ci-build'), 'utf8');
const statePath = () => join(dir, '.amsync', 'state.json');
const serviceState = async () => Object.values<Record<string, Record<string, unknown> | undefined>>(JSON.parse(await readFile(statePath(), 'utf8')).services)[0]!;
const keyLog = () => emu.requests().filter((r) => r.path.startsWith(KEYS) && r.path !== KEYS);

beforeEach(async () => {
  await writeFile(join(dir, 'access.yaml'), 'apikeys:\n  - name: ci-build\n    roles: [1]\n    rotate: { every: 90d }\n');
});

/** The key created by a first sync, then made 100 days old in the state file: its rotation is due. */
async function dueKey(): Promise<{ id: number; token: string }> {
  const first = await runInProcess(args, { cwd: dir, env: env() });
  expect(first.code, first.stderr).toBe(0);
  const [key] = keys();
  const doc = JSON.parse(await readFile(statePath(), 'utf8'));
  const service = Object.values<{ createdAt: Record<string, string> }>(doc.services)[0]!;
  service.createdAt[`apikey:${key!.id}`] = new Date(Date.now() - 100 * 86_400_000).toISOString();
  await writeFile(statePath(), JSON.stringify(doc));
  expect(await sinkToken()).toBe(key!.token);
  return { id: key!.id, token: key!.token };
}

/** `amsync sync` as a child process, SIGKILLed once the emulator holds the request the rule names. */
async function killedWhileHeld(rule: { method: string; path: string; hold: 'before' | 'after' }, atHold: () => Promise<void>): Promise<AmsyncRun> {
  assertBuilt();
  emu.setFaults({ rules: [{ ...rule, times: 1, label: 'held' }] });
  let killed = false;
  const held = emu.whenHeld().then(async () => {
    try {
      await atHold();
    } finally {
      killed = true;
    }
  });
  const run = await spawnAmsync(args, {
    cwd: dir,
    env: env(),
    poll: (child) => {
      if (killed && !child.killed) child.kill('SIGKILL');
    },
  });
  await held;
  // The request goes on once released (a POST held before it was performed is performed now).
  emu.releaseHeld();
  emu.setFaults({ rules: [] });
  await waitIdle();
  expect(run.signals, run.stdout + run.stderr).toEqual(['SIGKILL']);
  expect(run.killed).toBe(true);
  return run;
}

async function waitIdle(): Promise<void> {
  while (emu.inFlight() > 0) await new Promise((resolve) => setImmediate(resolve));
}

/** The next run, in-process: converged, one key, its token in the sink; then a run with no write. */
async function convergesWith(old: { id: number; token: string }, expectedKeyLog: (successor: number) => string[], recordMayBeSaved = false): Promise<void> {
  const twins = keys();
  expect(twins).toHaveLength(2);
  const successor = twins.find((k) => k.id !== old.id)!;
  emu.clearRequests();
  const next = await runInProcess(args, { cwd: dir, env: env() });
  expect(next.code, next.stdout + next.stderr).toBe(0);
  const recovered = `apikey "ci-build": id ${successor.id} is the successor of id ${old.id} that an interrupted run created`;
  // Killed after the token was written, the child may or may not have saved the rotation's record
  // before its delete began (records are saved as results are known): recovered from the intent,
  // or continued from the record; either way the same requests follow.
  if (recordMayBeSaved) expect(next.stdout).toMatch(new RegExp(`${escapeRegExp(recovered)}|apikey "ci-build" \\(id ${old.id}\\) will be deleted \\(rotated\\)`));
  else expect(next.stdout).toContain(recovered);
  // No duplicate: no new key, the killed run's successor kept, its predecessor deleted (verified).
  expect(emu.requests().filter((r) => r.method === 'POST')).toEqual([]);
  expect(keyLog().map((r) => `${r.method} ${r.path}`)).toEqual(expectedKeyLog(successor.id));
  expect(keys().map((k) => k.id)).toEqual([successor.id]);
  // No lost key: the sink holds the token of the one key that exists.
  expect(await sinkToken()).toBe(successor.token);
  expect(next.stdout + next.stderr).not.toContain(successor.token);
  const state = await serviceState();
  expect(state.rotationIntents).toBeUndefined();
  expect(state.rotating).toBeUndefined();
  // Converged: the successor's age counts from its create; nothing is due.
  emu.clearRequests();
  const again = await runInProcess(args, { cwd: dir, env: env() });
  expect(again.code, again.stderr).toBe(0);
  expect(emu.requests().filter((r) => r.method !== 'GET')).toEqual([]);
}

const retire = (old: number) => () => [`GET ${KEYS}/${old}`, `DELETE ${KEYS}/${old}`];

describe('a rotation killed by SIGKILL converges on the next run (issue 30)', () => {
  it('killed after its POST was performed, before the answer came (the token never reached the sink)', async () => {
    const old = await dueKey();
    await killedWhileHeld({ method: 'POST', path: `^${KEYS}$`, hold: 'after' }, async () => {
      // The start of the rotation was on disk before the POST was sent.
      expect((await serviceState()).rotationIntents).toEqual({ [old.id]: { name: 'ci-build', startedAt: expect.any(String) } });
      expect(keys()).toHaveLength(2);
    });
    // The sink still holds the predecessor's token, and the predecessor still exists.
    expect(await sinkToken()).toBe(old.token);
    await convergesWith(old, retire(old.id));
  });

  it('killed while its POST was held before it was performed (the create lands after the client died)', async () => {
    const old = await dueKey();
    await killedWhileHeld({ method: 'POST', path: `^${KEYS}$`, hold: 'before' }, async () => {
      expect((await serviceState()).rotationIntents).toHaveProperty(String(old.id));
      expect(keys()).toHaveLength(1);
    });
    expect(await sinkToken()).toBe(old.token);
    await convergesWith(old, retire(old.id));
  });

  it('killed after its POST, then a second key of the name made by hand: no twin is adopted, the reason is in the plan, nothing deleted', async () => {
    const old = await dueKey();
    await killedWhileHeld({ method: 'POST', path: `^${KEYS}$`, hold: 'after' }, async () => {
      expect(keys()).toHaveLength(2);
    });
    const res = await fetch(`${emu.url}${KEYS}`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'ci-build', roles: [1] }) });
    expect(res.status).toBeLessThan(300);
    emu.clearRequests();
    const next = await runInProcess(args, { cwd: dir, env: env() });
    expect(next.code).toBe(1);
    expect(next.stdout).toContain(`apikey "ci-build": the successor of id ${old.id} is not known (2 twins)`);
    expect(emu.requests().filter((r) => r.method !== 'GET')).toEqual([]);
    expect(keys()).toHaveLength(3);
    expect(await sinkToken()).toBe(old.token);
  });

  it("killed after the successor's token was written, before the predecessor's delete", async () => {
    const old = await dueKey();
    await killedWhileHeld({ method: 'GET', path: `^${KEYS}/${old.id}$`, hold: 'before' }, async () => {
      const successor = keys().find((k) => k.id !== old.id)!;
      expect(await sinkToken()).toBe(successor.token);
    });
    await convergesWith(old, retire(old.id), true);
  });
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
