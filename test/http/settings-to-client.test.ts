import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { defaultRetryOptions, type RetryEvent, type RetryOptions } from '../../src/api/index.js';
import { clientOptionsFrom, retryOptionsFrom } from '../../src/app/client-options.js';
import { createServiceContext, type ServiceContext } from '../../src/cli/service-context.js';
import { createLogger } from '../../src/obs/logger.js';
import { defaultSettings, type Settings } from '../../src/settings/index.js';
import { serviceUrl, service, testToken, useStrictHttpMock } from '../helpers/http-mock.js';

useStrictHttpMock();

let dir: string;
let context: ServiceContext | undefined;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'amsync-settings-client-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => {
  context?.close();
  context = undefined;
});

const user = { id: 7, username: 'deploy', level: 'n1' };
const env = { AMSYNC_URL: serviceUrl, AMSYNC_TOKEN: testToken };

function settingsFile(text: string): string {
  const path = join(dir, `settings-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(path, text);
  return path;
}

describe('every retry setting reaches the client under the client’s name', () => {
  it('the defaults of the settings and of the client are one set', () => {
    expect(retryOptionsFrom(defaultSettings.retry)).toEqual(defaultRetryOptions);
    expect(defaultSettings.retry.maxElapsedMs).toBe(120_000);
    expect(defaultRetryOptions.maxElapsedMs).toBe(120_000);
  });

  it('each key maps to its own client option (distinct values, so a swap shows)', () => {
    const settings: Settings = {
      ...defaultSettings,
      retry: { maxAttempts: 3, baseDelayMs: 11, maxDelayMs: 22, maxElapsedMs: 33, retryAfterCapMs: 44 },
    };
    expect(clientOptionsFrom(settings, serviceUrl).retry).toEqual({
      maxAttempts: 3,
      baseDelayMs: 11,
      maxDelayMs: 22,
      maxElapsedMs: 33,
      maxRetryAfterMs: 44,
      maxConnectElapsedMs: defaultRetryOptions.maxConnectElapsedMs,
    });
  });

  it('a key the client does not know does not compile', () => {
    const mapped = retryOptionsFrom(defaultSettings.retry);
    // @ts-expect-error the settings' name for the Retry-After cap is not the client's
    const misnamed: RetryOptions = { ...mapped, retryAfterCapMs: 100 };
    expect(misnamed.maxRetryAfterMs).toBe(defaultRetryOptions.maxRetryAfterMs);
  });

  it('retry.retryAfterCapMs from a settings file caps the wait the client makes (it was ignored)', async () => {
    const file = settingsFile('retry:\n  retryAfterCapMs: 100\n');
    context = await createServiceContext({ settings: file }, { env, stderr: process.stderr }, { logger: createLogger({ level: 'silent' }) });
    const client = context.client();
    const retries: RetryEvent[] = [];
    client.events.on('retry', (event) => retries.push(event));
    service().get('/api/sshusers/7').reply(503, '', { 'Retry-After': '3' }).get('/api/sshusers/7').reply(200, user);
    await expect(client.fetchSshUser(7)).resolves.toMatchObject({ id: 7 });
    expect(retries).toEqual([expect.objectContaining({ source: 'retry_after', delayMs: 100 })]);
  });
});

/** A pino destination that keeps the lines. */
function sink(): { stream: Writable; lines: () => Record<string, unknown>[] } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  const lines = () =>
    chunks
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { stream, lines };
}

describe('retried failures log one line per attempt, at debug', () => {
  async function retriedOnce(level: 'info' | 'debug'): Promise<Record<string, unknown>[]> {
    const out = sink();
    const file = settingsFile('retry:\n  baseDelayMs: 1\n  maxDelayMs: 1\n');
    context = await createServiceContext({ settings: file }, { env, stderr: process.stderr }, { logger: createLogger({ level, destination: out.stream }) });
    service().get('/api/sshusers/7').reply(500).get('/api/sshusers/7').reply(200, user);
    await context.client().fetchSshUser(7);
    return out.lines().filter((line) => line.component === 'client');
  }

  it('a retry that works is not news at info', async () => {
    expect(await retriedOnce('info')).toEqual([]);
  });

  it('a 503 storm that passes: nothing at info; at debug, one line per attempt', async () => {
    const storm = async (level: 'info' | 'debug') => {
      const out = sink();
      const file = settingsFile('retry:\n  baseDelayMs: 1\n  maxDelayMs: 1\n');
      context = await createServiceContext({ settings: file }, { env, stderr: process.stderr }, { logger: createLogger({ level, destination: out.stream }) });
      service().get('/api/sshusers/7').times(3).reply(503).get('/api/sshusers/7').reply(200, user);
      await context.client().fetchSshUser(7);
      context.close();
      return out.lines().filter((line) => line.component === 'client');
    };
    expect(await storm('info')).toEqual([]);
    const debug = await storm('debug');
    expect(debug.map((line) => [line.attempt, line.status, line.msg])).toEqual([
      [1, 503, 'request failed; retrying'],
      [2, 503, 'request failed; retrying'],
      [3, 503, 'request failed; retrying'],
      [4, 200, 'request'],
    ]);
  });

  it('at debug: one line per attempt, the retried one saying when the next comes', async () => {
    const lines = await retriedOnce('debug');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({ level: 20, msg: 'request failed; retrying', status: 500, attempt: 1, retryInMs: expect.any(Number) });
    expect(lines[1]).toMatchObject({ level: 20, msg: 'request', status: 200, attempt: 2 });
    expect(lines[1]).not.toHaveProperty('retryInMs');
  });
});
