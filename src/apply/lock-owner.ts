import { execFileSync } from 'node:child_process';
import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import * as z from 'zod';

/**
 * Who holds a writer lock: what its lock file says. `boot` and `pidns` (Linux) make "this host"
 * mean the same kernel and the same pid namespace, where a pid names one process: two
 * containers on one node, or a container and its restart, have pid namespaces of their own.
 */
export interface LockOwner {
  readonly host: string;
  /** /proc/sys/kernel/random/boot_id: a reboot makes every pid of before meaningless. */
  readonly boot?: string;
  /** readlink /proc/self/ns/pid, e.g. `pid:[4026531836]`. */
  readonly pidns?: string;
  readonly pid: number;
  /**
   * When the process started (Linux: /proc/PID/stat field 22, clock ticks since boot; elsewhere
   * `ps -o lstart=`): a pid reused by another process is not mistaken for the holder.
   */
  readonly start?: string;
  /** Random, once per acquisition: the lock file's content is this holder's alone. */
  readonly nonce: string;
  readonly acquiredAt: string;
}

const ownerSchema = z.object({
  host: z.string(),
  boot: z.string().optional(),
  pidns: z.string().optional(),
  pid: z.number().int().positive().max(2 ** 31),
  start: z.string().optional(),
  nonce: z.string().min(1),
  acquiredAt: z.string(),
});

/** The owner a lock file names; undefined when it is not one amsync wrote (garbage, empty). */
export function parseOwner(text: string): LockOwner | undefined {
  try {
    const parsed = ownerSchema.safeParse(JSON.parse(text));
    return parsed.success ? (parsed.data as LockOwner) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * What can be known of an owner from here. `unknown`: another host or pid namespace. `unseen`:
 * on this host, its pid exists but neither /proc nor ps tells whether it is still the holder
 * (another user's process under hidepid): the file's age decides, as for another host.
 */
export type OwnerState = 'running' | 'stopped' | 'dead' | 'unknown' | 'unseen';

type Machine = Pick<LockOwner, 'host' | 'boot' | 'pidns'>;

/** How this process looks at another one: the kernel's answers (replaced in tests, which cannot make hidepid). */
export interface ProcessProbe {
  /** `kill(pid, 0)`: undefined when the signal could be sent, else its errno code (ESRCH: no such process; EPERM: another user's). */
  signal(pid: number): string | undefined;
  /** /proc/PID/stat's state and start time; undefined without /proc, or when the process is hidden from us (hidepid). */
  procStat(pid: number): { state: string; start: string } | undefined;
  /** Where there is no /proc: the start time `ps` gives. */
  psStart(pid: number): string | undefined;
}

export const hostProbe: ProcessProbe = { signal: sendNoSignal, procStat, psStart };
let probe: ProcessProbe = hostProbe;

/** Test seam: look at processes through `next` (undefined: through the kernel again). */
export function useProcessProbe(next: ProcessProbe | undefined): void {
  probe = next ?? hostProbe;
}

let machine: Machine | undefined;
let ownStart: string | undefined | null = null;

/** This process as a lock owner, with a fresh nonce. */
export function thisProcess(nonce: string, now: Date): LockOwner {
  machine ??= { host: hostname(), ...optional('boot', readTrimmed('/proc/sys/kernel/random/boot_id')), ...optional('pidns', readLink('/proc/self/ns/pid')) };
  if (ownStart === null) ownStart = startOf(process.pid);
  return { ...machine, pid: process.pid, ...optional('start', ownStart), nonce, acquiredAt: now.toISOString() };
}

/** Whether `owner`'s pid means a process on this machine and in this pid namespace. */
export function onThisHost(owner: Machine): boolean {
  const self = thisProcess('', new Date(0));
  return owner.host === self.host && owner.boot === self.boot && owner.pidns === self.pidns;
}

/**
 * Whether the owner still runs. Only on this host: a paused process (SIGSTOP, a debugger) is
 * `stopped`, which is alive; a zombie, a pid that no longer exists, or one now used by a process
 * that started at another time is `dead`.
 */
export function ownerState(owner: LockOwner): OwnerState {
  if (!onThisHost(owner)) return 'unknown';
  // EPERM: it exists, as another user's process.
  if (probe.signal(owner.pid) === 'ESRCH') return 'dead';
  const stat = probe.procStat(owner.pid);
  if (stat === undefined) {
    // No /proc (macOS), or the process is hidden from us (hidepid): compare what ps says. Nothing
    // to compare is no proof of life: a dead holder's pid reused by another user's process would
    // otherwise block every run for good.
    const start = owner.start === undefined ? undefined : probe.psStart(owner.pid);
    if (start === undefined) return 'unseen';
    return start === owner.start ? 'running' : 'dead';
  }
  if (stat.state === 'Z' || stat.state === 'X' || stat.state === 'x') return 'dead';
  if (owner.start !== undefined && stat.start !== owner.start) return 'dead';
  return stat.state === 'T' || stat.state === 't' ? 'stopped' : 'running';
}

/** "pid 123 on this host", "pid 123 on host build-7". */
export function ownerName(owner: LockOwner): string {
  return onThisHost(owner) ? `pid ${owner.pid} on this host` : `pid ${owner.pid} on host ${owner.host}`;
}

function sendNoSignal(pid: number): string | undefined {
  try {
    process.kill(pid, 0);
    return undefined;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code ?? 'EINVAL';
  }
}

function startOf(pid: number): string | undefined {
  return procStat(pid)?.start ?? psStart(pid);
}

/** /proc/PID/stat: the state (field 3) and the start time (field 22), read after the last ')' (the command may hold any). */
function procStat(pid: number): { state: string; start: string } | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const state = fields[0];
  const start = fields[19];
  return state === undefined || start === undefined ? undefined : { state, start };
}

/** Where there is no /proc: `ps -o lstart= -p PID`, read only when a lock is contended. */
function psStart(pid: number): string | undefined {
  if (process.platform === 'linux' || process.platform === 'win32') return undefined;
  try {
    const out = execFileSync('ps', ['-o', 'lstart=', '-p', String(pid)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 5_000 }).trim();
    return out === '' ? undefined : out;
  } catch {
    return undefined;
  }
}

function readTrimmed(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

function readLink(path: string): string | undefined {
  try {
    return readlinkSync(path);
  } catch {
    return undefined;
  }
}

function optional<K extends string>(key: K, value: string | undefined): { [P in K]?: string } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: string };
}
