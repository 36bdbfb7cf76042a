import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createServiceContext, type ServiceContext } from '../../src/cli/service-context.js';
import { attachClientMetrics, type RunningDaemon } from '../../src/daemon/index.js';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { createMetrics } from '../../src/obs/metrics.js';
import { systemTimers, type Timers } from '../../src/time/timers.js';
import { FakeScheduler, logSink } from '../helpers/daemon-fakes.js';
import { forms } from '../helpers/encodings.js';
import { secretApiPerFile, type SecretBackend } from '../helpers/fake-secret-api.js';
import { runInProcess, type InProcessRun } from '../helpers/in-process.js';
import { startInProcessDaemon } from '../helpers/in-process-daemon.js';

// issue 30, item 4: the integrator key kept in a Kubernetes Secret (integratorKeySecret), read
// from it before each exchange and a rotated key written back to it, against the emulator
// (which rotates the key at each exchange, with no grace for the old one) and the fake API
// server (resourceVersion and RBAC verbs enforced). No copying init container is needed.

const KEY = 'integrator-key-in-secret-canary-41c7';
const PASSWORD = 'pw-canary-key-secret-9d2';
const SECRET = 'amsync-credentials';
const REF = `amsync/${SECRET}`;
let dir: string;
let emu: RunningEmulator;
let backend: SecretBackend;

secretApiPerFile('amsync-ik-secret-', (b, d) => {
  backend = b;
  dir = d;
});
beforeAll(async () => {
  await writeFile(join(dir, 'access.yaml'), 'sshUsers:\n  - username: deploy\n    password: { env: DEPLOY_PASSWORD }\n');
});
beforeEach(() => {
  backend.secrets.clear();
  backend.requests.length = 0;
  backend.putVersions.length = 0;
  for (const verb of ['get', 'create', 'update'] as const) backend.allowed.add(verb);
  backend.beforeNextPut = undefined;
  // The Secret holds the key, and another data key amsync must leave alone.
  backend.handle('POST', '/api/v1/namespaces/amsync/secrets', JSON.stringify({ metadata: { name: SECRET }, data: { 'integrator-key': b64(`${KEY}\n`), 'state-key': b64('theirs') } }));
});
afterEach(async () => {
  await emu?.close();
});

const b64 = (text: string) => Buffer.from(text).toString('base64');
const keyInSecret = () => backend.value(SECRET, 'integrator-key')!.trim();

function amsync(args: string[]): Promise<InProcessRun> {
  return runInProcess(args, {
    cwd: dir,
    env: { AMSYNC_URL: emu.url, AMSYNC_INTEGRATOR_KEY_SECRET: REF, DEPLOY_PASSWORD: PASSWORD, AMSYNC_STATE_FILE: join(dir, 'state.json'), KUBECONFIG: join(dir, 'kubeconfig') },
  });
}

/** No key, in any encoding (base64 is the Secret's form), and no JWT-shaped token in what amsync printed. */
function expectNoSecret(run: InProcessRun, secrets: readonly string[]): void {
  for (const form of forms(secrets)) {
    expect(run.stdout).not.toContain(form);
    expect(run.stderr).not.toContain(form);
  }
  expect(run.stdout + run.stderr).not.toMatch(/eyJ[A-Za-z0-9_-]{10,}/);
}

describe('integratorKeySecret: the integrator key in a Kubernetes Secret', () => {
  it('reads the key from the Secret, writes the rotated one back through a resourceVersion conflict, and the next run logs in with it', async () => {
    emu = await startEmulator({ refreshTokens: [KEY], rotateRefreshTokens: true, refreshTokenGraceSeconds: 0 });
    const before = backend.secrets.get(SECRET)!.metadata.resourceVersion;
    // Someone else writes the Secret between amsync's read and its update.
    backend.beforeNextPut = (b) => b.touch(SECRET, 'someone-else', 'in-between');
    const first = await amsync(['sync', '-f', 'access.yaml']);
    expect(first.code, first.stderr).toBe(0);
    expect(emu.state().sshUsers.map((u) => u.username)).toEqual(['deploy']);
    const rotated = keyInSecret();
    expect(rotated).not.toBe(KEY);
    expect(rotated).toMatch(/^eyJ/);
    // The first update carried the version amsync read (409), the retry the one after the other writer's.
    expect(backend.putVersions[0]).toBe(before);
    expect(backend.putVersions).toHaveLength(2);
    expect(backend.value(SECRET, 'someone-else')).toBe('in-between');
    expect(backend.value(SECRET, 'state-key')).toBe('theirs');

    // The old key no longer works (no grace): only the key written back lets this run in.
    const second = await amsync(['plan', '-f', 'access.yaml', '--detailed-exitcode']);
    expect(second.code, second.stderr).toBe(0);
    expect(emu.oauth()).toMatchObject({ exchanges: 2, rejected: 0 });
    const again = keyInSecret();
    expect(again).not.toBe(rotated);
    for (const run of [first, second]) expectNoSecret(run, [KEY, rotated, again, PASSWORD]);
  });

  it('a write-back the RBAC refuses: exit 1 "integrator key lost", naming the verb, the Secret and the fix; nothing written to the service', async () => {
    emu = await startEmulator({ refreshTokens: [KEY], rotateRefreshTokens: true, refreshTokenGraceSeconds: 0 });
    backend.allowed.delete('update');
    const run = await amsync(['sync', '-f', 'access.yaml', '--json']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      `error: integrator key lost: the service rotated the key and amsync could not write the new one back to the Secret ${REF} (data key integrator-key) (the Kubernetes API server refused to update it (403 Forbidden): the service account lacks the RBAC verb "update" on resource "secrets" (resourceNames: [${SECRET}]) in namespace amsync): the key there is replaced and stops working. Grant amsync's service account get and update on the Secret ${SECRET} in namespace amsync (a Role with resourceNames, as examples/kubernetes/integrator-key-rbac.yaml), then put a new integrator key from the service's UI in it`,
    );
    expect(JSON.parse(run.stdout)).toMatchObject({ error: { code: 'integrator_key_not_persisted' } });
    expect(emu.requests().map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual(['POST /api/v1/oauth2/token 200']);
    expect(emu.state().sshUsers).toEqual([]);
    expect(keyInSecret()).toBe(KEY);
    expectNoSecret(run, [KEY, PASSWORD]);
  });

  it('a Secret amsync may not read: exit 1 before any request, naming the Secret and the verb', async () => {
    emu = await startEmulator({ refreshTokens: [KEY], rotateRefreshTokens: true });
    backend.allowed.delete('get');
    const run = await amsync(['sync', '-f', 'access.yaml']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`integrator key in the Secret ${REF} (data key integrator-key) could not be read: the Kubernetes API server refused to get it (403 Forbidden)`);
    expect(emu.requests()).toEqual([]);
  });

  it('together with a key file it is a usage error (exit 64), nothing sent', async () => {
    emu = await startEmulator({ refreshTokens: [KEY] });
    await writeFile(join(dir, 'key'), `${KEY}\n`, { mode: 0o600 });
    const run = await amsync(['sync', '-f', 'access.yaml', '--refresh-token-file', 'key']);
    expect(run.code).toBe(64);
    expect(run.stderr).toContain('more than one integrator key is set (AMSYNC_REFRESH_TOKEN_FILE / --refresh-token-file, AMSYNC_INTEGRATOR_KEY_SECRET / integratorKeySecret)');
    expect(emu.requests()).toEqual([]);
    expect(backend.requests).toEqual([]);
  });
});

describe('integratorKeySecret in the daemon', () => {
  let skew = 0;
  let context: ServiceContext | undefined;
  let daemon: RunningDaemon | undefined;
  const timers: Timers = { ...systemTimers, now: () => systemTimers.now() + skew, wallNow: () => Date.now() + skew };
  afterEach(async () => {
    await daemon?.stop();
    context?.close();
    daemon = undefined;
    context = undefined;
  });

  // The persisted-key safety, as for a key file: a key the service rotated that no Secret took
  // is used from memory while the daemon lives, /readyz says so (not ready) and the metric is 0,
  // and the next renewal writes it back once the RBAC allows it; the key is never lost.
  it('a refused write-back: not ready (integrator_key_not_persisted, kube_forbidden), runs go on with the key in memory, ready again once the Secret takes it', async () => {
    skew = 0;
    emu = await startEmulator({ refreshTokens: [KEY], accessTokenTtlSeconds: 2, rotateRefreshTokens: true, refreshTokenGraceSeconds: 0, clock: () => Date.now() + skew });
    const access = join(dir, 'access.yaml');
    const sink = logSink('debug');
    const metrics = createMetrics({ version: 'test' });
    context = await createServiceContext(
      { file: access, url: emu.url, stateFile: join(dir, 'daemon-state.json') },
      { env: { DEPLOY_PASSWORD: PASSWORD, AMSYNC_INITIAL_RATE: '1000', AMSYNC_INTEGRATOR_KEY_SECRET: REF }, stderr: process.stderr },
      { logger: sink.logger, timers, keepUnpersistedKey: true },
    );
    attachClientMetrics(context.client(), metrics);
    const ctx = context;
    const scheduler = new FakeScheduler();
    backend.allowed.delete('update');
    daemon = await startInProcessDaemon(ctx, { credentialStatus: () => ctx.client().credentialStatus(), logger: sink.logger, metrics, options: { file: access }, scheduler: scheduler.factory });
    const persisted = async () => (await metrics.render()).body.match(/^amsync_integrator_key_persisted (\d)$/m)?.[1];
    let status = daemon.status();
    expect(status).toMatchObject({ lastOutcome: 'success', ready: false });
    expect(status.reason).toMatch(/^integrator_key_not_persisted: the service rotated the integrator key and it could not be written back to its Secret \(kube_forbidden\)/);
    expect(await persisted()).toBe('0');
    expect(keyInSecret()).toBe(KEY); // the retired key: the one in memory is the only working one
    expect(emu.state().sshUsers.map((u) => u.username)).toEqual(['deploy']);

    // A run later (past 80% of the token's life: a renewal, another rotation): still in memory only.
    skew += 1_700;
    scheduler.fire();
    await daemon.idle();
    expect(daemon.status()).toMatchObject({ lastOutcome: 'success', ready: false });

    // The Role is fixed: the next renewal writes the key in use back, and the daemon is ready.
    backend.allowed.add('update');
    skew += 1_700;
    scheduler.fire();
    await daemon.idle();
    status = daemon.status();
    expect(status).toMatchObject({ lastOutcome: 'success', ready: true, reason: 'ok' });
    expect(await persisted()).toBe('1');
    // What the Secret holds now is a key the service takes: the key was never lost.
    const inSecret = keyInSecret();
    expect(inSecret).not.toBe(KEY);
    expect(emu.revokeRefreshToken(inSecret)).toBe(true);
    for (const line of sink.lines) expect(JSON.stringify(line)).not.toContain(inSecret);
  });
});
