import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { startEmulator } from '../../src/emulator/index.js';

/** The repository's CLI launcher; the benchmark runs the built CLI (`npm run bench` builds first). */
export const amsyncBin = fileURLToPath(new URL('../../bin/amsync.js', import.meta.url));

export interface EmulatorProcessOptions {
  readonly token: string;
  /** Server rate limit in requests per second; undefined = unlimited. */
  readonly rateLimit?: number;
  /** Mean added latency per request (each waits 0.5 L to 1.5 L). @default 0 */
  readonly latencyMs?: number;
  /** @default 100 */
  readonly pageSizeMax?: number;
  /** Seed of the emulator's jitter, so runs are comparable. @default 1 */
  readonly seed?: number;
  /**
   * In this process instead of a child (the small benchmark inside `npm test`: a few hundred
   * items, and no figure about the emulator's own process). @default false
   */
  readonly inProcess?: boolean;
}

/** One entry of the emulator's request log (`GET /_emulator/requests`). */
export interface LoggedRequest {
  readonly seq: number;
  readonly method: string;
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  readonly status: number;
  /** ISO-8601 time of arrival. */
  readonly time: string;
  readonly durationMs: number;
}

/** `amsync emulator` as a child process, driven through its control API. */
export interface EmulatorProcess {
  readonly url: string;
  readonly pid: number;
  /** Empties the store (ids restart at 1) and the request log. */
  reset(): Promise<void>;
  /** Adds `bench-user-<id>` and `bench-key-<id>` items (ids from 1 after a reset). */
  seed(counts: { sshUsers: number; apikeys: number }): Promise<void>;
  clearRequests(): Promise<void>;
  /** Changes fault settings (`PUT /_emulator/faults`), e.g. `{ rateLimitRetryAfter: false }`. */
  setFaults(patch: Readonly<Record<string, unknown>>): Promise<void>;
  requests(): Promise<LoggedRequest[]>;
  close(): Promise<void>;
}

/**
 * Starts the emulator in its own process, as the issue asks: at 100k items per kind it holds
 * hundreds of MB, which must not count against the process being measured.
 */
export async function startEmulatorProcess(options: EmulatorProcessOptions): Promise<EmulatorProcess> {
  if (options.inProcess === true) return startInProcess(options);
  const args = [amsyncBin, 'emulator', '--port', '0', '--token', options.token, '--seed', String(options.seed ?? 1)];
  args.push('--page-size-max', String(options.pageSizeMax ?? 100));
  if (options.rateLimit !== undefined) args.push('--rate-limit', String(options.rateLimit));
  if (options.latencyMs !== undefined && options.latencyMs > 0) args.push('--latency-ms', String(options.latencyMs));
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`the emulator exited with ${code} before listening: ${stderr}`)));
  });
  const prefix = 'amsync emulator listening on ';
  if (!line.startsWith(prefix)) throw new Error(`unexpected first line from the emulator: ${line}`);
  const url = line.slice(prefix.length).trim();

  const control = async (method: string, name: string, body?: unknown): Promise<unknown> => {
    const res = await fetch(`${url}/_emulator/${name}`, {
      method,
      headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} /_emulator/${name} answered ${res.status}: ${text.slice(0, 300)}`);
    return text === '' ? undefined : JSON.parse(text);
  };

  return {
    url,
    pid: child.pid!,
    async reset() {
      await control('POST', 'reset');
      await control('DELETE', 'requests');
    },
    async seed(counts) {
      await control('POST', 'seed', { count: counts, returnItems: false });
    },
    async clearRequests() {
      await control('DELETE', 'requests');
    },
    async setFaults(patch) {
      await control('PUT', 'faults', patch);
    },
    async requests() {
      const body = (await control('GET', 'requests')) as { requests: LoggedRequest[]; dropped: number };
      if (body.dropped > 0) throw new Error(`the emulator dropped ${body.dropped} log entries: the figures would be wrong`);
      return body.requests;
    },
    async close() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** The same emulator and control operations, in this process. */
async function startInProcess(options: EmulatorProcessOptions): Promise<EmulatorProcess> {
  const emu = await startEmulator({
    tokens: [options.token],
    seed: options.seed ?? 1,
    pageSizeMax: options.pageSizeMax ?? 100,
    ...(options.rateLimit === undefined ? {} : { rateLimit: options.rateLimit }),
    ...(options.latencyMs === undefined || options.latencyMs <= 0 ? {} : { latencyMs: options.latencyMs }),
  });
  return {
    url: emu.url,
    pid: process.pid,
    async reset() {
      emu.reset();
      emu.clearRequests();
    },
    async seed(counts) {
      emu.seed({ count: counts });
    },
    async clearRequests() {
      emu.clearRequests();
    },
    async setFaults(patch) {
      emu.setFaults(patch);
    },
    async requests() {
      return emu.requests().map((r) => ({ seq: r.seq, method: r.method, path: r.path, query: r.query, status: r.status, time: r.time, durationMs: r.durationMs }));
    },
    close: () => emu.close(),
  };
}
