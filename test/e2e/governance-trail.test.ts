import { createHmac } from 'node:crypto';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { auditTrigger } from '../../src/daemon/index.js';
import { startEmulator, type RunningEmulator, type RunningTenants } from '../../src/emulator/index.js';
import { closedPort } from '../helpers/ports.js';
import { emulatorPerTest } from '../helpers/emulator-per-test.js';
import { runInProcess } from '../helpers/in-process.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';

/**
 * The audit log and the webhooks, wired into the commands that write: one attempt line and one
 * result line per write, a notification per event, and no secret in either. Canaries carry
 * `"`, `\` and non-ASCII characters, so every encoding of them is looked for.
 */
const TOKEN = 'CANARY-bearer-"q\\x'; // a bearer token is printable ASCII
const PASSWORD = 'CANARY-pässwörd-"\\-7c1';
const HOOK_KEY = 'CANARY-hmac-kéy-"\\';
const canaries = [TOKEN, PASSWORD, HOOK_KEY];

/** Every way a canary could appear: raw, JSON-escaped, URL-encoded. */
function leaks(text: string): string[] {
  return canaries.filter((c) => [c, JSON.stringify(c).slice(1, -1), encodeURIComponent(c)].some((form) => text.includes(form)));
}

let emu: RunningEmulator;
let dir: string;

emulatorPerTest(TOKEN, 'amsync-trail-', (e, d) => {
  emu = e;
  dir = d;
});
beforeEach(async () => {
  await writeFile(
    join(dir, 'access.yaml'),
    'sshUsers:\n  - username: deploy\n    password: { env: DEPLOY_PASSWORD }\napikeys:\n  - name: ci\n    roles: [1]\n',
  );
});

const env = (extra: Record<string, string> = {}) => ({ AMSYNC_URL: emu.url, AMSYNC_TOKEN: TOKEN, DEPLOY_PASSWORD: PASSWORD, AMSYNC_REVISION: 'abc123', HOOK_KEY, ...extra });
const lines = async (file: string) => (await readFile(file, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);

describe('--audit-log', () => {
  it('sync writes an attempt and a result line per write, 0600, with the plan hash, trigger and revision, and no secret', async () => {
    const log = join(dir, 'audit.jsonl');
    const run = await runInProcess(['sync', '--auto-approve', '--audit-log', log], { cwd: dir, env: env() });
    expect(run.code, run.stderr).toBe(0);
    const written = await lines(log);
    expect(written.map((l) => `${l.phase} ${l.action} ${l.kind} ${l.key}`).sort()).toEqual([
      'attempt create apikey ci',
      'attempt create sshUser deploy',
      'result create apikey ci',
      'result create sshUser deploy',
    ]);
    for (const l of written) {
      expect(l).toMatchObject({ trigger: 'manual', revision: 'abc123', target: null });
      expect(l.planHash).toMatch(/^[0-9a-f]{16}$/);
    }
    expect(new Set(written.map((l) => l.planHash)).size).toBe(1);
    const result = written.find((l) => l.phase === 'result' && l.kind === 'sshUser')!;
    expect(result).toMatchObject({ status: 'applied', fields: expect.arrayContaining(['password', 'level']) });
    expect((result.values as Record<string, unknown>).password).toBeUndefined();
    expect((await stat(log)).mode & 0o777).toBe(0o600);
    expect(leaks(await readFile(log, 'utf8'))).toEqual([]);

    // A second run has nothing to write: no line is added.
    const again = await runInProcess(['sync', '--auto-approve', '--audit-log', log], { cwd: dir, env: env() });
    expect(again.code).toBe(0);
    expect(await lines(log)).toHaveLength(4);

    // `amsync audit` reads it back.
    const shown = await runInProcess(['audit', log, '--key', 'deploy', '--json'], { cwd: dir, env: {} });
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout.trim().split('\n')).toHaveLength(2);
  });

  it('apply of a saved plan says so (trigger saved-plan); a dry-run writes no line', async () => {
    const log = join(dir, 'audit.jsonl');
    const plan = await runInProcess(['plan', '--out', 'plan.json', '--audit-log', log], { cwd: dir, env: env() }).catch((e: unknown) => e);
    // `plan` does not write, so it does not take --audit-log; AMSYNC_AUDIT_LOG is simply not used by it.
    expect((plan as { code: number }).code).toBe(64);
    const dry = await runInProcess(['plan', '--out', 'plan.json'], { cwd: dir, env: env({ AMSYNC_AUDIT_LOG: log }) });
    expect(dry.code, dry.stderr).toBe(0);
    await expect(stat(log)).rejects.toThrow();
    const applied = await runInProcess(['apply', 'plan.json', '--audit-log', log], { cwd: dir, env: env() });
    expect(applied.code, applied.stderr).toBe(0);
    const written = await lines(log);
    expect(written).toHaveLength(4);
    expect(written.every((l) => l.trigger === 'saved-plan')).toBe(true);
  });

  it('a log that cannot be opened stops the run before its first write (exit 1)', async () => {
    const run = await runInProcess(['sync', '--auto-approve', '--audit-log', dir], { cwd: dir, env: env() });
    expect(run.code).toBe(1);
    expect(emu.requests().filter((r) => r.method !== 'GET')).toEqual([]);
  });

  it("the daemon's triggers map to the audit log's", () => {
    expect(auditTrigger(['schedule'])).toBe('schedule');
    expect(auditTrigger(['schedule', 'file'])).toBe('file-change');
    expect(auditTrigger(['reload'])).toBe('file-change');
    expect(auditTrigger(['start'])).toBe('startup');
    expect(auditTrigger(['leader'])).toBe('startup');
    expect(auditTrigger(['retry'])).toBe('schedule');
  });
});

describe('notify.webhooks', () => {
  let receiver: WebhookReceiver;
  beforeEach(async () => {
    receiver = await WebhookReceiver.start();
  });
  afterEach(async () => {
    await receiver.close();
  });

  async function settingsFor(url: string): Promise<string> {
    const file = join(dir, 'settings.yaml');
    await writeFile(file, `notify:\n  maxAttempts: 1\n  webhooks:\n    - url: ${url}\n      secretEnv: HOOK_KEY\n`);
    return file;
  }

  it('a sync tells the webhook what it applied, signed with the key, and never a secret', async () => {
    const run = await runInProcess(['sync', '--auto-approve', '--settings', await settingsFor(receiver.url())], { cwd: dir, env: env() });
    expect(run.code, run.stderr).toBe(0);
    await receiver.received(1);
    const [request] = receiver.requests;
    const body = request!.body.toString('utf8');
    const payload = JSON.parse(body) as { event: string; changes: { key: string }[]; revision: string };
    expect(payload.event).toBe('changes_applied');
    expect(payload.changes.map((c) => c.key).sort()).toEqual(['ci', 'deploy']);
    expect(payload.revision).toBe('abc123');
    expect(request!.headers['x-amsync-signature']).toBe(`sha256=${createHmac('sha256', HOOK_KEY).update(request!.body).digest('hex')}`);
    expect(leaks(body + JSON.stringify(request!.headers) + run.stdout + run.stderr)).toEqual([]);
  });

  it('a dry-run with changes is drift_found', async () => {
    const run = await runInProcess(['plan', '--settings', await settingsFor(receiver.url())], { cwd: dir, env: env() });
    expect(run.code, run.stderr).toBe(0);
    await receiver.received(1);
    expect((JSON.parse(receiver.requests[0]!.body.toString('utf8')) as { event: string }).event).toBe('drift_found');
  });

  it('a dead receiver changes nothing else: same exit code, same writes, same output', async () => {
    const closed = await closedPort();
    const run = await runInProcess(['sync', '--auto-approve', '--settings', await settingsFor(`http://127.0.0.1:${closed}/hook`)], { cwd: dir, env: env() });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('created sshUser "deploy"');
    expect(emu.requests().filter((r) => r.method === 'POST')).toHaveLength(2);
  });

  it('a webhook key that cannot be found is a bad settings file, before any request (exit 65)', async () => {
    const run = await runInProcess(['sync', '--auto-approve', '--settings', await settingsFor(receiver.url())], { cwd: dir, env: { ...env(), HOOK_KEY: '' } });
    expect(run.code).toBe(65);
    expect(emu.requests()).toEqual([]);
  });
});


/** targets.yaml: the tenants east and west of `fleet`, each with FLEET_TOKEN. */
async function writeTargets(fleet: RunningTenants): Promise<void> {
  const entry = (name: string) => `  - name: ${name}\n    url: ${fleet.tenant(name).url}\n    token: { env: FLEET_TOKEN }\n`;
  await writeFile(join(dir, 'targets.yaml'), `targets:\n${entry('east')}${entry('west')}`);
}

describe('a fleet run tells the webhooks of each target, and audits each write with its target', () => {
  it('two targets: a changes_applied event and audit lines per target, from one notifier', async () => {
    const fleet = await startEmulator({ tokens: [TOKEN], tenants: ['east', 'west'] });
    const receiver = await WebhookReceiver.start();
    try {
      await writeTargets(fleet);
      await writeFile(join(dir, 'settings.yaml'), `auditLog: audit.jsonl\nnotify:\n  maxAttempts: 1\n  webhooks:\n    - url: ${receiver.url()}\n      secretEnv: HOOK_KEY\n`);
      const run = await runInProcess(['sync', '--auto-approve', '--targets', 'targets.yaml', '--settings', 'settings.yaml'], { cwd: dir, env: { ...env(), AMSYNC_URL: '', FLEET_TOKEN: TOKEN } });
      expect(run.code, run.stderr).toBe(0);
      await receiver.received(2);
      const events = receiver.requests.map((r) => JSON.parse(r.body.toString('utf8')) as { event: string; target: string });
      expect(events.map((e) => `${e.event} ${e.target}`).sort()).toEqual(['changes_applied east', 'changes_applied west']);
      const written = await lines(join(dir, 'audit.jsonl'));
      expect(written.filter((l) => l.phase === 'result').map((l) => `${String(l.target)} ${String(l.key)}`).sort()).toEqual(['east ci', 'east deploy', 'west ci', 'west deploy']);
      expect(leaks(JSON.stringify(events) + JSON.stringify(written) + run.stdout + run.stderr)).toEqual([]);
    } finally {
      await receiver.close();
      await fleet.close();
    }
  });

  it('a saved fleet plan applied: audit lines (saved-plan) and a notification per target', async () => {
    const fleet = await startEmulator({ tokens: [TOKEN], tenants: ['east', 'west'] });
    const receiver = await WebhookReceiver.start();
    try {
      await writeTargets(fleet);
      const fleetEnv = { ...env(), AMSYNC_URL: '', FLEET_TOKEN: TOKEN };
      const planned = await runInProcess(['plan', '--targets', 'targets.yaml', '--out', 'plan.json'], { cwd: dir, env: fleetEnv });
      expect(planned.code, planned.stderr).toBe(0);
      await writeFile(join(dir, 'settings.yaml'), `auditLog: audit.jsonl\nnotify:\n  maxAttempts: 1\n  webhooks:\n    - url: ${receiver.url()}\n      secretEnv: HOOK_KEY\n`);
      const run = await runInProcess(['apply', 'plan.json', '--targets', 'targets.yaml', '--settings', 'settings.yaml'], { cwd: dir, env: fleetEnv });
      expect(run.code, run.stderr).toBe(0);
      const events = receiver.requests.map((r) => JSON.parse(r.body.toString('utf8')) as { event: string; target: string });
      expect(events.map((e) => `${e.event} ${e.target}`).sort()).toEqual(['changes_applied east', 'changes_applied west']);
      const written = await lines(join(dir, 'audit.jsonl'));
      expect(written).toHaveLength(8);
      expect(written.every((l) => l.trigger === 'saved-plan')).toBe(true);
      expect(new Set(written.map((l) => l.target))).toEqual(new Set(['east', 'west']));
    } finally {
      await receiver.close();
      await fleet.close();
    }
  });
});

describe('one failure, one notification', () => {
  it('a refused plan is told once, not once for the refusal and again for the error it exits with', async () => {
    const receiver = await WebhookReceiver.start();
    try {
      emu.seed({ sshUsers: [{ username: 'old1', level: 'n1', password: 'x' }, { username: 'old2', level: 'n1', password: 'x' }] });
      await writeFile(join(dir, 'access.yaml'), 'sshUsers:\n  - username: deploy\n    password: { env: DEPLOY_PASSWORD }\nprune:\n  sshUsers: true\n');
      await writeFile(join(dir, 'settings.yaml'), `notify:\n  maxAttempts: 1\n  webhooks:\n    - url: ${receiver.url()}\n`);
      const run = await runInProcess(['sync', '--auto-approve', '--max-deletes', '1', '--settings', 'settings.yaml'], { cwd: dir, env: env() });
      expect(run.code).toBe(3);
      // The command waits for the queue before it exits: what was sent has arrived.
      const events = receiver.requests.map((r) => (JSON.parse(r.body.toString('utf8')) as { event: string }).event);
      expect(events).toEqual(['failure']);
    } finally {
      await receiver.close();
    }
  });
});
