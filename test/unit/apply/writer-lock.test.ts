import { mkdir, mkdtemp, rm, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { acquireWriterLock, writerLockPath } from '../../../src/apply/writer-lock.js';
import { withWriterLock } from '../../../src/apply/with-writer-lock.js';
import { exitCodeFor, SafetyError } from '../../../src/errors.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'amsync-lock-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('the host writer lock beside the state file', () => {
  it('a second writer is refused at once with exit 3 and a message naming the lock', async () => {
    const path = writerLockPath(join(dir, '.amsync', 'state.json'));
    const first = await acquireWriterLock(path, { timeoutMs: 0 });
    const second = await acquireWriterLock(path, { timeoutMs: 0 }).catch((e: unknown) => e);
    expect(second).toBeInstanceOf(SafetyError);
    expect((second as SafetyError).code).toBe('writer_locked');
    expect(exitCodeFor(second)).toBe(3);
    expect((second as Error).message).toContain(path);
    expect((second as Error).message).toContain('--lock-timeout');
    await first.release();
    const third = await acquireWriterLock(path, { timeoutMs: 0 });
    await third.release();
  });

  it('with --lock-timeout the second writer waits for the first to finish, then runs', async () => {
    const path = writerLockPath(join(dir, 'state.json'));
    const order: string[] = [];
    const first = await acquireWriterLock(path, { timeoutMs: 0 });
    const second = withWriterLock(
      () => acquireWriterLock(path, { timeoutMs: 60_000 }),
      undefined,
      async () => {
        order.push('second runs');
      },
    );
    order.push('first runs');
    await first.release();
    await second;
    expect(order).toEqual(['first runs', 'second runs']);
  });

  it('a lock left by a process that died (not refreshed for longer than stale) is taken over', async () => {
    const path = writerLockPath(join(dir, 'state.json'));
    await mkdir(path);
    const old = new Date(Date.now() - 10 * 60_000);
    await utimes(path, old, old);
    const lock = await acquireWriterLock(path, { timeoutMs: 0, staleMs: 30_000 });
    await lock.release();
  });

  it('the work is released even when it throws, and its signal follows the caller\'s', async () => {
    const path = writerLockPath(join(dir, 'state.json'));
    const controller = new AbortController();
    let seen: AbortSignal | undefined;
    const failing = withWriterLock(
      () => acquireWriterLock(path, { timeoutMs: 0 }),
      controller.signal,
      async (signal) => {
        seen = signal;
        controller.abort(new Error('interrupted'));
        throw new Error('boom');
      },
    );
    await expect(failing).rejects.toThrow('boom');
    expect(seen?.aborted).toBe(true);
    const again = await acquireWriterLock(path, { timeoutMs: 0 });
    await again.release();
  });
});
