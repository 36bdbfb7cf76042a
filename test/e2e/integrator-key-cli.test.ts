import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { runInProcess } from '../helpers/in-process.js';

/**
 * `amsync sync` logging in with an integrator key, as a user runs it (DESIGN.md §4): the key
 * file, its rotation written back so the next run continues, the exit codes of a rejected key
 * and of two credentials at once, and no token or key in any output.
 */

const KEY = 'integrator-key-canary-8e27';
const PASSWORD = 'pw-canary-integrator-5b1';
let dir: string;
let emu: RunningEmulator;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'amsync-ik-cli-'));
  await writeFile(join(dir, 'access.yaml'), 'sshUsers:\n  - username: deploy\n    password: { env: DEPLOY_PASSWORD }\n');
});

afterEach(async () => {
  await emu?.close();
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function keyFile(name: string, content: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, `${content}\n`, { mode: 0o600 });
  return path;
}

function env(extra: Record<string, string>): Record<string, string> {
  return { AMSYNC_URL: emu.url, DEPLOY_PASSWORD: PASSWORD, AMSYNC_STATE_FILE: join(dir, 'state.json'), ...extra };
}

function expectNoSecret(output: string, secrets: readonly string[]): void {
  for (const s of secrets) expect(output).not.toContain(s);
  // No JWT-shaped token (access tokens, rotated keys) anywhere in what amsync printed.
  expect(output).not.toMatch(/eyJ[A-Za-z0-9_-]{10,}/);
}

describe('amsync sync with an integrator key', () => {
  it('exchanges the key, syncs, writes the rotated key back (0600), and the next run continues with it', async () => {
    emu = await startEmulator({ refreshTokens: [KEY], rotateRefreshTokens: true, refreshTokenGraceSeconds: 0 });
    const file = await keyFile('rotating-key', KEY);
    const first = await runInProcess(['sync', '-f', join(dir, 'access.yaml')], { env: env({ AMSYNC_REFRESH_TOKEN_FILE: file }) });
    expect(first.stderr).not.toMatch(/error/i);
    expect(first.code).toBe(0);
    expect(emu.state().sshUsers.map((u) => u.username)).toEqual(['deploy']);
    const rotated = (await readFile(file, 'utf8')).trim();
    expect(rotated).not.toBe(KEY);
    expect(rotated).toMatch(/^eyJ/);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    // The old key no longer works (no grace): only the written-back key lets this run in.
    const second = await runInProcess(['plan', '-f', join(dir, 'access.yaml'), '--detailed-exitcode', '--refresh-token-file', file], { env: env({}) });
    expect(second.code).toBe(0);
    expect(emu.oauth()).toMatchObject({ exchanges: 2, rejected: 0 });
    expect(emu.requests().filter((r) => r.status === 401)).toEqual([]);
    for (const run of [first, second]) expectNoSecret(run.stdout + run.stderr, [KEY, rotated, PASSWORD]);
  });

  it('a rejected key exits 1 with "integrator key rejected: …", after one exchange', async () => {
    emu = await startEmulator({ refreshTokens: ['the-real-key'] });
    const file = await keyFile('wrong-key', KEY);
    const run = await runInProcess(['sync', '-f', join(dir, 'access.yaml')], { env: env({ AMSYNC_REFRESH_TOKEN_FILE: file }) });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^error: integrator key rejected: POST \/api\/v1\/oauth2\/token answered 401/m);
    expect(run.stderr).toContain(file);
    expect(emu.requests().map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual(['POST /api/v1/oauth2/token 401']);
    expectNoSecret(run.stdout + run.stderr, [KEY]);
  });

  it('AMSYNC_REFRESH_TOKEN works too', async () => {
    emu = await startEmulator({ refreshTokens: [KEY] });
    const run = await runInProcess(['plan', '-f', join(dir, 'access.yaml')], { env: env({ AMSYNC_REFRESH_TOKEN: KEY }) });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('sshUser "deploy" will be created');
    expectNoSecret(run.stdout + run.stderr, [KEY]);
  });

  it('an access token and an integrator key together exit 64 naming both, and send nothing', async () => {
    emu = await startEmulator({ tokens: ['tok'], refreshTokens: [KEY] });
    const file = await keyFile('both-key', KEY);
    const run = await runInProcess(['plan', '-f', join(dir, 'access.yaml')], { env: env({ AMSYNC_TOKEN: 'tok', AMSYNC_REFRESH_TOKEN_FILE: file }) });
    expect(run.code).toBe(64);
    expect(run.stderr).toContain('AMSYNC_TOKEN');
    expect(run.stderr).toContain('AMSYNC_REFRESH_TOKEN_FILE');
    expect(emu.requests()).toEqual([]);
    const flag = await runInProcess(['plan', '-f', join(dir, 'access.yaml'), '--refresh-token', KEY], { env: env({}) });
    expect(flag.code).toBe(64);
    expectNoSecret(flag.stdout + flag.stderr, [KEY]);
  });

  // Issue 27, finding 4: a rotating service and a key file on a read-only volume exited 0 with a
  // log line, and the next run was locked out. The folder is now tried before anything is sent.
  // A folder no process can add a file to, root included: /proc/sys/kernel (its `ostype` holds
  // one word, "Linux", which serves as the key).
  it.runIf(existsSync('/proc/sys/kernel/ostype'))('a key file amsync cannot write back: exit 1 naming the file, the setting and the fix; nothing sent', async () => {
    const file = '/proc/sys/kernel/ostype';
    const key = (await readFile(file, 'utf8')).trim();
    emu = await startEmulator({ refreshTokens: [key], rotateRefreshTokens: true, refreshTokenGraceSeconds: 0 });
    for (const args of [['sync', '-f', join(dir, 'access.yaml')], ['plan', '-f', join(dir, 'access.yaml')]]) {
      const run = await runInProcess(args, { env: env({ AMSYNC_REFRESH_TOKEN_FILE: file }) });
      expect(run.code).toBe(1);
      expect(run.stderr.trim().split('\n')).toHaveLength(1);
      expect(run.stderr).toMatch(/^error: the integrator key file \/proc\/sys\/kernel\/ostype cannot be written back \(E[A-Z]+ creating a file in \/proc\/sys\/kernel\)/);
      expect(run.stderr).toContain('AMSYNC_REFRESH_TOKEN_FILE / --refresh-token-file');
      expect(run.stderr).toContain('nothing was sent');
    }
    expect(emu.requests()).toEqual([]);
    expect(emu.oauth()).toMatchObject({ exchanges: 0 });
  });

  it('AMSYNC_REFRESH_TOKEN with a service that rotates: exit 1 "integrator key lost", after the one exchange, nothing written', async () => {
    emu = await startEmulator({ refreshTokens: [KEY], rotateRefreshTokens: true, refreshTokenGraceSeconds: 0 });
    const run = await runInProcess(['sync', '-f', join(dir, 'access.yaml'), '--json'], { env: env({ AMSYNC_REFRESH_TOKEN: KEY }) });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^error: integrator key lost: the service rotated the key from AMSYNC_REFRESH_TOKEN, and an environment variable cannot be written back/m);
    expect(run.stderr).toContain('AMSYNC_REFRESH_TOKEN_FILE');
    expect(JSON.parse(run.stdout)).toMatchObject({ error: { code: 'integrator_key_not_persisted' } });
    expect(emu.requests().map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual(['POST /api/v1/oauth2/token 200']);
    expect(emu.state().sshUsers).toEqual([]);
    expectNoSecret(run.stdout + run.stderr, [KEY]);
  });

  it('AMSYNC_REFRESH_TOKEN with a service that does not rotate loses nothing: exit 0', async () => {
    emu = await startEmulator({ refreshTokens: [KEY] });
    const run = await runInProcess(['sync', '-f', join(dir, 'access.yaml')], { env: env({ AMSYNC_REFRESH_TOKEN: KEY }) });
    expect(run.code).toBe(0);
    expect(emu.state().sshUsers.map((u) => u.username)).toEqual(['deploy']);
  });
});
