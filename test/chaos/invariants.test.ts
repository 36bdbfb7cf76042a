import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { EmulatorStateSnapshot, RequestLogEntry, SeedResult } from '../../src/emulator/index.js';
import { canariesFound, deletesOfDeclared, expectedDeletes, fingerprintsLost, withRenames, type TrackedPasswords } from '../helpers/chaos-invariants.js';
import { faultFamilies, makeSchedule, type ChaosSchedule } from '../helpers/chaos-schedule.js';

/**
 * The chaos checker catches what it is there to catch: each new check is shown failing on a
 * history that breaks it, and passing on one that keeps it. A check that cannot fail would let
 * every seed pass.
 */

const at = '2024-01-01T00:00:00.000Z';
const entry = (seq: number, method: string, path: string, extra: Partial<RequestLogEntry> = {}): RequestLogEntry => ({ seq, method, path, query: {}, status: 200, time: at, durationMs: 1, ...extra });

/** The state a schedule seeds (the i-th item gets id i + 1, as the runner checks). */
function seededFor(schedule: ChaosSchedule): SeedResult {
  return {
    sshUsers: schedule.initial.sshUsers.map((u, i) => ({ id: i + 1, username: u.username, level: 'n1', created_at: at, updated_at: at })),
    apikeys: schedule.initial.apikeys.map((k, i) => ({ id: i + 1, name: k.name, superuser: k.superuser, roles: [], token: `token-${i}`, created_at: at, updated_at: at })),
  };
}

/** The schedule of a seed whose primary family is rename-declared, and its seeded state. */
function renameScene(): { schedule: ChaosSchedule; seeded: SeedResult } {
  const schedule = makeSchedule(faultFamilies.indexOf('rename-declared') + faultFamilies.length);
  return { schedule, seeded: seededFor(schedule) };
}

describe('never a declared item: a DELETE is judged by the name the item had when deleted', () => {
  it('flags the delete of an item renamed into a declared name, by id in the delete set all the same', () => {
    const { schedule, seeded } = renameScene();
    const rename = schedule.renames[0]!;
    const id = rename.index + 1;
    expect(expectedDeletes(schedule, seeded).has(`sshUser:${id}`)).toBe(true);
    const renamedThenDeleted = [entry(1, 'DELETE', `/api/sshusers/${id}`, { item: { id, name: rename.to } })];
    expect(deletesOfDeclared(renamedThenDeleted, schedule, seeded)).toEqual([expect.stringContaining(`deleted "${rename.to}", which the file declares`)]);
    const deletedAsPlanned = [entry(1, 'DELETE', `/api/sshusers/${id}`, { item: { id, name: schedule.initial.sshUsers[rename.index]!.username } })];
    expect(deletesOfDeclared(deletedAsPlanned, schedule, seeded)).toEqual([]);
  });

  it('judges the service after the rename: the renamed user is declared, no longer due for deletion', () => {
    const { schedule, seeded } = renameScene();
    const rename = schedule.renames[0]!;
    const model = withRenames(schedule, seeded, [rename]);
    expect(model.seeded.sshUsers[rename.index]!.username).toBe(rename.to);
    expect(expectedDeletes(model.schedule, model.seeded).has(`sshUser:${rename.index + 1}`)).toBe(false);
  });
});

describe('canaries in every encoding', () => {
  const secret = 'CANARY-pw-x q"u\\oé';
  it.each([
    ['raw', secret],
    ['JSON-escaped', JSON.stringify(secret).slice(1, -1)],
    ['URL-encoded', encodeURIComponent(secret)],
    ['form-encoded', new URLSearchParams({ v: secret }).toString().slice(2)],
  ])('finds a secret %s in an output', (_form, text) => {
    expect(canariesFound([{ where: 'stderr', text: `error: the service said ${text}` }], [secret])).toHaveLength(1);
  });

  it('finds nothing once it was scrubbed', () => {
    expect(canariesFound([{ where: 'stderr', text: 'error: the service said [redacted]' }], [secret])).toEqual([]);
  });
});

describe('fingerprints saved: every password the service confirmed is in the state file', () => {
  const { schedule } = renameScene();
  const user = schedule.users.find((u) => u.ensure === 'present' && u.password)!;
  const state = (version: number): EmulatorStateSnapshot => ({ sshUsers: [{ id: 11, username: user.username, level: 'n1', created_at: at, updated_at: at, passwordSet: true, passwordVersion: version }], apikeys: [], roles: [], pendingWrites: 0 });
  const fingerprint = (p: string) => createHmac('sha256', 'k').update(p).digest('hex');
  const tracked = (ids: Record<string, string>): TrackedPasswords => ({ applied: new Map(Object.entries(ids)), fingerprint });
  const created = [entry(1, 'POST', '/api/sshusers', { item: { id: 11, name: user.username } })];

  it('flags a confirmed create whose fingerprint is missing, or is not the declared password', () => {
    expect(fingerprintsLost({ name: 'faulted', requests: created }, state(0), state(1), tracked({}), schedule, 4000)).toEqual([expect.stringContaining('no fingerprint')]);
    expect(fingerprintsLost({ name: 'faulted', requests: created }, state(0), state(1), tracked({ 11: fingerprint('other') }), schedule, 4000)).toEqual([expect.stringContaining('another password')]);
    expect(fingerprintsLost({ name: 'faulted', requests: created }, state(0), state(1), tracked({ 11: fingerprint(user.password!.value) }), schedule, 4000)).toEqual([]);
  });

  it('asks nothing of a write whose answer never reached amsync', () => {
    const lost = [entry(1, 'POST', '/api/sshusers', { item: { id: 11, name: user.username }, undelivered: true })];
    expect(fingerprintsLost({ name: 'faulted', requests: lost }, state(0), state(1), tracked({}), schedule, 4000)).toEqual([]);
  });
});

describe('the schedules', () => {
  it('give every fault family its turn as the primary in any run of consecutive seeds', () => {
    const primaries = new Set(Array.from({ length: faultFamilies.length }, (_, i) => makeSchedule(5000 + i).families[0]));
    expect(primaries.size).toBe(faultFamilies.length);
  });

  it('rename an SSH user the plan deletes to a name the file is about to create (rename-declared)', () => {
    for (let seed = 0; seed < 400; seed += 1) {
      const schedule = makeSchedule(seed);
      for (const rename of schedule.renames.filter((r) => r.label === 'rename-into-declared')) {
        expect(expectedDeletes(schedule, seededFor(schedule)).has(`sshUser:${rename.index + 1}`), `seed ${seed}`).toBe(true);
        expect(schedule.initial.sshUsers.some((u) => u.username === rename.to), `seed ${seed}`).toBe(false);
        expect(schedule.users.some((u) => u.username === rename.to && u.ensure === 'present'), `seed ${seed}`).toBe(true);
      }
    }
  });
});
