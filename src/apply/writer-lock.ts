import { mkdir, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import lockfile from 'proper-lockfile';
import { SafetyError } from '../errors.js';

/** Held for the whole of a run that writes; released when it ends. */
export interface WriterLock {
  readonly path: string;
  /** Aborted if the lock is lost while held (its folder removed, or not refreshed in time). */
  readonly lost: AbortSignal;
  release(): Promise<void>;
}

export interface WriterLockOptions {
  /** How long to wait for another writer before giving up (exit 3). 0: not at all. */
  readonly timeoutMs: number;
  /**
   * A lock not refreshed for this long belongs to a process that died (kill -9, a node lost)
   * and is taken over. The holder refreshes it every stale/2.
   */
  readonly staleMs?: number;
}

/**
 * A holder refreshes its lock every 5 s; one not refreshed for 10 s died (kill -9, a lost
 * node), and the next writer takes over. Shorter would risk taking the lock from a live run
 * whose event loop stalled (a 100k-item plan under load); longer blocks the run after a crash.
 */
const defaultStaleMs = 10_000;

/** The lock that makes two runs sharing a state file take turns: `<stateFile>.lock`. */
export function writerLockPath(stateFile: string): string {
  return `${stateFile}.lock`;
}

/**
 * Takes the host's writer lock (DESIGN.md §6 "One writer"). Two processes that share a state
 * file serialise here: the second waits up to `timeoutMs`, then is refused with exit 3 and a
 * message that names the lock. proper-lockfile does the work (an atomic mkdir, refreshed
 * mtime, stale takeover): no PID files of our own.
 */
export async function acquireWriterLock(path: string, options: WriterLockOptions): Promise<WriterLock> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const controller = new AbortController();
  const stale = options.staleMs ?? defaultStaleMs;
  const retries = options.timeoutMs <= 0 ? 0 : { retries: Math.max(1, Math.ceil(options.timeoutMs / 500)), factor: 1, minTimeout: 500, maxTimeout: 500 };
  let release: () => Promise<void>;
  try {
    release = await lockfile.lock(path, {
      realpath: false,
      lockfilePath: path,
      stale,
      update: Math.floor(stale / 2),
      retries,
      onCompromised: (error) => controller.abort(new Error(`the writer lock ${path} was lost: ${error.message}`)),
    });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOCKED') throw await busyError(path, options.timeoutMs);
    throw error;
  }
  return {
    path,
    lost: controller.signal,
    release: async () => {
      // Releasing a lock already lost (compromised) is not an error worth failing a run for.
      await release().catch(() => undefined);
    },
  };
}

async function busyError(path: string, timeoutMs: number): Promise<SafetyError> {
  const since = await stat(path).then(
    (s) => ` (refreshed ${s.mtime.toISOString()})`,
    () => '',
  );
  const waited = timeoutMs > 0 ? `; waited ${Math.round(timeoutMs / 1000)} s` : '';
  return new SafetyError(
    'writer_locked',
    `another amsync run is writing to this service: the writer lock ${path} is held${since}${waited}. Nothing was changed; run again when it ends, or wait for it with --lock-timeout MS`,
  );
}
