import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { waitFor } from './daemon-deferred.js';

/** `amsync daemon` as a user runs it: a child process, its JSON log lines, its exit. */

export const root = fileURLToPath(new URL('../..', import.meta.url));
/** AMSYNC_BIN runs a build placed elsewhere; by default the package's own launcher. */
export const bin = process.env.AMSYNC_BIN ?? join(root, 'bin', 'amsync.js');

export interface LogLine {
  readonly level: number;
  readonly msg: string;
  readonly [key: string]: unknown;
}

export interface DaemonProcess {
  readonly child: ChildProcess;
  /** `http://127.0.0.1:PORT` of /healthz, /readyz, /metrics. */
  readonly url: string;
  /** Every JSON log line so far (stderr). */
  readonly logs: LogLine[];
  /** stdout and stderr, raw. */
  output(): string;
  readonly exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Waits for a log line that matches; returns it. */
  waitForLog(match: (line: LogLine) => boolean, what: string, timeoutMs?: number, from?: number): Promise<LogLine>;
  get(path: string): Promise<{ status: number; text: string }>;
  /** SIGKILL if still running (test cleanup). */
  kill(): Promise<void>;
}

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
    try {
      logs.push(JSON.parse(line) as LogLine);
    } catch {
      // not a log line (an error printed by the CLI entry)
    }
  });
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  let exited = false;
  void exit.then(() => (exited = true));

  const waitForLog: DaemonProcess['waitForLog'] = (match, what, timeoutMs = 15_000, from = 0) =>
    waitFor(() => {
      const found = logs.slice(from).find(match);
      if (found) return found;
      if (exited) throw new Error(`the daemon exited while waiting for ${what}:\n${raw}`);
      return undefined;
    }, `${what}; output so far:\n${raw.slice(-4000)}`, timeoutMs);

  const started = await waitForLog((l) => l.msg === 'daemon started', 'the daemon to start');
  const url = String(started.url);
  return {
    child,
    url,
    logs,
    output: () => raw,
    exit,
    waitForLog,
    async get(path) {
      const res = await fetch(`${url}${path}`);
      return { status: res.status, text: await res.text() };
    },
    async kill() {
      if (!exited) {
        child.kill('SIGKILL');
        await exit;
      }
    },
  };
}
