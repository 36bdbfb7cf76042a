import { describe, expect, it } from 'vitest';
import { runSignal } from '../../../src/daemon/index.js';

describe("the daemon's run signal under leader election", () => {
  it('a writing run is cancelled when the term ends, not only at its deadline', () => {
    const deadline = new AbortController();
    const term = new AbortController();
    const signal = runSignal(deadline.signal, term.signal, false);
    expect(signal.aborted).toBe(false);
    term.abort(new Error('lost the Lease'));
    expect(signal.aborted).toBe(true);
    expect((signal.reason as Error).message).toBe('lost the Lease');
  });

  it("an observing run (a follower's, whose term is over from the start) keeps only its deadline", () => {
    const deadline = new AbortController();
    const ended = AbortSignal.abort(new Error('not the leader'));
    const signal = runSignal(deadline.signal, ended, true);
    expect(signal.aborted).toBe(false);
    deadline.abort();
    expect(signal.aborted).toBe(true);
  });

  it('without leader election the deadline is the signal', () => {
    const deadline = new AbortController();
    expect(runSignal(deadline.signal, undefined, false)).toBe(deadline.signal);
  });
});
