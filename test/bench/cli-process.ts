import { spawn } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { amsyncBin } from './emulator-process.js';

const usageReporter = pathToFileURL(fileURLToPath(new URL('./report-usage.mjs', import.meta.url))).href;

export interface CliRunOptions {
  /** The whole environment of the child (plus PATH); nothing is inherited from the runner. */
  readonly env: Readonly<Record<string, string>>;
  readonly cwd: string;
  /** @default 300_000 */
  readonly timeoutMs?: number;
  /** Extra node flags, e.g. `--cpu-prof` (profiles of a fix). */
  readonly nodeFlags?: readonly string[];
}

export interface MeasuredCliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** From spawn to exit, as a user waits for it. */
  readonly wallMs: number;
  /** Peak resident set size of the amsync process, as it reported it at exit. */
  readonly maxRssKb: number | undefined;
  readonly cpuMs: number | undefined;
  /** cpuMs split: the process's own code, and the kernel on its behalf (system calls, page faults). */
  readonly userCpuMs: number | undefined;
  readonly systemCpuMs: number | undefined;
}

/** What bench-results.json keeps of a run: its time, CPU (and the split) and peak RSS. */
export function usageOf(run: MeasuredCliRun): Pick<MeasuredCliRun, 'wallMs' | 'cpuMs' | 'userCpuMs' | 'systemCpuMs' | 'maxRssKb'> {
  return { wallMs: run.wallMs, cpuMs: run.cpuMs, userCpuMs: run.userCpuMs, systemCpuMs: run.systemCpuMs, maxRssKb: run.maxRssKb };
}

/**
 * Runs `amsync ARGS` as a child process, bounded in time, and reads its peak RSS and CPU time
 * (reported by report-usage.mjs, preloaded into the child, on a pipe at fd 3).
 */
export function runAmsync(args: readonly string[], options: CliRunOptions): Promise<MeasuredCliRun> {
  return runNode([amsyncBin, ...args], options);
}

/** Runs `node ARGS` (a script, or `-e CODE`) measured as runAmsync measures amsync. */
export function runNode(args: readonly string[], options: CliRunOptions): Promise<MeasuredCliRun> {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', NO_COLOR: '1', ...options.env };
  const started = performance.now();
  const child = spawn(process.execPath, [...(options.nodeFlags ?? []), '--import', usageReporter, ...args], {
    cwd: options.cwd,
    env,
    stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let usage = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  (child.stdio[3] as NodeJS.ReadableStream).on('data', (c: Buffer) => (usage += c.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 300_000);
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      const wallMs = performance.now() - started;
      let reported: { maxRssKb: number; userCpuUs: number; systemCpuUs: number } | undefined;
      try {
        reported = usage.trim() === '' ? undefined : JSON.parse(usage.trim());
      } catch {
        reported = undefined;
      }
      resolve({
        code,
        stdout,
        stderr,
        wallMs,
        maxRssKb: reported?.maxRssKb,
        cpuMs: reported === undefined ? undefined : (reported.userCpuUs + reported.systemCpuUs) / 1000,
        userCpuMs: reported === undefined ? undefined : reported.userCpuUs / 1000,
        systemCpuMs: reported === undefined ? undefined : reported.systemCpuUs / 1000,
      });
    });
  });
}
