import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ActualApikey, ActualState, SecretValue } from '../../../src/model/index.js';
import { openPasswordState, type PasswordState, type SecretSink } from '../../../src/secrets/index.js';
import { adoptInterruptedSuccessors } from '../../../src/sync/interrupted-rotations.js';
import { runSync } from '../../../src/sync/run-sync.js';
import { desired as desiredOf, key as declared } from '../../helpers/plan-fixtures.js';
import { StoreService } from '../../helpers/store-service.js';

// A successor's create that a killed run began (the state file's rotationIntents): the next
// run takes the twin as the successor, writes its listed token first, and records the pair.

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'amsync-interrupted-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const NOW = Date.UTC(2026, 3, 1);
const STARTED = NOW - 60_000;
const key = (id: number, name = 'ci'): ActualApikey => ({ id, name, superuser: false, roles: [1] }) as unknown as ActualApikey;
const actualOf = (...apikeys: ActualApikey[]): ActualState => ({ sshUsers: [], apikeys }) as unknown as ActualState;
const token = (t: string): SecretValue => ({ reveal: () => t });

function sink(fail = false): SecretSink & { writes: [string, string][] } {
  const writes: [string, string][] = [];
  return {
    writes,
    describe: 'test sink',
    write: async (name, secret) => {
      if (fail) throw new Error('read-only sink');
      writes.push([name, secret.reveal()]);
      return true;
    },
    keepCurrent: async () => ({ written: 0, errors: [] }),
    nameProblem: () => undefined,
  };
}

async function stateWithIntent(): Promise<PasswordState> {
  const state = await openPasswordState({ path: join(dir, 'state.json'), serviceUrl: 'http://a', keyFromEnv: 'k' });
  state.recordRotationIntent!(5, { name: 'ci', startedAt: STARTED });
  await state.save();
  return openPasswordState({ path: join(dir, 'state.json'), serviceUrl: 'http://a', keyFromEnv: 'k' });
}

const onDisk = async () => JSON.parse(await readFile(join(dir, 'state.json'), 'utf8')).services['http://a'];

describe('adoptInterruptedSuccessors', () => {
  it('takes the one twin as the successor: its token to the sink first, then the pair recorded (overlap from now), the intent forgotten', async () => {
    const state = await stateWithIntent();
    const s = sink();
    const out = await adoptInterruptedSuccessors(actualOf(key(5), key(9)), new Map([[9, token('tok-9')]]), state, s, NOW, false);
    expect(s.writes).toEqual([['ci', 'tok-9']]);
    expect([...out.adopted]).toEqual([[5, { successor: 9, since: NOW }]]);
    const saved = await onDisk();
    expect(saved.rotating).toEqual({ '5': { successor: 9, since: new Date(NOW).toISOString() } });
    expect(saved.rotationIntents).toBeUndefined();
    expect(saved.createdAt).toEqual({ 'apikey:9': new Date(STARTED).toISOString() });
  });

  it('a token the killed run had written already (the write changes nothing): the note says it was already there, not that it was written', async () => {
    const state = await stateWithIntent();
    const unchanged: SecretSink = { ...sink(), write: async () => false };
    const out = await adoptInterruptedSuccessors(actualOf(key(5), key(9)), new Map([[9, token('tok-9')]]), state, unchanged, NOW, false);
    expect(out.written).toBe(0);
    expect(out.notes).toEqual(['apikey "ci": id 9 is the successor of id 5 that an interrupted run created; its token was already in test sink, and the rotation goes on from there.']);
    expect((await onDisk()).rotating).toEqual({ '5': { successor: 9, since: new Date(NOW).toISOString() } });
  });

  it('a dry-run decides the same in memory and writes nothing', async () => {
    const state = await stateWithIntent();
    const s = sink();
    const out = await adoptInterruptedSuccessors(actualOf(key(5), key(9)), new Map([[9, token('tok-9')]]), state, s, NOW, true);
    expect([...out.adopted]).toEqual([[5, { successor: 9, since: NOW }]]);
    expect(s.writes).toEqual([]);
    expect((await onDisk()).rotationIntents).toHaveProperty('5');
    expect(state.dirty).toBe(false);
  });

  it('no twin (the POST never took effect) or no predecessor: the intent is forgotten, nothing adopted', async () => {
    for (const actual of [actualOf(key(5)), actualOf(key(9))]) {
      const state = await stateWithIntent();
      const out = await adoptInterruptedSuccessors(actual, new Map([[9, token('tok-9')]]), state, sink(), NOW, false);
      expect(out.adopted.size).toBe(0);
      expect((await onDisk()).rotationIntents).toBeUndefined();
    }
  });

  it('two twins, no listed token, no sink, or a sink that fails: nothing adopted, nothing deleted, the intent kept (the planner reports the name)', async () => {
    const cases: [ActualState, Map<number, SecretValue>, SecretSink | undefined][] = [
      [actualOf(key(5), key(9), key(10)), new Map([[9, token('a')], [10, token('b')]]), sink()],
      [actualOf(key(5), key(9)), new Map(), sink()],
      [actualOf(key(5), key(9)), new Map([[9, token('a')]]), undefined],
      [actualOf(key(5), key(9)), new Map([[9, token('a')]]), sink(true)],
    ];
    for (const [actual, tokens, s] of cases) {
      const state = await stateWithIntent();
      const out = await adoptInterruptedSuccessors(actual, tokens, state, s, NOW, false);
      expect(out.adopted.size).toBe(0);
      expect(out.unresolved).toHaveLength(1);
      expect(out.unresolved[0]).not.toContain('a"');
      expect((await onDisk()).rotationIntents).toHaveProperty('5');
    }
  });

  it('keys already in a recorded rotation are not twins', async () => {
    const state = await stateWithIntent();
    state.recordRotating!(3, { successor: 4, since: NOW - 1 });
    state.recordRotationIntent!(5, { name: 'ci', startedAt: STARTED });
    const out = await adoptInterruptedSuccessors(actualOf(key(3), key(4), key(5)), new Map([[4, token('tok-4')]]), state, sink(), NOW, false);
    expect(out.adopted.size).toBe(0);
    expect((await onDisk()).rotationIntents).toBeUndefined();
  });
});

describe('runSync with an interrupted rotation: what it writes before the safety check and the question, and what it reports', () => {
  // ci 100 is the predecessor, ci 101 the twin a killed run created; `rotate:` without overlap,
  // so the adopted predecessor's delete is planned at once.
  const file = desiredOf({ apikeys: [declared('ci', { roles: [1], rotate: { every: '90d', everyMs: 90 * 86_400_000, overlapMs: 0 } })] });
  const service = () => {
    const s = new StoreService();
    s.seedKey('ci', [1]);
    s.seedKey('ci', [1]);
    return s;
  };
  const intentFor100 = async (name = 'state.json') => {
    const path = join(dir, name);
    const state = await openPasswordState({ path, serviceUrl: 'http://a', keyFromEnv: 'k' });
    state.recordRotationIntent!(100, { name: 'ci', startedAt: STARTED });
    await state.save();
    return { open: () => openPasswordState({ path, serviceUrl: 'http://a', keyFromEnv: 'k' }), bytes: () => readFile(path, 'utf8') };
  };

  it('a dry-run (plan, sync --dry-run) writes neither the token sink nor the state file, and plans as the sync would', async () => {
    const state = await intentFor100();
    const before = await state.bytes();
    const s = sink();
    const out = await runSync({ desired: file, service: service(), passwordState: state.open, tokenSink: s, maxDeletes: 10, dryRun: true, now: () => NOW });
    expect(out.plan.changes.map((c) => [c.action, c.id])).toEqual([['delete', 100]]);
    expect(out.plan.notes).toContain('apikey "ci": id 101 is the successor of id 100 that an interrupted run created; its token is written to test sink first, and the rotation goes on from there.');
    expect(s.writes).toEqual([]);
    expect(await state.bytes()).toBe(before);
    expect(out.tokensWritten).toBe(0);
  });

  it('refused by a safety check, or cancelled at the question: the adopted token was written (local recovery, no request), and the outcome counts it', async () => {
    for (const stop of ['refused', 'cancelled'] as const) {
      const state = await intentFor100(`${stop}.json`);
      const s = sink();
      const store = service();
      const out = await runSync({ desired: file, service: store, passwordState: state.open, tokenSink: s, maxDeletes: stop === 'refused' ? 0 : 10, dryRun: false, now: () => NOW, beforeApply: async () => false });
      expect(stop === 'refused' ? out.refusal?.code : out.cancelled).toBe(stop === 'refused' ? 'deletion_budget' : true);
      expect(out.results).toBeUndefined();
      expect(s.writes).toEqual([['ci', 'tok-101']]);
      expect(out.tokensWritten, stop).toBe(1);
      expect(out.plan.notes).toContain('apikey "ci": id 101 is the successor of id 100 that an interrupted run created; its token was written to test sink first, and the rotation goes on from there.');
      // Nothing was sent: both keys are there; the rotation is recorded, so the next run deletes the predecessor.
      expect([...store.keys.keys()]).toEqual([100, 101]);
      const saved = JSON.parse(await state.bytes()).services['http://a'];
      expect(saved.rotating).toEqual({ '100': { successor: 101, since: new Date(NOW).toISOString() } });
      expect(saved.rotationIntents).toBeUndefined();
    }
  });
});
