import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root and the built CLI's launcher (npm test builds before vitest runs). */
export const root = fileURLToPath(new URL('../..', import.meta.url));
export const bin = join(root, 'bin', 'amsync.js');

export interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export function assertBuilt(): void {
  if (!existsSync(join(root, 'dist', 'cli', 'main.js'))) throw new Error('The CLI tests run the build: run `npm run build` (npm test does) first.');
}

/**
 * Runs `amsync ARGS` as a user would: a child process with only the environment given (plus
 * PATH), bounded in time. Never inherits AMSYNC_* variables from the test runner.
 */
export function runCli(args: readonly string[], options: { env?: Record<string, string | undefined>; cwd?: string; timeoutMs?: number } = {}): Promise<CliRun> {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', NO_COLOR: '1' };
  for (const [k, v] of Object.entries(options.env ?? {})) if (v !== undefined) env[k] = v;
  const child = spawn(process.execPath, [bin, ...args], { cwd: options.cwd ?? root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
  return new Promise((resolve) => {
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
