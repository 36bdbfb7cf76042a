import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { waitFor } from './daemon-deferred.js';
import { bin, root } from './paths.js';

/**
 * Every child process the tests start, in one module. The CLI runs in-process everywhere else
 * (in-process.ts: `run(argv, io)`); a process is spawned only where the process itself is
 * under test: the built launcher and its exit, a real signal, a real terminal, an install,
 * and the chaos runs, which kill processes and read their memory. (The benchmark measures
 * processes with its own harness, test/bench/cli-process.ts.)
 */

export { bin, root };

export function assertBuilt(): void {
  if (!existsSync(bin) || (process.env.AMSYNC_BIN === undefined && !existsSync(join(root, 'dist', 'bundle', 'main.js')))) {
    throw new Error('The tests that spawn the CLI run the build: run `npm run build` (npm test does) first.');
  }
}

export interface ProcessRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface SpawnOptions {
  readonly cwd: string;
  /** The whole environment of the child: nothing is inherited from the test runner. */
  readonly env: Record<string, string>;
  /** Killed (SIGKILL) after this long. @default 120_000 */
  readonly timeoutMs?: number;
  /** Called with all of stdout and stderr so far at each chunk; the child's stdin is then a pipe (a test that types an answer). */
  readonly onOutput?: (all: string, child: ChildProcess) => void;
}

/** Any command (bash, npm, `script`, an installed amsync) to its end, with only the environment given. */
export function spawnCollect(command: string, args: readonly string[], options: SpawnOptions): Promise<ProcessRun> {
  const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: [options.onOutput ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let all = '';
  const onData = (to: 'stdout' | 'stderr') => (c: Buffer) => {
    const text = c.toString();
    if (to === 'stdout') stdout += text;
    else stderr += text;
    all += text;
    options.onOutput?.(all, child);
  };
  child.stdout!.on('data', onData('stdout'));
  child.stderr!.on('data', onData('stderr'));
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 120_000);
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

export interface AmsyncRun extends ProcessRun {
  /** SIGKILLed by `poll` (not by the time bound). */
  readonly killed: boolean;
  /** Still running at the time bound, and killed for it: a wait without a bound. */
  readonly timedOut: boolean;
  /** Signals sent by `poll`. */
  readonly signals: readonly NodeJS.Signals[];
  /** Peak resident memory in KiB (Linux: VmHWM), when `sampleMemory` asked for it. */
  readonly peakRssKiB?: number;
}

export interface AmsyncOptions {
  /** @default the repository root */
  readonly cwd?: string;
  /** The environment besides PATH and NO_COLOR=1: nothing of the runner's (AMSYNC_* above all) leaks in. */
  readonly env?: Record<string, string | undefined>;
  /** Killed after this long and marked as timed out. @default 90_000 */
  readonly timeoutMs?: number;
  /** Called every few milliseconds while the child runs: it may signal it (kill, Ctrl-C) or change its files. */
  readonly poll?: (child: ChildProcess) => void;
  /** Samples the child's peak resident memory. */
  readonly sampleMemory?: boolean;
}

/** The peak resident memory of a process so far, in KiB (Linux: VmHWM); undefined where /proc has none. */
export function peakRssKiB(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const match = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * `amsync ARGS` as a user runs it: the built launcher in a child process, with only the
 * environment given (plus PATH), bounded in time. `poll` may signal it while it runs (SIGKILL,
 * SIGINT); the run records which signals it sent.
 */
export function spawnAmsync(args: readonly string[], options: AmsyncOptions = {}): Promise<AmsyncRun> {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', NO_COLOR: '1' };
  for (const [k, v] of Object.entries(options.env ?? {})) if (v !== undefined) env[k] = v;
  const child = spawn(process.execPath, [bin, ...args], { cwd: options.cwd ?? root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let timedOut = false;
  let peak: number | undefined;
  const signals: NodeJS.Signals[] = [];
  // Decoded as a stream: a character split between two chunks stays whole (canaries are not ASCII).
  child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const kill = child.kill.bind(child);
  child.kill = (signal: NodeJS.Signals | number = 'SIGTERM') => {
    if (typeof signal === 'string') signals.push(signal);
    return kill(signal);
  };
  const timer = setTimeout(() => {
    timedOut = true;
    kill('SIGKILL');
  }, options.timeoutMs ?? 90_000);
  const running = () => child.exitCode === null && child.signalCode === null;
  const poller =
    options.poll &&
    setInterval(() => {
      if (running()) options.poll!(child);
    }, 4);
  const sampler =
    options.sampleMemory &&
    setInterval(() => {
      const now = running() ? peakRssKiB(child.pid) : undefined;
      if (now !== undefined) peak = Math.max(peak ?? 0, now);
    }, 20);
  return new Promise((resolve) => {
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (poller) clearInterval(poller);
      if (sampler) clearInterval(sampler);
      const killed = signal === 'SIGKILL' && !timedOut;
      resolve({ code, killed, timedOut, signals, ...(peak === undefined ? {} : { peakRssKiB: peak }), stdout, stderr });
    });
  });
}

/** What both daemon helpers (spawned and in-process) read the daemon's JSON log lines with. */
export type WaitForLog = (match: (line: LogLine) => boolean, what: string, timeoutMs?: number, from?: number) => Promise<LogLine>;

/** Waits for a log line; fails at once, with the output so far, when the daemon has exited. */
export function logWaiter(logs: readonly LogLine[], output: () => string, exited: () => boolean): WaitForLog {
  return (match, what, timeoutMs = 15_000, from = 0) =>
    waitFor(() => {
      const found = logs.slice(from).find(match);
      if (found) return found;
      if (exited()) throw new Error(`the daemon exited while waiting for ${what}:\n${output()}`);
      return undefined;
    }, `${what}; output so far:\n${output().slice(-4000)}`, timeoutMs);
}

/** GET a path of a daemon's health server: status and body text. */
/** A line of the daemon's stderr: its JSON log entry goes to `logs`; any other line is not a log line (an error printed by the CLI entry). */
export function collectLogLine(logs: LogLine[], line: string): void {
  try {
    logs.push(JSON.parse(line) as LogLine);
  } catch {
    // not a log line
  }
}

/** What a started daemon offers a test, in-process or spawned alike. */
export interface StartedDaemonView {
  /** `http://127.0.0.1:PORT` of /healthz, /readyz, /metrics. */
  readonly url: string;
  /** Every JSON log line so far (stderr). */
  readonly logs: LogLine[];
  /** stdout and stderr so far. */
  output(): string;
  /** Waits for a log line that matches, from the `from`-th on; returns it. */
  waitForLog: WaitForLog;
  get(path: string): Promise<{ status: number; text: string }>;
}

/** Waits for the daemon's "daemon started" line; then the URL it serves, its logs and output. */
export async function daemonStarted(logs: LogLine[], output: () => string, exited: () => boolean): Promise<StartedDaemonView> {
  const waitForLog = logWaiter(logs, output, exited);
  const started = await waitForLog((l) => l.msg === 'daemon started' || l.msg === 'fleet daemon started', 'the daemon to start');
  const url = String(started.url);
  return { url, logs, output, waitForLog, get: (path) => getText(url, path) };
}

export async function getText(url: string, path: string): Promise<{ status: number; text: string }> {
  const res = await fetch(`${url}${path}`);
  return { status: res.status, text: await res.text() };
}

export interface LogLine {
  readonly level: number;
  readonly msg: string;
  readonly [key: string]: unknown;
}

/** A long-running `amsync` child (the daemon): its JSON log lines on stderr, its exit. */
export interface DaemonProcess extends StartedDaemonView {
  readonly child: ChildProcess;
  readonly exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGKILL if still running (test cleanup). */
  kill(): Promise<void>;
}

/** `amsync daemon ARGS` as a user runs it; resolves once it logs that it started. */
export async function startDaemonProcess(args: string[], env: Record<string, string>, cwd = root): Promise<DaemonProcess> {
  const child = spawn(process.execPath, [bin, 'daemon', ...args], {
    cwd,
    // Only what the test gives, plus PATH: the test's own AMSYNC_* must not leak in.
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let raw = '';
  const logs: LogLine[] = [];
  child.stdout!.setEncoding('utf8').on('data', (c: string) => (raw += c));
  createInterface({ input: child.stderr! }).on('line', (line) => {
    raw += `${line}\n`;
    collectLogLine(logs, line);
  });
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  let exited = false;
  void exit.then(() => (exited = true));

  return {
    ...(await daemonStarted(logs, () => raw, () => exited)),
    child,
    exit,
    async kill() {
      if (!exited) {
        child.kill('SIGKILL');
        await exit;
      }
    },
  };
}

/** A long-running `amsync emulator` child, once its first `count` stdout lines are out. */
export interface EmulatorChild {
  readonly child: ChildProcess;
  /** The first `count` lines of stdout. */
  readonly lines: string[];
  /** stdout and stderr so far. */
  output(): string;
  readonly exit: Promise<number | null>;
}

export function startEmulatorProcess(args: readonly string[], count = 1): Promise<EmulatorChild> {
  const child = spawn(process.execPath, [bin, 'emulator', ...args], { cwd: root, env: { PATH: process.env.PATH ?? '' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let all = '';
  child.stderr!.on('data', (c: Buffer) => (all += c.toString()));
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const first: string[] = [];
    createInterface({ input: child.stdout! }).on('line', (line) => {
      all += `${line}\n`;
      first.push(line);
      if (first.length === count) resolve({ child, lines: [...first], output: () => all, exit });
    });
    void exit.then((code) => reject(new Error(`exited with ${code} before listening: ${all}`)));
  });
}

/** A process that holds the host writer lock (src/apply/writer-lock.ts) until it is killed. */
export interface LockHolder {
  readonly pid: number;
  readonly child: ChildProcess;
  /** SIGSTOP: paused as a VM pause, a frozen container or a suspended laptop pauses it; resolves once the kernel shows it stopped. */
  pause(): Promise<void>;
  /** SIGCONT. */
  resume(): void;
  /** SIGKILL (an OOM kill), resolved once it is gone and reaped. */
  kill(): Promise<void>;
}

/**
 * Starts a node process that takes the writer lock at `lockPath` with amsync's own code
 * (bundled from src by esbuild into `workDir`, so no build is needed) and holds it.
 */
export async function startLockHolder(lockPath: string, workDir: string): Promise<LockHolder> {
  const { build } = await import('esbuild');
  const outfile = join(workDir, 'lock-holder.mjs');
  const lockModule = JSON.stringify(join(root, 'src', 'apply', 'writer-lock.ts'));
  await build({
    stdin: {
      contents: `import { acquireWriterLock } from ${lockModule};\nawait acquireWriterLock(process.argv[2], { timeoutMs: 0 });\nprocess.stdout.write('held\\n');\nsetInterval(() => undefined, 1 << 30);\n`,
      resolveDir: root,
      loader: 'ts',
    },
    bundle: true,
    platform: 'node',
    format: 'esm',
    outfile,
    logLevel: 'silent',
    banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
  });
  const child = spawn(process.execPath, [outfile, lockPath], { cwd: workDir, env: { PATH: process.env.PATH ?? '' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line === 'held') resolve();
    });
    void exited.then(() => reject(new Error(`the lock holder exited before it held the lock: ${output}`)));
  });
  const pid = child.pid!;
  return {
    pid,
    child,
    pause: async () => {
      child.kill('SIGSTOP');
      // Signal delivery is asynchronous: wait until /proc says "T (stopped)".
      while (!/^\d+ \(.*\) T /s.test(readFileSync(`/proc/${pid}/stat`, 'utf8'))) await new Promise((resolve) => setImmediate(resolve));
    },
    resume: () => {
      child.kill('SIGCONT');
    },
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
