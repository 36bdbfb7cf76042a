import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AsyncWriteQueue } from '../../../src/emulator/async-writes.js';

describe('async write queue', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('applies writes in order after their delay and releases readers of the item', async () => {
    const applied: string[] = [];
    let landed = 0;
    const q = new AsyncWriteQueue(Date.now, () => (landed += 1));
    q.enqueue('sshUsers/1', 100, () => applied.push('a'));
    q.enqueue(null, 100, () => applied.push('b'));
    const waiting = q.pendingFor('sshUsers/1');
    expect(waiting).not.toBeNull();
    expect(q.pendingFor('sshUsers/2')).toBeNull();
    await vi.advanceTimersByTimeAsync(99);
    expect(applied).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(applied).toEqual(['a', 'b']);
    await expect(waiting).resolves.toBeUndefined();
    expect(q.size).toBe(0);
    expect(landed).toBe(1);
  });

  it('clear drops pending writes', async () => {
    const applied: string[] = [];
    const q = new AsyncWriteQueue(Date.now, () => {});
    q.enqueue('x', 10, () => applied.push('x'));
    q.clear();
    await vi.advanceTimersByTimeAsync(50);
    expect(applied).toEqual([]);
  });
});
