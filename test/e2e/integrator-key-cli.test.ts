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
});
