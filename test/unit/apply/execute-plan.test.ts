import { noFingerprints } from '../../../src/plan/index.js';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { executePlan } from '../../../src/apply/execute-plan.js';
import { plan } from '../../../src/plan/index.js';
import { openPasswordState } from '../../../src/secrets/index.js';
import { TokenSink } from '../../../src/secrets/token-sink.js';
import { readActualState } from '../../../src/state/index.js';
import { StoreService } from '../../helpers/store-service.js';
import { desired, key, policyFor } from '../../helpers/plan-fixtures.js';

/**
 * Found by the chaos run (test/chaos, drift family): an apikey deleted by someone else between
 * the listing and its update was created again, its new token written to tokensDir, and then
 * overwritten with the deleted key's token from the listing, so a sync that exited 0 left a
 * token of no existing key for the app to use.
 */

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'amsync-execute-plan-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function syncWithSink(service: StoreService, d: ReturnType<typeof desired>) {
  const { state, tokens } = await readActualState(service);
  const policy = policyFor(d);
  return executePlan({ plan: plan(d, state, policy), desired: d, actual: state, tokens, policy, service, fingerprints: noFingerprints, tokenSink: new TokenSink(join(dir, 'tokens')) });
}

describe("after a sync, each declared key's token file holds that key's current token", () => {
  it('a key deleted between the listing and its update is created again, and its file gets the new token, not the deleted one', async () => {
    const s = new StoreService();
    const old = s.seedKey('billing', [1]);
    s.before('updateApikey', (svc) => {
      svc.dropKey(old);
    });
    const { results } = await syncWithSink(s, desired({ apikeys: [key('billing', { roles: [1, 2] })] }));
    expect(results[0]).toMatchObject({ action: 'update', status: 'applied', drift: expect.stringContaining('created it again') });
    const [current] = [...s.keys.values()];
    expect(current!.tokenValue).not.toBe(`tok-${old}`);
    expect(await readFile(join(dir, 'tokens', 'billing'), 'utf8')).toBe(current!.tokenValue);
  });

  it('keys that did not change get the token of the listing (a deleted token file is repaired)', async () => {
    const s = new StoreService();
    const id = s.seedKey('monitor', [1]);
    await syncWithSink(s, desired({ apikeys: [key('monitor', { roles: [1] })] }));
    expect(await readFile(join(dir, 'tokens', 'monitor'), 'utf8')).toBe(`tok-${id}`);
  });
});

describe("a lost create's key, found and adopted, gets its token file in the same run", () => {
  it('the token is taken from the listing that found the key (the lost answer carried it)', async () => {
    const s = new StoreService();
    s.before('createApikey', () => 'commit-then-lose');
    const { results } = await syncWithSink(s, desired({ apikeys: [key('deploy-key', { roles: [1] })] }));
    expect(results[0]).toMatchObject({ action: 'create', status: 'applied', drift: expect.stringContaining('adopted it') });
    const [created] = [...s.keys.values()];
    expect(await readFile(join(dir, 'tokens', 'deploy-key'), 'utf8')).toBe(created!.tokenValue);
  });
});

describe('a rotation record ends with either of its keys', () => {
  it('the successor deleted (pinned `ensure: absent`): the record naming it as successor is forgotten at once, so an id the service hands out again is no successor', async () => {
    const s = new StoreService();
    const old = s.seedKey('ci', [1]);
    const successor = s.seedKey('ci', [1]);
    const state = await openPasswordState({ path: join(dir, 'state.json'), serviceUrl: 'http://a', keyFromEnv: 'k' });
    state.recordRotating!(old, { successor, since: 1 });
    const d = desired({ apikeys: [key('ci', { roles: [1], id: successor, ensure: 'absent' })] });
    const { state: actual, tokens } = await readActualState(s);
    const policy = policyFor(d);
    const clock = { now: 2, rotating: new Map([[old, { successor, since: 1 }]]) };
    const p = plan(d, actual, policy, noFingerprints, clock);
    expect(p.changes.map((c) => [c.action, c.id])).toEqual([['delete', successor]]);
    const { results } = await executePlan({ plan: p, desired: d, actual, tokens, policy, service: s, fingerprints: noFingerprints, passwordState: state });
    expect(results.map((r) => r.status)).toEqual(['applied']);
    expect([...(state.rotating ?? [])]).toEqual([]);
  });
});
