import { EventEmitter } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/daemon-deferred.js';
import { call } from '../helpers/emulator-client.js';
import { runInProcess, type InProcessRun } from '../helpers/in-process.js';
import { assertBuilt, startEmulatorProcess } from '../helpers/spawn.js';

/**
 * `amsync emulator` as a user runs it: its first stdout line, its flags, signals and exit
 * codes. One smoke test runs the built binary and stops it with a real SIGTERM; the others
 * run the command in-process (`run(argv, io)`) and send the signal through the test's source.
 */

const CANARY = 'canary-token-7f3a91';

interface Running {
  /** The first `count` lines of stdout. */
  readonly lines: string[];
  readonly firstLine: string;
  /** stdout and stderr so far. */
  output(): string;
  signal(name: 'SIGINT' | 'SIGTERM'): void;
  readonly exit: Promise<InProcessRun>;
}

/** Starts `amsync emulator ARGS` in-process; resolves once stdout has shown `count` lines. */
async function startInProcess(args: string[], count = 1): Promise<Running> {
  const signals = new EventEmitter();
  let all = '';
  let stdout = '';
  const exit = runInProcess(['emulator', ...args], {
    signals,
    onStdout: (chunk, text) => {
      all += chunk;
      stdout = text;
    },
    onStderr: (chunk) => (all += chunk),
  });
  let ended = false;
  void exit.finally(() => (ended = true));
  const lines = await waitFor(() => {
    const done = stdout.split('\n').slice(0, -1);
    if (done.length >= count) return done.slice(0, count);
    if (ended) throw new Error(`exited before listening: ${all}`);
    return undefined;
  }, 'the emulator to listen');
  return { lines, firstLine: lines[0]!, output: () => all, signal: (name) => void signals.emit(name, name), exit };
}

const runToExit = (args: string[]) => runInProcess(['emulator', ...args]);

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'amsync-emulator-cli-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('amsync emulator (process)', () => {
  it('prints its address first, serves the API, and exits 0 on SIGTERM without printing tokens (the built binary, a real signal)', async () => {
    assertBuilt();
    const run = await startEmulatorProcess(['--port', '0', '--token', CANARY, '--read-only-token', 'ro']);
    const firstLine = run.lines[0]!;
    try {
      expect(firstLine).toMatch(/^amsync emulator listening on http:\/\/127\.0\.0\.1:\d+$/);
      const url = firstLine.slice('amsync emulator listening on '.length);
      const created = await call(url, 'POST', '/api/sshusers', { token: CANARY, body: { username: 'deploy', level: 'n1', password: 'pw' } });
      expect(created.status).toBe(200);
      const list = await call(url, 'GET', '/api/sshusers?cursor=0', { token: CANARY });
      expect(list.json).toMatchObject({ cursor: { current: 0, next: null, previous: null }, users: [{ username: 'deploy' }] });
      expect((await call(url, 'GET', '/api/sshusers', { token: null })).status).toBe(401);
      expect((await call(url, 'DELETE', '/api/sshusers/1', { token: 'ro' })).status).toBe(403);
      expect((await call(url, 'GET', '/_emulator/requests', { token: null })).status).toBe(200);
    } finally {
      run.child.kill('SIGTERM');
    }
    expect(await run.exit).toBe(0);
    expect(run.output()).toContain('1 read-write, 1 read-only and 0 expired token(s) configured');
    expect(run.output()).not.toContain(CANARY);
  });

  it('exits 0 on SIGINT and honours --roles, --data, --page-size-default and --no-control', async () => {
    const roles = join(dir, 'roles.yaml');
    await writeFile(roles, '- { id: 7, name: seven, scopes: [{ name: sshusers, read: true, write: true }] }\n- { id: 8, name: eight }\n');
    const data = join(dir, 'state.json');
    const args = ['--port', '0', '--token', 't', '--roles', roles, '--data', data, '--page-size-default', '1', '--no-control', '--seed', '5'];
    const run = await startInProcess(args);
    let url = '';
    try {
      url = run.firstLine.slice('amsync emulator listening on '.length);
      const listed = (await call(url, 'GET', '/api/roles?cursor=0&size=10', { token: 't' })).json as { cursor: { next: unknown }; roles: unknown[] };
      expect(listed.cursor.next).toBeNull();
      expect(listed.roles).toEqual([
        expect.objectContaining({ id: 7, name: 'seven', scopes: [{ name: 'sshusers', read: true, write: true }] }),
        expect.objectContaining({ id: 8, name: 'eight', scopes: [] }),
      ]);
      expect((await call(url, 'POST', '/api/3rdparty/apikeys', { token: 't', body: { name: 'a', roles: [8] } })).status).toBe(200);
      expect((await call(url, 'POST', '/api/3rdparty/apikeys', { token: 't', body: { name: 'b' } })).status).toBe(200);
      expect(((await call(url, 'GET', '/api/3rdparty/apikeys', { token: 't' })).json as { apikeys: unknown[] }).apikeys).toHaveLength(1);
      expect((await call(url, 'GET', '/_emulator/state', { token: 't' })).status).toBe(404);
    } finally {
      run.signal('SIGINT');
    }
    expect((await run.exit).code).toBe(0);
    // The same data file on the next start brings the keys back.
    const again = await startInProcess(['--port', '0', '--token', 't', '--roles', roles, '--data', data]);
    try {
      const url2 = again.firstLine.slice('amsync emulator listening on '.length);
      expect(((await call(url2, 'GET', '/api/3rdparty/apikeys', { token: 't' })).json as { apikeys: { name: string }[] }).apikeys.map((k) => k.name)).toEqual(['a', 'b']);
    } finally {
      again.signal('SIGTERM');
    }
    expect((await again.exit).code).toBe(0);
  });

  it('--refresh-token enables the token endpoint; --access-token-ttl and --rotate-refresh-tokens shape it; keys are never printed', async () => {
    const key = 'ik-canary-5d21';
    const run = await startInProcess(['--port', '0', '--refresh-token', key, '--access-token-ttl', '2', '--rotate-refresh-tokens']);
    try {
      const url = run.firstLine.slice('amsync emulator listening on '.length);
      const res = await call(url, 'POST', '/api/v1/oauth2/token', { token: null, body: { grant_type: 'refresh_token', refresh_token: key } });
      expect(res.status).toBe(200);
      const answer = res.json as { access_token: string; refresh_token: string; expires_in: number };
      expect(answer.expires_in).toBe(2);
      expect(answer.refresh_token).not.toBe(key);
      expect((await call(url, 'GET', '/api/sshusers', { token: answer.access_token })).status).toBe(200);
    } finally {
      run.signal('SIGTERM');
    }
    expect((await run.exit).code).toBe(0);
    expect(run.output()).toContain('1 integrator key(s): access tokens live 2 s, refresh tokens rotate');
    expect(run.output()).not.toContain(key);
  });

  it('--tenants N serves t1 … tN under /t/<name>/ and says so on a second stdout line', async () => {
    const run = await startInProcess(['--port', '0', '--token', 't', '--tenants', '3'], 2);
    try {
      expect(run.firstLine).toMatch(/^amsync emulator listening on http:\/\/127\.0\.0\.1:\d+$/);
      expect(run.lines[1]).toBe('tenants: 3 (t1 … t3) under /t/<name>/');
      const url = run.firstLine.slice('amsync emulator listening on '.length);
      expect((await call(url, 'POST', '/t/t3/api/sshusers', { token: 't', body: { username: 'deploy', level: 'n1', password: 'pw' } })).status).toBe(200);
      expect(((await call(url, 'GET', '/t/t3/_emulator/state', { token: null })).json as { sshUsers: unknown[] }).sshUsers).toHaveLength(1);
      expect(((await call(url, 'GET', '/t/t1/_emulator/state', { token: null })).json as { sshUsers: unknown[] }).sshUsers).toHaveLength(0);
      expect((await call(url, 'GET', '/api/sshusers', { token: 't' })).status).toBe(404);
    } finally {
      run.signal('SIGTERM');
    }
    expect((await run.exit).code).toBe(0);
    expect(run.output()).toMatch(/control API at http:\/\/127\.0\.0\.1:\d+\/t\/<name>\/_emulator\//);
  });

  it('bad flags exit 64 with a loud message', async () => {
    const cases: [string[], RegExp][] = [
      [['--port', 'abc', '--token', 't'], /Expected `--port` to be an integer from 0 to 65535, got 'abc'/],
      [['--port', '0'], /Expected at least one `--token T`/],
      [['--token', 't', '--fail-rate', '2'], /Expected `--fail-rate` to be a number from 0 to 1, got '2'/],
      [['--token', 't', '--rate-limit', '0'], /Expected `--rate-limit` to be a number above 0, got '0'/],
      [['--token', 't', '--page-size-max', '10', '--page-size-default', '20'], /Expected `--page-size-default` to be an integer from 1 to 10, got '20'/],
      [['--token', 't', '--bogus'], /unknown option/],
      [['--refresh-token', 'k', '--access-token-ttl', '0'], /Expected `--access-token-ttl` to be a number of seconds above 0/],
      [['--refresh-token', 'k', '--refresh-token-grace', 'x'], /Expected `--refresh-token-grace`/],
      [['--token', 't', '--tenants', '0'], /Expected `--tenants` to be an integer from 1 to 10000, got '0'/],
    ];
    for (const [args, message] of cases) {
      const result = await runToExit(args);
      expect(result.code, args.join(' ')).toBe(64);
      expect(result.stderr).toMatch(message);
      expect(result.stdout).toBe('');
    }
  });

  it('an unreadable roles file exits 65', async () => {
    const result = await runToExit(['--token', 't', '--roles', join(dir, 'missing.yaml')]);
    expect(result.code).toBe(65);
    expect(result.stderr).toMatch(/roles file/);
  });
});
