import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exitCodeFor, InvalidInputError } from '../../../src/errors.js';
import { settingsFromEnv } from '../../../src/settings/env-settings.js';
import { loadSettings } from '../../../src/settings/load-settings.js';
import { mergeSettings } from '../../../src/settings/merge-settings.js';
import { parseSettings } from '../../../src/settings/parse-settings.js';
import { defaultSettings, rules, setIn, settingName, settingOptions } from '../../../src/settings/index.js';
import { stringify } from 'yaml';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'amsync-settings-'));
  mkdirSync(join(dir, 'conf'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function settingsFile(text: string, name = 'conf/amsync.yaml'): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

async function rejection(promise: Promise<unknown>): Promise<InvalidInputError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(InvalidInputError);
  expect(exitCodeFor(error)).toBe(65);
  return error as InvalidInputError;
}

describe('built-in defaults', () => {
  it('with nothing given, the settings are the defaults', async () => {
    expect(await loadSettings({ env: {} })).toEqual(defaultSettings);
  });

  it('are exactly the documented values', () => {
    expect(defaultSettings).toEqual({
      stateFile: '.amsync/state.json',
      http: { timeoutMs: 30000, allowInsecureHttp: false, maxResponseBytes: 33554432 },
      initialRate: 10,
      concurrency: 64,
      retry: { maxAttempts: 8, baseDelayMs: 250, maxDelayMs: 30000, maxElapsedMs: 120000, retryAfterCapMs: 300000 },
      pageSize: 1000,
      listDeadlineMs: 300000,
      maxDeletes: 10,
      lockTimeoutMs: 0,
      daemon: { schedule: '*/5 * * * *', listen: '127.0.0.1:9477', mode: 'apply', debounceMs: 1000, shutdownGraceMs: 30000, runDeadlineMs: 600000, windows: [] },
      notify: { webhooks: [], queueSize: 1000, timeoutMs: 10000, maxAttempts: 5 },
      logLevel: 'info',
    });
  });

  it('config/default.yaml documents every key and equals the built-in defaults', () => {
    const text = readFileSync('config/default.yaml', 'utf8');
    const parsed = parseSettings(text, 'default.yaml');
    expect(parsed.errors).toEqual([]);
    expect(mergeSettings(defaultSettings, [parsed.value!])).toEqual(defaultSettings);
    // Every key appears (optional ones as null), each group complete.
    expect(Object.keys(parsed.value!).sort()).toEqual(
      ['url', 'tokenFile', 'refreshTokenFile', 'stateFile', 'tokensDir', 'http', 'rate', 'initialRate', 'concurrency', 'retry', 'pageSize', 'listDeadlineMs', 'maxDeletes', 'lockTimeoutMs', 'daemon', 'auditLog', 'notify', 'logLevel', 'kubernetesSecret', 'integratorKeySecret'].sort(),
    );
    expect(Object.keys(parsed.value!.notify!).sort()).toEqual(Object.keys(defaultSettings.notify).sort());
    expect(Object.keys(parsed.value!.http!).sort()).toEqual(['allowInsecureHttp', 'caFile', 'maxResponseBytes', 'timeoutMs']);
    expect(Object.keys(parsed.value!.retry!).sort()).toEqual(Object.keys(defaultSettings.retry).sort());
    // leaderElect, approvalsFile and socket have no default (off): written as null.
    expect(Object.keys(parsed.value!.daemon!).sort()).toEqual([...Object.keys(defaultSettings.daemon), 'leaderElect', 'approvalsFile', 'socket'].sort());
    // Every key has a comment above it.
    for (const line of text.split('\n')) {
      const key = /^(\s*)([A-Za-z]+):/.exec(line);
      if (!key) continue;
      const before = text.split('\n')[text.split('\n').indexOf(line) - 1] ?? '';
      if (['http', 'retry', 'daemon', 'notify'].includes(key[2]!)) continue;
      expect(before.trim().startsWith('#'), `no comment above ${key[2]}`).toBe(true);
    }
  });
});

describe('layering: defaults < --settings FILE < AMSYNC_* environment < flags', () => {
  it('a settings file overrides defaults key by key, groups merged', async () => {
    const file = settingsFile('url: https://access.example.com\nconcurrency: 4\nretry:\n  maxAttempts: 3\ndaemon:\n  mode: observe\n');
    const settings = await loadSettings({ settingsFile: file, env: {} });
    expect(settings.url).toBe('https://access.example.com');
    expect(settings.concurrency).toBe(4);
    expect(settings.retry).toEqual({ ...defaultSettings.retry, maxAttempts: 3 });
    expect(settings.daemon).toEqual({ ...defaultSettings.daemon, mode: 'observe' });
    expect(settings.pageSize).toBe(1000);
  });

  it('the environment overrides the file, flags override the environment', async () => {
    const file = settingsFile('url: https://from-file.example\nrate: 5\nmaxDeletes: 1\n');
    const env = { AMSYNC_URL: 'https://from-env.example', AMSYNC_RATE: '7.5', AMSYNC_PAGE_SIZE: '50' };
    const settings = await loadSettings({ settingsFile: file, env, flags: { url: 'https://from-flag.example', pageSize: 25 } });
    expect(settings.url).toBe('https://from-flag.example');
    expect(settings.rate).toBe(7.5);
    expect(settings.pageSize).toBe(25);
    expect(settings.maxDeletes).toBe(1);
  });

  it('AMSYNC_SETTINGS names the file when --settings is not given', async () => {
    const file = settingsFile('logLevel: debug\n', 'env-named.yaml');
    expect((await loadSettings({ env: { AMSYNC_SETTINGS: file } })).logLevel).toBe('debug');
  });

  it('null in a file unsets an optional value', async () => {
    const settings = mergeSettings({ ...defaultSettings, rate: 3, tokensDir: 'x' }, [{ rate: null, tokensDir: null }]);
    expect(settings.rate).toBeUndefined();
    expect('tokensDir' in settings).toBe(false);
  });

  it("relative paths in a settings file are relative to the file's folder", async () => {
    const file = settingsFile('stateFile: state/amsync.json\ntokenFile: token\nrefreshTokenFile: keys/ik\ntokensDir: /abs/tokens\nhttp:\n  caFile: ca.pem\n');
    const settings = await loadSettings({ settingsFile: file, env: {} });
    expect(settings.stateFile).toBe(join(dir, 'conf', 'state/amsync.json'));
    expect(settings.tokenFile).toBe(join(dir, 'conf', 'token'));
    expect(settings.refreshTokenFile).toBe(join(dir, 'conf', 'keys/ik'));
    expect(settings.tokensDir).toBe('/abs/tokens');
    expect(settings.http.caFile).toBe(join(dir, 'conf', 'ca.pem'));
  });

  it("every path setting of the option table, written relative in a settings file, is relative to the file's folder", async () => {
    const paths = settingOptions.filter((o) => o.rule === rules.path);
    expect(paths.map(settingName)).toContain('daemon.approvalsFile');
    const layer: Record<string, unknown> = {};
    for (const o of paths) setIn(layer, o.path, `rel/${settingName(o)}`);
    const file = settingsFile(stringify(layer));
    const settings = await loadSettings({ settingsFile: file, env: {} });
    for (const o of paths) {
      const value = o.path.reduce<unknown>((v, k) => (v as Record<string, unknown>)[k], settings);
      expect(value, settingName(o)).toBe(join(dir, 'conf', `rel/${settingName(o)}`));
    }
  });

  it('every documented AMSYNC_* variable lands where it should', () => {
    const { layer, errors } = settingsFromEnv({
      AMSYNC_URL: 'http://127.0.0.1:8080',
      AMSYNC_TOKEN_FILE: 't',
      AMSYNC_REFRESH_TOKEN_FILE: 'ik',
      AMSYNC_STATE_FILE: 's.json',
      AMSYNC_TOKENS_DIR: 'tokens',
      AMSYNC_HTTP_TIMEOUT_MS: '1000',
      AMSYNC_CA_FILE: 'ca.pem',
      AMSYNC_ALLOW_INSECURE_HTTP: 'true',
      AMSYNC_RATE: '20',
      AMSYNC_INITIAL_RATE: '2',
      AMSYNC_CONCURRENCY: '3',
      AMSYNC_RETRY_MAX_ATTEMPTS: '2',
      AMSYNC_RETRY_MAX_ELAPSED_MS: '5000',
      AMSYNC_PAGE_SIZE: '10',
      AMSYNC_MAX_DELETES: '0',
      AMSYNC_DAEMON_SCHEDULE: '*/10 * * * * *',
      AMSYNC_DAEMON_LISTEN: '0.0.0.0:9000',
      AMSYNC_DAEMON_MODE: 'observe',
      AMSYNC_LOG_LEVEL: 'warn',
    });
    expect(errors).toEqual([]);
    expect(layer).toEqual({
      url: 'http://127.0.0.1:8080',
      tokenFile: 't',
      refreshTokenFile: 'ik',
      stateFile: 's.json',
      tokensDir: 'tokens',
      http: { timeoutMs: 1000, caFile: 'ca.pem', allowInsecureHttp: true },
      rate: 20,
      initialRate: 2,
      concurrency: 3,
      retry: { maxAttempts: 2, maxElapsedMs: 5000 },
      pageSize: 10,
      maxDeletes: 0,
      daemon: { schedule: '*/10 * * * * *', listen: '0.0.0.0:9000', mode: 'observe' },
      logLevel: 'warn',
    });
  });

  it('logLevelGiven says a level was asked for (flag, AMSYNC_LOG_LEVEL or the settings file), not the default', async () => {
    expect((await loadSettings({ env: {} })).logLevelGiven).toBeUndefined();
    expect((await loadSettings({ env: {}, flags: { logLevel: 'info' } })).logLevelGiven).toBe(true);
    expect((await loadSettings({ env: { AMSYNC_LOG_LEVEL: 'info' } })).logLevelGiven).toBe(true);
    expect((await loadSettings({ settingsFile: settingsFile('logLevel: info\n', 'level.yaml'), env: {} })).logLevelGiven).toBe(true);
  });

  it('an empty variable counts as unset', async () => {
    expect((await loadSettings({ env: { AMSYNC_URL: '', AMSYNC_RATE: '' } })).url).toBeUndefined();
  });

  it('AMSYNC_TOKEN becomes a Secret; it is never read from a file or flag', async () => {
    const settings = await loadSettings({ env: { AMSYNC_TOKEN: 'tok-canary-123' } });
    expect(settings.token?.reveal()).toBe('tok-canary-123');
    expect(JSON.stringify(settings)).not.toContain('tok-canary-123');
  });

  it('AMSYNC_REFRESH_TOKEN (the integrator key) becomes a Secret too', async () => {
    const settings = await loadSettings({ env: { AMSYNC_REFRESH_TOKEN: 'ik-canary-456' } });
    expect(settings.refreshToken?.reveal()).toBe('ik-canary-456');
    expect(JSON.stringify(settings)).not.toContain('ik-canary-456');
  });

  it('an integrator key in a settings file is refused, pointing at AMSYNC_REFRESH_TOKEN', async () => {
    const error = await rejection(loadSettings({ settingsFile: settingsFile('refreshToken: ik-canary\n', 'ik.yaml'), env: {} }));
    expect(error.diagnostics[0]!.message).toContain('set AMSYNC_REFRESH_TOKEN');
    expect(JSON.stringify(error.diagnostics)).not.toContain('ik-canary');
  });
});

describe('bad settings are refused before anything is sent', () => {
  it('a bad environment value is exit 65 naming the variable', async () => {
    const error = await rejection(loadSettings({ env: { AMSYNC_RATE: 'abc', AMSYNC_CONCURRENCY: '0', AMSYNC_ALLOW_INSECURE_HTTP: 'maybe' } }));
    expect(error.code).toBe('env_invalid');
    expect(error.diagnostics.map((d) => d.message)).toEqual([
      "AMSYNC_ALLOW_INSECURE_HTTP must be true or false, got 'maybe'",
      "AMSYNC_RATE must be a number greater than 0, got 'abc'",
      "AMSYNC_CONCURRENCY must be a whole number from 1 upwards, got '0'",
    ]);
    expect(error.diagnostics.map((d) => d.path)).toEqual(['AMSYNC_ALLOW_INSECURE_HTTP', 'AMSYNC_RATE', 'AMSYNC_CONCURRENCY']);
  });

  it('a bad URL in the environment', async () => {
    const error = await rejection(loadSettings({ env: { AMSYNC_URL: 'ftp://x' } }));
    expect(error.diagnostics[0]!.message).toBe("AMSYNC_URL must be an http:// or https:// URL, got 'ftp://x'");
  });

  it('a bad settings file gives positioned errors, all of them, in file order', async () => {
    const file = settingsFile('concurency: 4\nrate: 0\nhttp:\n  timeoutMs: 1.5\ndaemon:\n  schedule: every minute\n  listen: localhost\nlogLevel: verbose\n', 'bad.yaml');
    const error = await rejection(loadSettings({ settingsFile: file, env: {} }));
    expect(error.code).toBe('settings_invalid');
    expect(error.diagnostics.map((d) => [d.position?.line, d.position?.col, d.code])).toEqual([
      [1, 1, 'unknown_key'],
      [2, 7, 'out_of_range'],
      [4, 14, 'invalid_type'],
      [6, 13, 'invalid_value'],
      [7, 11, 'invalid_value'],
      [8, 11, 'invalid_value'],
    ]);
    expect(error.diagnostics[0]!.message).toBe("unknown key 'concurency' — did you mean 'concurrency'?");
    expect(error.diagnostics[0]!.position?.file).toBe(file);
    expect(error.diagnostics[3]!.message).toContain("'every minute' is not a cron expression");
  });

  it('a token in a settings file is refused, pointing at AMSYNC_TOKEN', async () => {
    const error = await rejection(loadSettings({ settingsFile: settingsFile('token: abc-canary\n', 'tok.yaml'), env: {} }));
    expect(error.diagnostics[0]!.message).toContain('set AMSYNC_TOKEN');
    expect(JSON.stringify(error.diagnostics)).not.toContain('abc-canary');
  });

  it('file and environment problems are reported together', async () => {
    const error = await rejection(loadSettings({ settingsFile: settingsFile('pageSize: 0\n', 'both.yaml'), env: { AMSYNC_MAX_DELETES: '-1' } }));
    expect(error.diagnostics.map((d) => d.path)).toEqual(['pageSize', 'AMSYNC_MAX_DELETES']);
  });

  it('a missing settings file', async () => {
    const error = await rejection(loadSettings({ settingsFile: join(dir, 'missing.yaml'), env: {} }));
    expect(error.code).toBe('settings_unreadable');
  });
});
