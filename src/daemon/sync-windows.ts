import { createTask } from 'node-cron';
import { durationMs, type SyncWindowSetting } from '../settings/index.js';

/** A sync window ready to be checked: its setting, its length, and whether a minute is one of its starts. */
export interface SyncWindow {
  readonly kind: SyncWindowSetting['kind'];
  readonly schedule: string;
  readonly timezone: string;
  readonly durationMs: number;
  /** Whether the schedule fires at this instant (a minute's start), in the window's time zone. */
  starts(at: Date): boolean;
}

/** A window that is open now, and until when. */
export interface OpenWindow {
  readonly kind: SyncWindowSetting['kind'];
  readonly schedule: string;
  readonly timezone: string;
  /** Epoch ms of the start of this opening and of its end. */
  readonly since: number;
  readonly until: number;
}

/** What the windows say at one instant. */
export interface WindowState {
  /** Whether the daemon may write: no deny window open, and an allow window open when there is any. */
  readonly open: boolean;
  /** The windows open at this instant. */
  readonly active: readonly OpenWindow[];
  /** For people (/readyz, logs, ctl status): `ok`, or why writes are held and until when. */
  readonly reason: string;
  /** Epoch ms when the deny windows open now have all ended (writes may resume then); undefined when none is open. */
  readonly denyUntil?: number;
}

const minuteMs = 60_000;

/**
 * The settings' windows, compiled. node-cron 4 answers "does this schedule fire at this
 * instant, in this time zone" (`ScheduledTask.match`, the same matcher as the daemon's own
 * schedule), but has no previous fire time and computes its next one only from the wall clock
 * (`getNextRun()` reads `new Date()`), which the virtual clock of the tests cannot drive. So
 * the window's last opening is found here by looking back minute by minute over its duration
 * (five-field schedules fire on minutes; a window lasts 7 days at most: ~10 000 checks of
 * ~10 µs). The task is never started (no timer) and is destroyed at once (out of node-cron's
 * registry); its matcher stays usable.
 */
export function compileWindows(settings: readonly SyncWindowSetting[]): SyncWindow[] {
  return settings.map((w) => {
    const timezone = w.timezone ?? 'UTC';
    const ms = durationMs(w.duration);
    if (ms === undefined) throw new Error(`not a duration: ${w.duration}`);
    const task = createTask(w.schedule, () => undefined, { timezone, name: 'amsync-sync-window' });
    void task.destroy();
    return { kind: w.kind, schedule: w.schedule, timezone, durationMs: ms, starts: (at: Date) => task.match(at) };
  });
}

/** The opening of `window` that covers `now`, if any: the latest start in (now - duration, now]. */
export function openingAt(window: SyncWindow, now: number): OpenWindow | undefined {
  for (let start = Math.floor(now / minuteMs) * minuteMs; start > now - window.durationMs; start -= minuteMs) {
    if (window.starts(new Date(start))) return { kind: window.kind, schedule: window.schedule, timezone: window.timezone, since: start, until: start + window.durationMs };
  }
  return undefined;
}

/**
 * Whether the daemon may write at `now` (epoch ms), as Argo CD decides it: a deny window open
 * now holds writes; so does being outside every allow window when there is at least one. Pure.
 */
export function windowState(windows: readonly SyncWindow[], now: number): WindowState {
  const active = windows.flatMap((w) => openingAt(w, now) ?? []);
  const denies = active.filter((w) => w.kind === 'deny');
  const hasAllow = windows.some((w) => w.kind === 'allow');
  if (denies.length > 0) {
    const until = Math.max(...denies.map((w) => w.until));
    return { open: false, active, reason: `inside a deny window (${denies.map(describe).join(', ')}) until ${iso(until)}`, denyUntil: until };
  }
  if (hasAllow && !active.some((w) => w.kind === 'allow')) return { open: false, active, reason: 'outside every allow window' };
  return { open: true, active, reason: 'ok' };
}

const describe = (w: OpenWindow): string => `"${w.schedule}" ${w.timezone}`;
const iso = (ms: number): string => new Date(ms).toISOString();
