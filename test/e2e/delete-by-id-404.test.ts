import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/index.js';
import { emulatorPerTest } from '../helpers/emulator-per-test.js';
import { runInProcess } from '../helpers/in-process.js';

/**
 * Issue 27 finding 3: a by-id GET that answers 404 (a gateway, a service version without the
 * item route) while the listing of the same run shows the item was reported as
 * `✓ deleted … (drift: was already deleted)`, exit 0, with no DELETE sent, on every run.
 * "Already gone" needs the DELETE's 404 or a fresh look that no longer shows the item.
 */
const TOKEN = 'CANARY-bearer-d3l3t3';
let emu: RunningEmulator;
let dir: string;
emulatorPerTest(TOKEN, 'amsync-delete-404-', (e, d) => {
  emu = e;
  dir = d;
});

const pruned = 'prune: { sshUsers: true }\nsshUsers:\n  - username: keep\n';
const absent = 'sshUsers:\n  - username: keep\n  - username: stale1\n    ensure: absent\n';
/** The by-id route answers 404 for every user, as a gateway without the route would. */
const noItemRoute = { rules: [{ method: 'GET', path: '^/api/sshusers/\\d+$', status: 404, errors: [{ field: 'id', type: 'not_found' as const, msg: 'not found' }] }] };

async function amsync(args: string[], file: string) {
  await writeFile(join(dir, 'access.yaml'), file);
  return runInProcess(args, { cwd: dir, env: { AMSYNC_URL: emu.url, AMSYNC_TOKEN: TOKEN } });
}

function seed(): void {
  emu.seed({ sshUsers: [{ username: 'keep', level: 'n1', password: 'x' }, { username: 'stale1', level: 'n1', password: 'x' }] });
}

const deletesSent = () => emu.requests().filter((r) => r.method === 'DELETE');
const usernames = () => emu.state().sshUsers.map((u) => u.username).sort();

describe('a by-id 404 for a user the listing shows', () => {
  for (const [how, file] of [
    ['prune', pruned],
    ['ensure: absent', absent],
  ] as const) {
    it(`fails the delete (${how}), says why, sends no DELETE, and never claims it on a second run either`, async () => {
      seed();
      emu.setFaults(noItemRoute);
      for (let round = 0; round < 2; round += 1) {
        const json = await amsync(['sync', '--json'], file);
        expect(json.code).toBe(1);
        const results = JSON.parse(json.stdout).results as { key: string; action: string; status: string; error?: string; drift?: string }[];
        expect(results).toEqual([
          { kind: 'sshUser', key: 'stale1', action: 'delete', status: 'failed', error: expect.stringMatching(/^not deleted: GET by id \d+ answered 404 .*a fresh listing still shows id \d+.*no DELETE was sent/) },
        ]);
        const text = await amsync(['sync'], file);
        expect(text.code).toBe(1);
        expect(text.stdout).toMatch(/✗ failed to delete sshUser "stale1": .*answered 404 .*still shows/);
        expect(text.stdout).not.toMatch(/✓ deleted|already deleted/);
        expect(text.stdout).toContain('Apply: 0 applied, 1 failed, 0 skipped.');
        // What the report says matches what the service received: no DELETE, the user stays.
        expect(deletesSent()).toEqual([]);
        expect(usernames()).toEqual(['keep', 'stale1']);
      }
    });
  }

  it('a saved plan applied behind such a gateway fails the delete the same way', async () => {
    seed();
    const planned = await amsync(['plan', '--out', 'plan.json'], pruned);
    expect(planned.code, planned.stderr).toBe(0);
    emu.setFaults(noItemRoute);
    const run = await amsync(['apply', 'plan.json', '--json'], pruned);
    expect(run.code, run.stderr).toBe(1);
    expect(JSON.parse(run.stdout).results).toMatchObject([{ key: 'stale1', action: 'delete', status: 'failed', error: expect.stringContaining('a fresh listing still shows') }]);
    expect(deletesSent()).toEqual([]);
    expect(usernames()).toEqual(['keep', 'stale1']);
  });

  it('a user really deleted between listing and apply is already deleted: applied, exit 0, no DELETE', async () => {
    seed();
    // Another client deletes the user just before the by-id read reaches it (then 404).
    emu.setFaults({ rules: [{ method: 'GET', path: '^/api/sshusers/\\d+$', times: 1, concurrentWrite: 'delete' }] });
    const run = await amsync(['sync', '--json'], pruned);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout).results).toEqual([{ kind: 'sshUser', key: 'stale1', action: 'delete', status: 'applied', drift: 'was already deleted' }]);
    expect(deletesSent()).toEqual([]);
    expect(usernames()).toEqual(['keep']);
    // The fresh look: the listing was read again after the by-id 404.
    const log = emu.requests().map((r) => `${r.method} ${r.path} ${r.status}`);
    const read404 = log.findIndex((l) => /^GET \/api\/sshusers\/\d+ 404$/.test(l));
    expect(read404).toBeGreaterThan(-1);
    expect(log.slice(read404 + 1).some((l) => l.startsWith('GET /api/sshusers 200'))).toBe(true);
  });

  it("a DELETE's 404 stays already deleted (the service said so of the write itself)", async () => {
    seed();
    emu.setFaults({ rules: [{ method: 'DELETE', path: '^/api/sshusers/\\d+$', times: 1, concurrentWrite: 'delete' }] });
    const run = await amsync(['sync', '--json'], pruned);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout).results).toMatchObject([{ key: 'stale1', status: 'applied', drift: 'was already deleted' }]);
    expect(deletesSent()).toHaveLength(1);
    expect(usernames()).toEqual(['keep']);
  });

  it('a DELETE that answers 404 while the item stays is a failure, not "already deleted", on every run', async () => {
    seed();
    // The service (or a gateway) answers 404 to the DELETE and performs nothing.
    emu.setFaults({ rules: [{ method: 'DELETE', path: '^/api/sshusers/\\d+$', status: 404, errors: [{ field: 'id', type: 'not_found' as const, msg: 'not found' }] }] });
    for (let round = 0; round < 2; round += 1) {
      const run = await amsync(['sync', '--json'], pruned);
      expect(run.code).toBe(1);
      expect(JSON.parse(run.stdout).results).toEqual([
        { kind: 'sshUser', key: 'stale1', action: 'delete', status: 'failed', error: expect.stringMatching(/^not deleted: DELETE \d+ answered 404 .*a fresh listing still shows id \d+.*the DELETE was sent and answered 404/) },
      ]);
      expect(usernames()).toEqual(['keep', 'stale1']);
    }
    expect(deletesSent()).toHaveLength(2);
  });

  it('a DELETE 404 whose confirming listing fails is reported failed, not deleted', async () => {
    seed();
    emu.setFaults({
      rules: [
        { method: 'DELETE', path: '^/api/sshusers/\\d+$', times: 1, status: 404, errors: [{ field: 'id', type: 'not_found' as const, msg: 'not found' }] },
        // The plan's listing passes; the fresh look after the DELETE's 404 is refused.
        { method: 'GET', path: '^/api/sshusers$', after: 1, status: 403 },
      ],
    });
    const run = await amsync(['sync', '--json'], pruned);
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout).results).toMatchObject([{ key: 'stale1', status: 'failed', error: expect.stringContaining('not confirmed deleted: the DELETE answered 404 and re-reading it failed') }]);
  });
});
