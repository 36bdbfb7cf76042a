import type { Settings, SyncWindowSetting } from '../settings/index.js';
import { DaemonError } from './daemon-error.js';
import type { BackoffOptions } from './backoff.js';
import { parseListen } from './listen-address.js';
import type { ReadinessOptions } from './readiness.js';
import type { DaemonMode } from './reconciler.js';
import { checkSchedule } from './schedule.js';

export interface DaemonOptions {
  /** The desired-state file, as logs name it (several: their paths joined); watched even while it does not load. */
  readonly file: string;
  /**
   * The paths to watch before the files load: the desired files and folders as given to -f.
   * @default [file]
   */
  readonly watch?: readonly string[];
  /**
   * The approvals file (`daemon.approvalsFile`), watched and read at every run that may write:
   * a change the policy gates is written only once an approval listed there covers it.
   * Unset: such changes stay pending. The daemon never applies one by itself.
   */
  readonly approvalsFile?: string;
  /** Cron, five fields or six (seconds first). */
  readonly schedule: string;
  /** HOST:PORT of /healthz, /readyz, /metrics; port 0 picks a free one. */
  readonly listen: string;
  readonly mode: DaemonMode;
  /** Quiet time after a file event before the contents are compared. */
  readonly debounceMs: number;
  /** How long a run in progress may go on after SIGTERM/SIGINT. */
  readonly shutdownGraceMs: number;
  /** A run still going after this long is abandoned (requests cancelled, health red). @default 600000 */
  readonly runDeadlineMs?: number;
  /** Retry of failed runs. @default { baseMs: 5000, maxMs: 300000 } */
  readonly backoff?: BackoffOptions;
  /** @default { failureThreshold: 3 } */
  readonly readiness?: ReadinessOptions;
  /** While the file is invalid, try to load it (offline) this often. @default 10000 */
  readonly invalidRecheckMs?: number;
  /** Compare watched contents this often even without file events; 0 = never. @default 30000 */
  readonly watchPollMs?: number;
  /** Sync windows (daemon.windows): while they hold writes, runs observe only. @default [] */
  readonly windows?: readonly SyncWindowSetting[];
  /** The control socket of `amsync ctl` (0600); absent: none. */
  readonly socket?: string;
  /** The audit log (`auditLog`), whose last lines the status page shows; absent: none. */
  readonly auditLog?: string;
}

/** What a settings reload (SIGHUP) may change without a restart. `listen` needs one. */
export type DaemonRuntimeOptions = Pick<DaemonOptions, 'schedule' | 'mode' | 'debounceMs' | 'shutdownGraceMs' | 'runDeadlineMs' | 'approvalsFile' | 'windows'>;

/** The runtime options as a running daemon holds them: a reload changes them in place. */
export type MutableRuntimeOptions = { -readonly [K in keyof DaemonRuntimeOptions]: DaemonRuntimeOptions[K] };

/** Ten minutes: a run of thousands of changes at a slow service fits; a wedged one does not. */
export const defaultRunDeadlineMs = 600_000;

/** The runtime options a daemon starts with (without the approvals file, which only the sidecar reads). */
export function initialRuntime(options: DaemonOptions): MutableRuntimeOptions {
  return {
    schedule: options.schedule,
    mode: options.mode,
    debounceMs: options.debounceMs,
    shutdownGraceMs: options.shutdownGraceMs,
    runDeadlineMs: options.runDeadlineMs ?? defaultRunDeadlineMs,
    windows: options.windows ?? [],
  };
}

/** Throws DaemonError `daemon_options` for the first option that is wrong. */
export function checkDaemonOptions(o: DaemonOptions): DaemonOptions {
  const bad = (name: string, expected: string, got: unknown) => new DaemonError('daemon_options', `Expected \`${name}\` to be ${expected}, got ${JSON.stringify(got)}`);
  if (typeof o.file !== 'string' || o.file === '') throw bad('file', 'a path', o.file);
  if (o.mode !== 'apply' && o.mode !== 'observe') throw bad('mode', "'apply' or 'observe'", o.mode);
  if (o.runDeadlineMs !== undefined && !(Number.isFinite(o.runDeadlineMs) && o.runDeadlineMs > 0)) throw bad('runDeadlineMs', 'a number of milliseconds above 0', o.runDeadlineMs);
  for (const key of ['debounceMs', 'shutdownGraceMs', 'invalidRecheckMs', 'watchPollMs'] as const) {
    const v = o[key];
    if (v !== undefined && !(Number.isFinite(v) && v >= 0)) throw bad(key, 'a number of milliseconds from 0 upwards', v);
  }
  if (o.invalidRecheckMs === 0) throw bad('invalidRecheckMs', 'a number of milliseconds above 0', 0);
  if (o.readiness && !(Number.isInteger(o.readiness.failureThreshold) && o.readiness.failureThreshold >= 1)) {
    throw bad('readiness.failureThreshold', 'an integer from 1 upwards', o.readiness.failureThreshold);
  }
  if (o.backoff && !(o.backoff.baseMs > 0 && o.backoff.maxMs >= o.backoff.baseMs)) throw bad('backoff', 'baseMs above 0 and maxMs from baseMs upwards', o.backoff);
  parseListen(o.listen);
  checkSchedule(o.schedule);
  return o;
}

/** What a settings reload (SIGHUP) may change without a restart. */
export function runtimeOptions(settings: Settings): Partial<DaemonRuntimeOptions> {
  const { schedule, mode, debounceMs, shutdownGraceMs, runDeadlineMs, approvalsFile, windows } = settings.daemon;
  // approvalsFile is always present: unset in the settings now means unset here.
  return { schedule, mode, debounceMs, shutdownGraceMs, runDeadlineMs, approvalsFile, windows };
}
