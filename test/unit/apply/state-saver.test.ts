import { describe, expect, it } from 'vitest';
import { StateSaver } from '../../../src/apply/state-saver.js';
import type { PasswordState } from '../../../src/secrets/index.js';

/** A state whose saves are held until the test lets each one end, recording what each one wrote. */
function heldState() {
  const records: string[] = [];
  const written: string[][] = [];
  const pending: (() => void)[] = [];
  let active = 0;
  let maxActive = 0;
  const state = {
    get dirty() {
      return true;
    },
    async save() {
      active += 1;
      maxActive = Math.max(maxActive, active);
      const snapshot = [...records];
      await new Promise<void>((resolve) => pending.push(resolve));
      written.push(snapshot);
      active -= 1;
    },
  } as unknown as PasswordState;
  return { state, records, written, pending, maxActive: () => maxActive };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('StateSaver.saveNow', () => {
  it('saves one at a time: a record made while another save is on its way is on disk once its own saveNow resolves, never overwritten by the older save', async () => {
    const h = heldState();
    const saver = new StateSaver(h.state);
    h.records.push('intent A');
    const a = saver.saveNow();
    await tick();
    h.records.push('intent B');
    const b = saver.saveNow();
    await tick();
    // B's save waits for A's.
    expect(h.pending).toHaveLength(1);
    h.pending.shift()!();
    await a;
    await tick();
    expect(h.pending).toHaveLength(1);
    h.pending.shift()!();
    await b;
    expect(h.written).toEqual([['intent A'], ['intent A', 'intent B']]);
    expect(h.maxActive()).toBe(1);
  });

  it('throws when the save fails (the create is then not sent), and the next saveNow still runs', async () => {
    let fail = true;
    const state = { dirty: true, save: async () => (fail ? Promise.reject(new Error('disk full')) : undefined) } as unknown as PasswordState;
    const saver = new StateSaver(state);
    await expect(saver.saveNow()).rejects.toThrow('disk full');
    fail = false;
    await expect(saver.saveNow()).resolves.toBeUndefined();
  });
});
