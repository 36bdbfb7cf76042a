import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ActualApikey, ActualState, SecretValue } from '../../../src/model/index.js';
import { openPasswordState, type PasswordState, type SecretSink } from '../../../src/secrets/index.js';
import { adoptInterruptedSuccessors } from '../../../src/sync/interrupted-rotations.js';

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
