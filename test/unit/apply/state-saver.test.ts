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

/** Ends the held writes, newest first each time, until none is left (a save begun by an ended one included). */
async function endNewestFirst(pending: (() => void)[]): Promise<void> {
  for (let i = 0; i < 100 && pending.length > 0; i += 1) {
    pending.pop()!();
    await tick();
  }
}

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

  it('a touch made while a saveNow is being written waits for it: a slow older write can never land over a newer one', async () => {
    // Review finding: a touch's save started beside a saveNow's save in flight; the touch's
    // (newer) write ended first and the saveNow's older snapshot landed over it, so a kill
    // before the end-of-run flush lost the rotation record.
    const h = heldState();
    const saver = new StateSaver(h.state);
    h.records.push('intent A');
    const a = saver.saveNow();
    await tick();
    h.records.push('rotating A');
    saver.touch();
    h.records.push('rotating B');
    saver.touch();
    await tick();
    // The disk ends the newest write first, whatever is in flight.
    await endNewestFirst(h.pending);
    await a;
    // Both touches coalesced into one save begun after the saveNow's ended, with the latest records.
    expect(h.written).toEqual([['intent A'], ['intent A', 'rotating A', 'rotating B']]);
    expect(h.maxActive()).toBe(1);
  });

  it('a saveNow asked while a touch is being written, and a touch after it: one write at a time, the last with every record', async () => {
    const h = heldState();
    const saver = new StateSaver(h.state);
    h.records.push('fingerprint 1');
    saver.touch();
    await tick();
    h.records.push('intent A');
    let saved = false;
    const now = saver.saveNow().then(() => (saved = true));
    h.records.push('fingerprint 2');
    saver.touch();
    await tick();
    expect(h.pending).toHaveLength(1);
    h.pending.shift()!();
    await tick();
    expect(saved).toBe(false);
    await endNewestFirst(h.pending);
    await now;
    expect(h.maxActive()).toBe(1);
    // The saveNow and the touch after it share one save, begun after both records.
    expect(h.written).toEqual([['fingerprint 1'], ['fingerprint 1', 'intent A', 'fingerprint 2']]);
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
