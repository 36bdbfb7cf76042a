import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, renameSync, utimesSync, writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { claimPath, takeOver } from '../../../src/apply/lock-file.js';
import { hostProbe, thisProcess, useProcessProbe, type LockOwner } from '../../../src/apply/lock-owner.js';
import { acquireWriterLock, writerLockPath } from '../../../src/apply/writer-lock.js';
import { withWriterLock } from '../../../src/apply/with-writer-lock.js';
import { exitCodeFor, LockLostError, SafetyError } from '../../../src/errors.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'amsync-lock-'));
});
afterEach(async () => {
  useProcessProbe(undefined);
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

/** A lock file's content: this host's identity, with what the test says. */
function record(fields: Partial<LockOwner> = {}): string {
  return `${JSON.stringify({ ...thisProcess('test-nonce', new Date()), ...fields })}\n`;
}

/** The pid of a process that ran and is gone (reaped): `node -e ""`. */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '']).pid!;
}

const tenMinutesAgo = () => new Date(Date.now() - 10 * 60_000);

describe('the lock names its holder: a dead one is taken over at once, a live or paused one never', () => {
  it('a lock whose holder is gone (kill -9, out of memory) is taken over at once, saying which pid died', async () => {
    const path = writerLockPath(join(dir, 'state.json'));
    const pid = deadPid();
    writeFileSync(path, record({ pid, start: '1', nonce: 'dead' }));
    const told: string[] = [];
    const lock = await acquireWriterLock(path, { timeoutMs: 0, onTakeover: (m) => told.push(m) });
    expect(told).toHaveLength(1);
    expect(told[0]).toContain(`pid ${pid} on this host, is no longer running`);
    expect(readFileSync(path, 'utf8')).toContain(`"pid":${process.pid}`);
    await lock.release();
    expect(existsSync(path)).toBe(false);
    // Nothing left behind: no record of ours, no takeover claim.
    expect(readdirSync(dirname(path))).toEqual([]);
  });

  it('a pid now used by another process (another start time) is not taken for the holder', async () => {
    const path = writerLockPath(join(dir, 'state.json'));
    writeFileSync(path, record({ start: 'not-this-start', nonce: 'reused' }));
    const told: string[] = [];
    const lock = await acquireWriterLock(path, { timeoutMs: 0, onTakeover: (m) => told.push(m) });
    expect(told[0]).toContain('is no longer running');
    await lock.release();
  });

  it('a running holder keeps its lock however old the file looks: refused (exit 3), naming its pid', async () => {
    const path = writerLockPath(join(dir, 'state.json'));
    writeFileSync(path, record({ nonce: 'alive' }));
    utimesSync(path, tenMinutesAgo(), tenMinutesAgo());
    const refused = await acquireWriterLock(path, { timeoutMs: 0, staleMs: 1 }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(SafetyError);
    expect(exitCodeFor(refused)).toBe(3);
    expect((refused as Error).message).toContain(`is held by pid ${process.pid} on this host`);
    expect(readFileSync(path, 'utf8')).toContain('"nonce":"alive"');
  });

  it('a holder on another host (a shared volume) keeps its lock while it refreshes it, and is taken over once it has not for the stale time', async () => {
    const path = writerLockPath(join(dir, 'state.json'));
    writeFileSync(path, record({ host: 'build-7', boot: 'other-boot', pid: 4242, nonce: 'elsewhere' }));
    const refused = await acquireWriterLock(path, { timeoutMs: 0 }).catch((e: unknown) => e);
    expect((refused as Error).message).toContain('held by pid 4242 on host build-7 (another host or pid namespace');
    utimesSync(path, tenMinutesAgo(), tenMinutesAgo());
    const told: string[] = [];
    const lock = await acquireWriterLock(path, { timeoutMs: 0, onTakeover: (m) => told.push(m) });
    expect(told[0]).toMatch(/pid 4242 on host build-7, did not refresh it for \d+ s/);
    await lock.release();
  });

  it('two takers that found the same dead holder: only one ends up holding', async () => {
    const path = writerLockPath(join(dir, 'state.json'));
    const dead = record({ pid: deadPid(), start: '1', nonce: 'dead' });
    writeFileSync(path, dead);
    // A takes it over; B, which read the dead record before A did, goes on with its takeover after.
    const a = await acquireWriterLock(path, { timeoutMs: 0 });
    const held = readFileSync(path, 'utf8');
    const late = join(dir, 'b-record');
    writeFileSync(late, record({ nonce: 'b' }));
    expect(takeOver(path, dead, late, 10_000)).toBe('retry');
    expect(readFileSync(path, 'utf8')).toBe(held);
    a.fence();
    await a.release();
  });

  it('a taker that finds another live taker midway does not take the lock; a claim left by a taker that died is stepped over', async () => {
    const path = writerLockPath(join(dir, 'state.json'));
    const dead = record({ pid: deadPid(), start: '1', nonce: 'dead' });
    writeFileSync(path, dead);
    const mine = join(dir, 'mine');
    writeFileSync(mine, record({ nonce: 'mine' }));
    // Another taker, alive (this process, another nonce), has claimed the dead record and not yet replaced it.
    writeFileSync(claimPath(path, dead), record({ nonce: 'live-taker' }));
    const busy = takeOver(path, dead, mine, 10_000);
    expect(busy).toMatchObject({ free: false });
    expect((busy as { why: string }).why).toContain(`being taken over by pid ${process.pid} on this host`);
    expect(readFileSync(path, 'utf8')).toBe(dead);
    // The claimant died before it replaced the record: its claim is itself claimed, and the lock taken.
    const deadTaker = record({ pid: deadPid(), start: '1', nonce: 'dead-taker' });
    writeFileSync(claimPath(path, dead), deadTaker);
    expect(takeOver(path, dead, mine, 10_000)).toBe('held');
    expect(readFileSync(path, 'utf8')).toContain('"nonce":"mine"');
    expect(readdirSync(dir).filter((f) => f.includes('.takeover-'))).toEqual([]);
  });
});

describe('fencing: a holder that lost its lock sends nothing more', () => {
  it('once the lock file holds another writer, fence() throws a LockLostError naming it, lost fires, and release leaves the other writer\'s lock', async () => {
    const path = writerLockPath(join(dir, 'state.json'));
    const lock = await acquireWriterLock(path, { timeoutMs: 0 });
    lock.fence();
    expect(lock.lost.aborted).toBe(false);
    const other = record({ host: 'build-7', boot: 'b', pid: 4242, nonce: 'other' });
    writeFileSync(path, other);
    expect(() => lock.fence()).toThrow(LockLostError);
    expect(() => lock.fence()).toThrow(`the writer lock ${path} was lost: it is now held by pid 4242 on host build-7`);
    expect(lock.lost.aborted).toBe(true);
    expect(exitCodeFor(lock.lost.reason)).toBe(1);
    await lock.release();
    expect(readFileSync(path, 'utf8')).toBe(other);
  });

  it('a lock file removed under the holder is lost too', async () => {
    const path = writerLockPath(join(dir, 'state.json'));
    const lock = await acquireWriterLock(path, { timeoutMs: 0 });
    await rm(path);
    expect(() => lock.fence()).toThrow('its file was removed');
    await lock.release();
  });
});

describe('release removes only its own lock', () => {
  it('a record put over the lock file while the holder releases it (a taker from another host) is left in place, whole', async () => {
    const path = writerLockPath(join(dir, 'state.json'));
    const other = record({ host: 'build-7', boot: 'b', pid: 4242, nonce: 'taker' });
    // The interleaving: a taker elsewhere renames its record over the file right when the release has checked it is ours.
    const lock = await acquireWriterLock(path, {
      timeoutMs: 0,
      onReleasing: () => {
        writeFileSync(join(dir, 'taker-record'), other);
        renameSync(join(dir, 'taker-record'), path);
      },
    });
    await lock.release();
    expect(existsSync(path) ? readFileSync(path, 'utf8') : 'removed').toBe(other);
    // Nothing else left behind: no record of ours, no claim.
    expect(readdirSync(dir)).toEqual(['state.json.lock']);
    // So a third run is still refused: the taker holds the lock.
    const third = await acquireWriterLock(path, { timeoutMs: 0 }).catch((e: unknown) => e);
    expect(exitCodeFor(third)).toBe(3);
    expect((third as Error).message).toContain('held by pid 4242 on host build-7');
  });

  it('a release that meets a live taker\'s claim on its record leaves the lock to that taker', async () => {
    const path = writerLockPath(join(dir, 'state.json'));
    const lock = await acquireWriterLock(path, { timeoutMs: 0 });
    const ours = readFileSync(path, 'utf8');
    const claim = claimPath(path, ours);
    writeFileSync(claim, record({ nonce: 'live-taker' }));
    await lock.release();
    // Not removed under the taker, which goes on and renames its record over ours.
    expect(readFileSync(path, 'utf8')).toBe(ours);
    expect(readdirSync(dir).sort()).toEqual([claim.slice(dir.length + 1), 'state.json.lock'].sort());
  });

  it('a plain release still removes the lock and leaves nothing behind', async () => {
    const path = writerLockPath(join(dir, 'state.json'));
    const lock = await acquireWriterLock(path, { timeoutMs: 0 });
    await lock.release();
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe('a holder on this host whose process cannot be inspected (hidepid)', () => {
  const hidden = 4_000_000;
  /** The pid exists as another user's process (kill: EPERM), and /proc and ps show nothing of it. */
  const hidepid = () =>
    useProcessProbe({
      signal: (pid) => (pid === hidden ? 'EPERM' : hostProbe.signal(pid)),
      procStat: (pid) => (pid === hidden ? undefined : hostProbe.procStat(pid)),
      psStart: (pid) => (pid === hidden ? undefined : hostProbe.psStart(pid)),
    });

  it('is taken over once its file has not been refreshed for the stale time, saying why (not "another run is writing" for good)', async () => {
    const path = writerLockPath(join(dir, 'state.json'));
    writeFileSync(path, record({ pid: hidden, start: '12345', nonce: 'hidden' }));
    utimesSync(path, tenMinutesAgo(), tenMinutesAgo());
    hidepid();
    const told: string[] = [];
    const lock = await acquireWriterLock(path, { timeoutMs: 0, onTakeover: (m) => told.push(m) });
    expect(told).toHaveLength(1);
    expect(told[0]).toContain(`pid ${hidden} on this host`);
    expect(told[0]).toContain('cannot be inspected');
    expect(told[0]).toMatch(/did not refresh it for \d+ s/);
    expect(readFileSync(path, 'utf8')).toContain(`"pid":${process.pid}`);
    await lock.release();
  });

  it('keeps the lock while its file is fresh, and the refusal says what is known, not that it runs', async () => {
    const path = writerLockPath(join(dir, 'state.json'));
    writeFileSync(path, record({ pid: hidden, start: '12345', nonce: 'hidden' }));
    hidepid();
    const refused = await acquireWriterLock(path, { timeoutMs: 0 }).catch((e: unknown) => e);
    expect(exitCodeFor(refused)).toBe(3);
    expect((refused as Error).message).toContain(`pid ${hidden} on this host`);
    expect((refused as Error).message).toContain('cannot be inspected');
    expect((refused as Error).message).toMatch(/taken over once not refreshed for 10 s/);
    expect(readFileSync(path, 'utf8')).toContain('"nonce":"hidden"');
  });
});
