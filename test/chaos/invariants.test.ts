import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { EmulatorStateSnapshot, RequestLogEntry, SeedResult } from '../../src/emulator/index.js';
import {
  appliedVersusReceived,
  canariesFound,
  deletedWithoutEvidence,
  deletesOfDeclared,
  endlessListingExit,
  expectedDeletes,
  fingerprintsLost,
  interleavedWriters,
  requestsOf,
  withRenames,
  writesAfterIncompleteListing,
  writesAfterInterrupt,
  type RunReport,
  type TrackedPasswords,
} from './helpers/invariants.js';
import { allFaultFamilies, faultFamilies, ISSUE_27_SEEDS, issue27Families, makeSchedule, type ChaosSchedule } from './helpers/schedule.js';

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

describe('seed 1063: two writers, an endless listing — each process is judged by its own requests', () => {
  // The writer that got the lock read the endless listing (and exited 1); the other was
  // refused by the lock (exit 3) and sent nothing. Both ran at once, so the log holds one
  // process's requests; which of the two was "faulted" was a race (about one run in three).
  const window = [
    entry(1, 'GET', '/api/sshusers', { next: null, client: 'faulted-rival' }),
    entry(2, 'GET', '/api/3rdparty/apikeys', { fault: 'endless-body', undelivered: true, client: 'faulted-rival' }),
    entry(3, 'GET', '/api/3rdparty/apikeys', { fault: 'endless-body', undelivered: true, client: 'faulted-rival' }),
  ];

  it('the refused writer is not blamed for the listing the other one read', () => {
    const refused = { name: 'faulted', code: 3, requests: requestsOf('faulted', window, true) };
    const reader = { name: 'faulted-rival', code: 1, requests: requestsOf('faulted-rival', window, true) };
    expect(refused.requests).toEqual([]);
    expect([...endlessListingExit(refused, 'endless-body'), ...endlessListingExit(reader, 'endless-body')]).toEqual([]);
  });

  it('still fails a process that read an endless listing and did not exit 1, and one that wrote after it', () => {
    expect(endlessListingExit({ name: 'faulted-rival', code: 0, requests: requestsOf('faulted-rival', window, true) }, 'endless-body')).toEqual([
      'faulted-rival read a listing that never ends and exited 0, not 1',
    ]);
    const wrote = [...window, entry(4, 'POST', '/api/sshusers', { client: 'faulted-rival', item: { id: 9, name: 'u' } })];
    expect(writesAfterIncompleteListing({ name: 'faulted-rival', requests: requestsOf('faulted-rival', wrote, true) }, 4000)).toEqual([
      expect.stringContaining('without a complete apikey listing before them'),
    ]);
  });

  it('a process that ran alone owns every request of its window', () => {
    expect(requestsOf('converge-1', window, false)).toEqual(window);
  });
});

describe('applied equals what the service received, change by change', () => {
  const report = (results: RunReport['results']): RunReport => ({
    changes: [
      { kind: 'sshUser', key: 'alice', action: 'create', id: null },
      { kind: 'sshUser', key: 'bob', action: 'update', id: 2 },
      { kind: 'apikey', key: 'ci', action: 'create', id: null },
    ],
    results,
  });
  const log = [entry(1, 'POST', '/api/sshusers', { item: { id: 7, name: 'alice' } }), entry(2, 'PUT', '/api/sshusers/2', { item: { id: 2, name: 'bob' } })];

  it('holds when the report and the log agree', () => {
    const agreed = report([
      { kind: 'sshUser', key: 'alice', action: 'create', status: 'applied' },
      { kind: 'sshUser', key: 'bob', action: 'update', status: 'applied' },
      { kind: 'apikey', key: 'ci', action: 'create', status: 'skipped', error: 'not started' },
    ]);
    expect(appliedVersusReceived('faulted', agreed, log, 4000)).toEqual([]);
  });

  it('flags a change reported applied that the service never received', () => {
    const claimed = report([
      { kind: 'sshUser', key: 'alice', action: 'create', status: 'applied' },
      { kind: 'sshUser', key: 'bob', action: 'update', status: 'applied' },
      { kind: 'apikey', key: 'ci', action: 'create', status: 'applied' },
    ]);
    expect(appliedVersusReceived('faulted', claimed, log, 4000)).toEqual(['faulted: reports apikey "ci" created, but the service received no create of it']);
  });

  it('flags a write the service performed and answered that the report calls not started (or leaves out)', () => {
    const notStarted = report([
      { kind: 'sshUser', key: 'alice', action: 'create', status: 'skipped', error: 'not started' },
      { kind: 'sshUser', key: 'bob', action: 'update', status: 'applied' },
    ]);
    expect(appliedVersusReceived('faulted', notStarted, log, 4000)).toEqual([expect.stringContaining('the service performed POST /api/sshusers (seq 1, 200) for sshUser "alice" and answered it, but the report says "skipped"')]);
    const leftOut = report([{ kind: 'sshUser', key: 'bob', action: 'update', status: 'applied' }]);
    expect(appliedVersusReceived('faulted', leftOut, log, 4000)).toEqual([expect.stringContaining('but the report says nothing of it')]);
  });

  it('lets a write whose answer was lost be reported failed (amsync could not know)', () => {
    const lost = [{ ...log[0]!, undelivered: true as const }, log[1]!];
    const failed = report([
      { kind: 'sshUser', key: 'alice', action: 'create', status: 'failed', error: 'timeout' },
      { kind: 'sshUser', key: 'bob', action: 'update', status: 'applied' },
    ]);
    expect(appliedVersusReceived('faulted', failed, lost, 4000)).toEqual([]);
  });
});

describe('never "deleted" without a DELETE or a confirmed absence', () => {
  const report: RunReport = {
    changes: [{ kind: 'sshUser', key: 'stale1', action: 'delete', id: 3 }],
    results: [{ kind: 'sshUser', key: 'stale1', action: 'delete', status: 'applied', drift: 'was already deleted' }],
  };
  const after = { sshUsers: [{ id: 3, username: 'stale1', level: 'n1', passwordSet: true, passwordVersion: 1 }], apikeys: [] } as unknown as EmulatorStateSnapshot;

  it('flags "deleted" on a by-id 404 that a fault made up, with no DELETE sent (issue 27, finding 3)', () => {
    const own = [entry(1, 'GET', '/api/sshusers/3', { status: 404, fault: 'by-id-404' })];
    expect(deletedWithoutEvidence('faulted', report, own, own, after)).toEqual([
      'faulted: reports sshUser "stale1" (id 3) deleted (was already deleted), but sent no DELETE and no read confirmed it gone; it still exists',
    ]);
  });

  it('accepts a DELETE of the item (any process, any answer), or a 404 the service itself gave', () => {
    const deleted = [entry(1, 'DELETE', '/api/sshusers/3', { status: 404 })];
    expect(deletedWithoutEvidence('faulted', report, [], deleted, after)).toEqual([]);
    const gone = [entry(1, 'GET', '/api/sshusers/3', { status: 404 })];
    expect(deletedWithoutEvidence('faulted', report, gone, gone, after)).toEqual([]);
  });
});

describe('no write starts after an interrupt', () => {
  const signalledAt = Date.parse(at);
  const later = (ms: number) => new Date(signalledAt + ms).toISOString();

  it('flags writes that reached the service after the grace (issue 27, finding 1)', () => {
    const requests = [entry(1, 'POST', '/api/sshusers', { time: later(-5) }), entry(2, 'POST', '/api/sshusers', { time: later(200) }), entry(3, 'POST', '/api/sshusers', { time: later(4_000) }), entry(4, 'POST', '/api/sshusers', { time: later(13_000) })];
    expect(writesAfterInterrupt('faulted', requests, signalledAt, 1000)).toEqual(['faulted: 2 writes reached the service more than 1000 ms after SIGINT (the last 13.0 s after it): POST /api/sshusers 200, POST /api/sshusers 200']);
  });

  it('lets writes already on the wire land, and reads go on', () => {
    expect(writesAfterInterrupt('faulted', [entry(1, 'PUT', '/api/sshusers/1', { time: later(300) }), entry(2, 'GET', '/api/sshusers', { time: later(5_000) })], signalledAt, 1000)).toEqual([]);
  });
});

describe('never two writers', () => {
  const w = (seq: number, client: string) => entry(seq, 'POST', '/api/3rdparty/apikeys', { client });

  it('flags a paused writer that wakes after the other took over and writes on (issue 27, finding 2)', () => {
    expect(interleavedWriters([w(1, 'faulted'), w(2, 'faulted'), w(5, 'faulted-rival'), w(6, 'faulted-rival'), w(7, 'faulted')])).toEqual([
      'writes changed hands 2 times: faulted ×2 from seq 1, then faulted-rival ×2 from seq 5, then faulted ×1 from seq 7',
    ]);
  });

  it('accepts writers that take turns, and reads of the other meanwhile', () => {
    expect(interleavedWriters([w(1, 'faulted'), entry(2, 'GET', '/api/sshusers', { client: 'faulted-rival' }), w(3, 'faulted'), w(4, 'faulted-rival')])).toEqual([]);
  });
});

describe('the schedules of issue 27', () => {
  it('give each new family its turn as the primary from ISSUE_27_SEEDS on, and leave the older seeds as they were', () => {
    const primaries = new Set(Array.from({ length: issue27Families.length }, (_, i) => makeSchedule(ISSUE_27_SEEDS + i).families[0]));
    expect([...primaries].sort()).toEqual([...issue27Families].sort());
    expect(faultFamilies).toHaveLength(20);
    expect(makeSchedule(1063).families).toEqual(['resets', 'endless-body', 'two-writers']);
  });

  it('mix in no family a primary excludes', () => {
    for (let seed = ISSUE_27_SEEDS; seed < ISSUE_27_SEEDS + 300; seed += 1) {
      const s = makeSchedule(seed);
      expect(s.families.every((f) => allFaultFamilies.includes(f)), `seed ${seed}`).toBe(true);
      if (s.families.includes('paused-writer')) expect(s.families.filter((f) => ['two-writers', 'kill', 'interrupt', 'interrupt-deep-queue'].includes(f)), `seed ${seed}`).toEqual([]);
      if (s.integratorKey) expect(s.writers, `seed ${seed}`).toBeUndefined();
    }
  });
});
