import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/index.js';
import { emulatorPerTest } from '../helpers/emulator-per-test.js';
import { runInProcess } from '../helpers/in-process.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';

// issue 30, item 3: `amsync rotate ADDR` issues the named items' secrets again now and changes
// nothing else (sync --only ADDR --replace ADDR), through the policy, audit and notifications.

const TOKEN = 'CANARY-bearer-rotatecmd-3f90';
const KEYS = '/api/3rdparty/apikeys';

let emu: RunningEmulator;
let dir: string;
let receiver: WebhookReceiver;

emulatorPerTest(TOKEN, 'amsync-rotatecmd-', (e, d) => {
  emu = e;
  dir = d;
});
beforeEach(async () => {
  receiver = await WebhookReceiver.start();
  await writeFile(join(dir, 'settings.yaml'), `auditLog: audit.jsonl\ntokensDir: tokens\nnotify:\n  maxAttempts: 1\n  webhooks:\n    - url: ${receiver.url()}\n`);
  await writeFile(
    join(dir, 'access.yaml'),
    'sshUsers:\n  - username: svc\n    password: { generate: { length: 24 } }\napikeys:\n  - name: ci-build\n    roles: [1]\n    rotate: { every: 90d, overlap: 24h }\n  - name: legacy\n    roles: [1]\n  - name: other\n    roles: [1]\n',
  );
});
afterEach(async () => {
  await receiver.close();
});

const amsync = (args: string[]) => runInProcess([...args, '--settings', 'settings.yaml'], { cwd: dir, env: { AMSYNC_URL: emu.url, AMSYNC_TOKEN: TOKEN, AMSYNC_STATE_KEY: 'rotatecmd' } });
const writes = () => emu.requests().filter((r) => r.method !== 'GET').map((r) => `${r.method} ${r.path}`);
const key = (name: string) => emu.state().apikeys.filter((k) => k.name === name);
const sink = (path: string) => readFile(join(dir, 'tokens', path), 'utf8');
const hookEvents = () => receiver.requests.map((r) => JSON.parse(r.body.toString('utf8')) as { event: string; changes?: { key: string }[] });

describe('amsync rotate ADDR', () => {
  it('rotates a key now (its overlap kept), replaces a key without rotate:, makes a new generated password; nothing else changes', async () => {
    expect((await amsync(['sync'])).code).toBe(0);
    const [ci] = key('ci-build');
    const [legacy] = key('legacy');
    const svcPassword = await sink('passwords~/svc');
    // `other` drifts: rotate must leave it alone.
    await writeFile(join(dir, 'access.yaml'), (await readFile(join(dir, 'access.yaml'), 'utf8')).replace('  - name: other\n    roles: [1]', '  - name: other\n    roles: [2]'));
    emu.clearRequests();

    const dry = await amsync(['rotate', 'apikey:ci-build', '--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain(`# apikey "ci-build" (id ${ci!.id}) will be rotated (rotation: requested now; replaces id ${ci!.id})`);
    expect(dry.stdout).toContain('Partial plan (rotate apikey:ci-build): ');
    expect(dry.stdout).not.toContain('--only');
    expect(dry.stdout).not.toContain('"other"');
    expect(writes()).toEqual([]);

    // A key with rotate: {overlap}: the successor now, its token in the sink; the predecessor kept for the overlap.
    const rotated = await amsync(['rotate', 'apikey:ci-build', '--json']);
    expect(rotated.code, rotated.stderr).toBe(0);
    const report = JSON.parse(rotated.stdout) as { results: { kind: string; action: string; status: string; id: number; replaces?: number }[] };
    const successor = key('ci-build').find((k) => k.id !== ci!.id)!;
    expect(report.results).toEqual([expect.objectContaining({ kind: 'apikey', action: 'create', status: 'applied', id: successor.id, replaces: ci!.id })]);
    expect(writes()).toEqual([`POST ${KEYS}`]);
    expect(key('ci-build').map((k) => k.id).sort()).toEqual([ci!.id, successor.id].sort());
    expect(await sink('ci-build')).toBe(successor.token);
    expect(rotated.stdout + rotated.stderr).not.toContain(successor.token);

    // A key without rotate: as --replace: the successor, its token written, then the old key's verified delete.
    emu.clearRequests();
    const replaced = await amsync(['rotate', 'apikey:legacy']);
    expect(replaced.code, replaced.stderr).toBe(0);
    const [newLegacy] = key('legacy');
    expect(newLegacy!.id).not.toBe(legacy!.id);
    expect(writes()).toEqual([`POST ${KEYS}`, `DELETE ${KEYS}/${legacy!.id}`]);
    expect(await sink('legacy')).toBe(newLegacy!.token);

    // A generated password: a new one, set (one PUT) and written to the sink.
    emu.clearRequests();
    const svc = await amsync(['rotate', 'sshUser:svc']);
    expect(svc.code, svc.stderr).toBe(0);
    expect(writes()).toEqual([`PUT /api/sshusers/${emu.state().sshUsers[0]!.id}`]);
    const newPassword = await sink('passwords~/svc');
    expect(newPassword).not.toBe(svcPassword);
    expect(svc.stdout + svc.stderr).not.toContain(newPassword);

    // Audit and notifications: a rotation each (the plain replace is not one).
    const audit = await readFile(join(dir, 'audit.jsonl'), 'utf8');
    expect(audit).toContain('"reason":"rotation"');
    await receiver.received(3);
    const rotatedEvents = hookEvents().filter((e) => e.event === 'credential_rotated');
    expect(rotatedEvents.map((e) => e.changes?.map((c) => c.key))).toEqual([['ci-build'], ['svc']]);
    // `other`'s drift was never written.
    expect(key('other')[0]!.roles.map((r) => (typeof r === 'number' ? r : r.id))).toEqual([1]);
  });

  it('an address that names nothing declared, or a malformed one, is exit 64 with no request', async () => {
    const none = await amsync(['rotate', 'apikey:nope']);
    expect(none.code).toBe(64);
    // It names the command the user ran, not the --replace it is made of.
    expect(none.stderr).toContain('rotate apikey:nope names no item the file declares: only a declared item can be rotated');
    expect(none.stderr).not.toContain('--replace');
    const bad = await amsync(['rotate', 'key=ci']);
    expect(bad.code).toBe(64);
    expect(bad.stderr).toContain('ADDR');
    const missing = await amsync(['rotate']);
    expect(missing.code).toBe(64);
    expect(emu.requests().filter((r) => r.method !== 'GET')).toEqual([]);
  });

  it('a successor create the service refuses leaves no intent: a key of that name made by hand later is an ambiguity, never adopted (no DELETE, the sink unchanged)', async () => {
    expect((await amsync(['sync'])).code).toBe(0);
    const [legacy] = key('legacy');
    const before = await sink('legacy');
    emu.setFaults({ rules: [{ method: 'POST', path: `^${KEYS}$`, status: 400, times: 1 }] });
    const refused = await amsync(['rotate', 'apikey:legacy']);
    expect(refused.code).toBe(1);
    expect(key('legacy').map((k) => k.id)).toEqual([legacy!.id]);
    const state = JSON.parse(await readFile(join(dir, '.amsync', 'state.json'), 'utf8')) as { services: Record<string, { rotationIntents?: unknown }> };
    expect(Object.values(state.services)[0]!.rotationIntents).toBeUndefined();
    // Someone makes a key of that name in the UI.
    emu.setFaults({ rules: [] });
    const res = await fetch(`${emu.url}${KEYS}`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'legacy', roles: [1] }) });
    expect(res.status).toBeLessThan(300);
    emu.clearRequests();
    const next = await amsync(['sync']);
    expect(next.code).toBe(1);
    expect(next.stdout + next.stderr).toContain('2 remote apikeys are named "legacy"');
    expect(writes()).toEqual([]);
    expect(key('legacy')).toHaveLength(2);
    expect(await sink('legacy')).toBe(before);
  });

  it('--only or --replace beside the addresses is a usage error (exit 64), nothing sent', async () => {
    for (const extra of [['--only', 'sshUser:svc'], ['--replace', 'apikey:other']]) {
      const run = await amsync(['rotate', 'apikey:legacy', ...extra]);
      expect(run.code).toBe(64);
      expect(run.stderr).toContain(`${extra[0]}: amsync rotate ADDR… rotates exactly the items ADDR names`);
    }
    expect(emu.requests()).toEqual([]);
  });
});
