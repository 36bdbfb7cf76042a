import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { emulatorPerTest } from '../helpers/emulator-per-test.js';
import { forms } from '../helpers/encodings.js';
import { runInProcess } from '../helpers/in-process.js';

/**
 * Issue 27, finding 6 (credentials): a token the service refuses was `listing_incomplete` in
 * `--json`, and a token endpoint answering 500 was reported as `POST /api/sshusers: 500` when
 * the only request was `POST /api/v1/oauth2/token`. Each command says what failed: a stable
 * credential code, the endpoint that answered.
 */

const TOKEN = 'credential-errors-good-token';
const EXPIRED = 'credential-errors-expired-token-51c';
let emu: RunningEmulator;
let dir: string;
emulatorPerTest(TOKEN, 'amsync-credential-errors-', (e, d) => {
  emu = e;
  dir = d;
});

async function files(): Promise<{ access: string; env: Record<string, string> }> {
  const access = join(dir, 'access.yaml');
  await writeFile(access, 'sshUsers:\n  - username: deploy\n    password: { env: P }\n');
  // A failing token endpoint is retried (a second exchange is harmless): three quick attempts.
  await writeFile(join(dir, 'amsync.yaml'), 'retry:\n  maxAttempts: 3\n  baseDelayMs: 5\n  maxDelayMs: 10\n');
  await writeFile(join(dir, 'targets.yaml'), `targets:\n  - name: one\n    url: ${emu.url}\n    token: { env: AMSYNC_TOKEN }\n`);
  return { access, env: { AMSYNC_URL: emu.url, P: 'Deploy-pass-123!', AMSYNC_STATE_FILE: join(dir, 'state.json'), AMSYNC_SETTINGS: join(dir, 'amsync.yaml') } };
}

describe('a token the service refuses (401)', () => {
  it('is token_rejected in every command, in --json and as one line of text, naming AMSYNC_TOKEN and no token file', async () => {
    const { access, env } = await files();
    const commands = [
      ['plan', '-f', access],
      ['sync', '--dry-run', '-f', access],
      ['sync', '-f', access],
    ];
    for (const args of commands) {
      const json = await runInProcess([...args, '--json'], { env: { ...env, AMSYNC_TOKEN: EXPIRED } });
      expect(json.code, args.join(' ')).toBe(1);
      expect(JSON.parse(json.stdout), args.join(' ')).toEqual({
        error: { code: 'token_rejected', message: expect.stringMatching(/^GET \/api\/(sshusers|3rdparty\/apikeys): token rejected \(401\): missing, expired or wrong \(AMSYNC_TOKEN\)$/) },
      });
      const text = await runInProcess(args, { env: { ...env, AMSYNC_TOKEN: EXPIRED } });
      expect(text.code).toBe(1);
      expect(text.stderr).toMatch(/^error: GET \/api\/(sshusers|3rdparty\/apikeys): token rejected \(401\): missing, expired or wrong \(AMSYNC_TOKEN\)\n$/);
      expect(text.stderr).not.toMatch(/token file|AMSYNC_TOKEN_FILE/);
    }
    const exported = await runInProcess(['export'], { env: { ...env, AMSYNC_TOKEN: EXPIRED } });
    expect(exported.code).toBe(1);
    expect(exported.stderr).toMatch(/^error: GET \/api\/(sshusers|3rdparty\/apikeys): token rejected \(401\)/);
    // A fleet's target carries the same code.
    const fleet = await runInProcess(['plan', '--targets', join(dir, 'targets.yaml'), '-f', access, '--json'], { env: { ...env, AMSYNC_TOKEN: EXPIRED } });
    expect(JSON.parse(fleet.stdout)).toMatchObject({ targets: [{ name: 'one', status: 'failed', error: { code: 'token_rejected' } }] });
    for (const entry of emu.requests()) expect(entry.status).toBe(401);
    expect(emu.state().sshUsers).toEqual([]);
  });
});

describe('a token endpoint that fails', () => {
  it('is named as the request that failed, in every command: POST /api/v1/oauth2/token, not the listing or write that waited for it', async () => {
    const { access, env } = await files();
    await writeFile(join(dir, 'key'), 'integrator-key-credential-errors\n', { mode: 0o600 });
    const oauth = await startEmulator({ refreshTokens: ['integrator-key-credential-errors'] });
    try {
      oauth.setFaults({ rules: [{ method: 'POST', path: '^/api/v1/oauth2/token$', status: 500 }] });
      const keyEnv = { ...env, AMSYNC_URL: oauth.url, AMSYNC_REFRESH_TOKEN_FILE: join(dir, 'key') };
      for (const args of [['plan', '-f', access], ['sync', '-f', access]]) {
        const run = await runInProcess([...args, '--json'], { env: keyEnv });
        expect(run.code).toBe(1);
        const { error } = JSON.parse(run.stdout) as { error: { code: string; message: string } };
        expect(error.message).toMatch(/^GET \/api\/(sshusers|3rdparty\/apikeys): not sent: POST \/api\/v1\/oauth2\/token: 500 internal server error.* \(gave up after 3 attempts\)$/);
        expect(run.stderr).toContain('POST /api/v1/oauth2/token: 500 internal server error');
        expect(run.stderr).not.toMatch(/(POST|GET) \/api\/(sshusers|3rdparty\/apikeys): 500/);
      }
      // What the service received: token requests, and nothing else.
      expect(new Set(oauth.requests().map((r) => `${r.method} ${r.path} ${r.status}`))).toEqual(new Set(['POST /api/v1/oauth2/token 500']));
    } finally {
      await oauth.close();
    }
  });
});

describe('a token endpoint that fails and quotes the integrator key back', () => {
  // The class of issue 27's new messages: the key must not reach them in any encoding. (A key
  // is one word of printable ASCII, so the canary has `"` and `\`, not non-ASCII: such a key
  // is refused before anything is sent.)
  const KEY = 'CANARY-key-"q\\b-credential';
  for (const echo of ['json', 'text'] as const) {
    it(`names the endpoint and never shows the key, raw or encoded (${echo} error body)`, async () => {
      const { access, env } = await files();
      await writeFile(join(dir, 'key'), `${KEY}\n`, { mode: 0o600 });
      const oauth = await startEmulator({ refreshTokens: [KEY] });
      try {
        oauth.setFaults({ rules: [{ method: 'POST', path: '^/api/v1/oauth2/token$', status: 500, echo }] });
        // The fake does quote the key back: what amsync prints is scrubbed, not merely unechoed.
        const quoted = await fetch(`${oauth.url}/api/v1/oauth2/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ grant_type: 'refresh_token', refresh_token: KEY }) });
        expect(await quoted.text()).toContain(echo === 'json' ? JSON.stringify(KEY).slice(1, -1) : KEY);
        oauth.clearRequests();
        const keyEnv = { ...env, AMSYNC_URL: oauth.url, AMSYNC_REFRESH_TOKEN_FILE: join(dir, 'key') };
        for (const args of [['plan', '-f', access, '--json'], ['sync', '-f', access], ['sync', '-f', access, '--format', 'markdown']]) {
          const run = await runInProcess(args, { env: keyEnv });
          expect(run.code, `${args.join(' ')}: ${run.stdout}${run.stderr}`).toBe(1);
          expect(run.stdout + run.stderr).toContain('POST /api/v1/oauth2/token: 500');
          for (const form of forms([KEY])) {
            expect(run.stdout, `${args.join(' ')}: stdout holds ${form}`).not.toContain(form);
            expect(run.stderr, `${args.join(' ')}: stderr holds ${form}`).not.toContain(form);
          }
        }
        expect(oauth.requests().every((r) => r.path === '/api/v1/oauth2/token')).toBe(true);
      } finally {
        await oauth.close();
      }
    });
  }
});

