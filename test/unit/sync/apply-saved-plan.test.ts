import { describe, expect, it } from 'vitest';
import { applySavedPlan, checkSavedPlan, runSync, type ApplySavedInput } from '../../../src/sync/index.js';
import { StalePlanError, passwordReferences, toSavedPlan, type SavedPlan } from '../../../src/saved-plan/index.js';
import { InvalidInputError, SafetyError } from '../../../src/errors.js';
import type { ChangeOf, DesiredState } from '../../../src/model/index.js';
import { stateFingerprint } from '../../../src/state/index.js';
import { StoreService } from '../../helpers/store-service.js';
import { desired, key, secret, user } from '../../helpers/plan-fixtures.js';

const d = desired({
  sshUsers: [user('deploy', { password: secret('pw-deploy') }), user('old', { ensure: 'absent' })],
  apikeys: [key('ci', { roles: [1, 2] })],
});

function seeded(): StoreService {
  const s = new StoreService();
  s.seedUser('old'); // 100
  s.seedKey('ci', [1]); // 101
  s.seedKey('manual'); // 102
  return s;
}

/** What `amsync plan --out` saves: a dry-run of the same sync. */
async function savedPlanOf(service: StoreService, state: DesiredState): Promise<SavedPlan> {
  const outcome = await runSync({ desired: state, service, maxDeletes: 10, dryRun: true });
  return toSavedPlan({
    amsyncVersion: '0.1.0',
    createdAt: '2025-01-02T03:04:05.000Z',
    desiredFile: 'access.yaml',
    desiredFileHash: 'a'.repeat(64),
    serviceUrl: 'https://access.example.com',
    settings: { prune: outcome.policy.prune, rotatePasswords: false, passwordMode: outcome.policy.passwords.mode, allowEmptyPrune: false, maxDeletes: 10 },
    actualFingerprint: outcome.actualFingerprint,
    plan: outcome.plan,
    passwords: passwordReferences(outcome.plan, state, (x) => x),
    actual: outcome.actual,
  });
}

function input(saved: SavedPlan, service: StoreService, extra: Partial<ApplySavedInput> = {}): ApplySavedInput {
  return { saved, planFile: 'plan.json', desiredFile: 'access.yaml', desired: d, desiredFileHash: 'a'.repeat(64), service, ...extra };
}

const writes = (s: StoreService) => s.calls.filter((c) => !c.startsWith('list') && !c.startsWith('fetch'));

describe('applying a saved plan', () => {
  it('applies exactly the saved changes, with the same results as a sync', async () => {
    const viaSync = seeded();
    const synced = await runSync({ desired: d, service: viaSync, maxDeletes: 10, dryRun: false });

    const viaPlan = seeded();
    const saved = await savedPlanOf(viaPlan, d);
    viaPlan.calls = [];
    const applied = await applySavedPlan(input(saved, viaPlan));
    expect(applied.results).toEqual(synced.results);
    expect(writes(viaPlan)).toEqual(['createSshUser deploy', 'updateApikey 101', 'deleteSshUser 100']);
    expect([...viaPlan.users.values()]).toEqual([...viaSync.users.values()]);
    expect([...viaPlan.keys.values()].map(({ tokenValue: _t, ...k }) => k)).toEqual([...viaSync.keys.values()].map(({ tokenValue: _t, ...k }) => k));
    expect(viaPlan.users.get(103)?.username).toBe('deploy');
    expect(viaPlan.hasPassword('deploy', 'pw-deploy')).toBe(true);
  });

  it('refuses when the service changed since the plan, says what changed, and writes nothing', async () => {
    const s = seeded();
    const saved = await savedPlanOf(s, d);
    s.seedUser('carol');
    s.putKey({ ...s.keys.get(101)!, roles: [1, 3] });
    s.dropUser(100);
    s.calls = [];
    const error = await applySavedPlan(input(saved, s)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StalePlanError);
    expect(error).toBeInstanceOf(SafetyError);
    expect((error as StalePlanError).code).toBe('stale_plan');
    expect((error as Error).message).toContain('  - sshUser carol (id 103) was created');
    expect((error as Error).message).toContain('  - sshUser old (id 100) was deleted');
    expect((error as Error).message).toContain('  - apikey ci (id 101): roles changed [1] → [1, 3]');
    expect(writes(s)).toEqual([]);
  });

  it('refuses when the desired file is not the one the plan was made from, before any request', async () => {
    const s = seeded();
    const saved = await savedPlanOf(s, d);
    s.calls = [];
    const error = await applySavedPlan(input(saved, s, { desiredFileHash: 'b'.repeat(64) })).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'stale_plan', message: expect.stringContaining('access.yaml changed since the plan was made') });
    expect(s.calls).toEqual([]);
  });

  it('refuses an edited plan whose changes this file and service do not call for', async () => {
    const s = seeded();
    const saved = await savedPlanOf(s, d);
    const edited: SavedPlan = {
      ...saved,
      plan: { ...saved.plan, changes: [...saved.plan.changes, { kind: 'apikey', action: 'delete', key: 'manual', id: 102, fields: { name: { before: 'manual', after: null } } }] },
    };
    s.calls = [];
    await expect(applySavedPlan(input(edited, s))).rejects.toMatchObject({ code: 'plan_mismatch' });
    expect(writes(s)).toEqual([]);
  });

  it('re-checks the deletion budget saved with the plan', async () => {
    const s = seeded();
    const saved = await savedPlanOf(s, d);
    const tightened: SavedPlan = { ...saved, settings: { ...saved.settings, maxDeletes: 0 } };
    await expect(applySavedPlan(input(tightened, s))).rejects.toMatchObject({ code: 'deletion_budget' });
    expect(writes(s)).toEqual([]);
  });

  it('finds a damaged snapshot, and a plan made by another amsync version, before anything else', async () => {
    const saved = await savedPlanOf(seeded(), d);
    const damaged: SavedPlan = { ...saved, actual: { ...saved.actual, sshUsers: [] } };
    expect(() => checkSavedPlan(damaged, 'plan.json', '0.1.0')).toThrow(InvalidInputError);
    expect(() => checkSavedPlan(saved, 'plan.json', '0.2.0')).toThrow(expect.objectContaining({ code: 'plan_mismatch', message: expect.stringContaining('made by amsync 0.1.0, and this is amsync 0.2.0') }));
    expect(() => checkSavedPlan(saved, 'plan.json', '0.1.0')).not.toThrow();
  });

  it('tells apikeys that share a name apart by their pinned id when drift is handled', async () => {
    const s = new StoreService();
    const a = s.seedKey('dup', [1]);
    const b = s.seedKey('dup', [2]);
    const pinned = desired({ apikeys: [key('dup', { id: b, roles: [3] }), key('dup', { id: a, roles: [1] })] });
    const saved = await savedPlanOf(s, pinned);
    expect(saved.plan.changes).toMatchObject([{ kind: 'apikey', action: 'update', key: 'dup', id: b }]);
    // The key is deleted behind amsync's back after the listing: the 404 re-plans that item,
    // which must be the one pinned to id b (roles [3]), not its namesake.
    s.before('updateApikey', (svc) => {
      svc.dropKey(b);
    });
    const { results } = await applySavedPlan(input(saved, s, { desired: pinned }));
    expect(results[0]).toMatchObject({ status: 'failed', error: expect.stringContaining(`id ${b}`) });
    expect(s.keys.get(a)?.roles).toEqual([1]);
  });
});

describe('a saved plan of a file that names roles', () => {
  const named = desired({ apikeys: [{ ...key('ci', { roles: [1] }), roleNames: [{ name: 'deployer' }] }] });
  const withRoles = (roles: { id: number; name: string }[]) => {
    const s = seeded();
    return Object.assign(s, { listRoles: async () => roles });
  };

  it('resolves the names again at apply, and applies the ids they named', async () => {
    const service = withRoles([{ id: 1, name: 'reader' }, { id: 2, name: 'deployer' }]);
    const saved = await savedPlanOf(service, named);
    expect((saved.plan.changes.find((c) => c.key === 'ci') as ChangeOf<'apikey'> | undefined)?.fields.roles).toEqual({ before: [1], after: [1, 2] });
    const applied = await applySavedPlan(input(saved, service, { desired: named }));
    expect(applied.roleNames).toEqual(new Map([[1, 'reader'], [2, 'deployer']]));
    expect(service.keys.get(101)!.roles).toEqual([1, 2]);
  });

  it('refuses when a name now names another role: what was reviewed is not what it would apply', async () => {
    const before = withRoles([{ id: 1, name: 'reader' }, { id: 2, name: 'deployer' }]);
    const saved = await savedPlanOf(before, named);
    const renamed = withRoles([{ id: 1, name: 'reader' }, { id: 3, name: 'deployer' }]);
    await expect(applySavedPlan(input(saved, renamed, { desired: named }))).rejects.toMatchObject({ code: 'plan_mismatch' });
    expect(writes(renamed)).toEqual([]);
  });
});

describe('the fingerprint of the listing is made only for a saved plan', () => {
  it('a run leaves it unhashed until it is read, and then it is the fingerprint of the listing', async () => {
    const outcome = await runSync({ desired: d, service: seeded(), maxDeletes: 10, dryRun: true });
    expect(typeof Object.getOwnPropertyDescriptor(outcome, 'actualFingerprint')?.get).toBe('function');
    expect(outcome.actualFingerprint).toBe(stateFingerprint(outcome.actual));
    expect(outcome.actualFingerprint).toBe(outcome.actualFingerprint);
  });
});
