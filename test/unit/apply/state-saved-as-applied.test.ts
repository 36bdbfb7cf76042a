import { passwordFingerprints } from '../../../src/apply/index.js';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { executePlan } from '../../../src/apply/index.js';
import { StateSaver } from '../../../src/apply/state-saver.js';
import { plan } from '../../../src/plan/index.js';
import { openPasswordState, type PasswordState } from '../../../src/secrets/state-file.js';
import { readActualState } from '../../../src/state/index.js';
import { deferred, waitFor } from '../../helpers/daemon-deferred.js';
import { StoreService } from '../../helpers/store-service.js';
import { desired, policyFor, secret, user } from '../../helpers/plan-fixtures.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'amsync-state-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const users = (n: number) => desired({ sshUsers: Array.from({ length: n }, (_, i) => user(`u${i}`, { password: secret(`pw-${i}`) })) });

async function run(service: StoreService, state: PasswordState, n: number) {
  const d = users(n);
  const { state: actual, tokens } = await readActualState(service);
  const policy = policyFor(d);
  const fingerprints = passwordFingerprints(d, state);
  return executePlan({ plan: plan(d, actual, policy), desired: d, actual, tokens, policy, service, passwordState: state, fingerprints });
}

describe('fingerprints are saved as writes succeed, not only at the end', () => {
  it('the state file already holds the first users while later creates are still running', async () => {
    const path = join(dir, 'state.json');
    const state = await openPasswordState({ path, serviceUrl: 'http://127.0.0.1:1', keyFromEnv: 'k' });
    const s = new StoreService();
    // Half the creates answer at once; the other half wait until the test lets them go.
    const gate = deferred<void>();
    const create = s.createSshUser.bind(s);
    s.createSshUser = async (body) => {
      if (Number(body.username.slice(1)) >= 10) await gate.promise;
      return create(body);
    };
    const running = run(s, state, 20);
    const onDisk = async () => {
      const text = await readFile(path, 'utf8').catch(() => undefined);
      return text === undefined ? 0 : Object.keys(JSON.parse(text).services['http://127.0.0.1:1'].sshUserPasswords).length;
    };
    // A kill now would keep these ten: they are on disk before the run ends.
    await waitFor(async () => (await onDisk()) === 10, 'the first ten fingerprints on disk mid-apply');
    gate.resolve();
    const outcome = await running;
    expect(outcome.stateSaveError).toBeUndefined();
    expect(await onDisk()).toBe(20);
    expect(state.dirty).toBe(false);
  });

  it('a record made while a save is being written is saved too (no lost update)', async () => {
    const path = join(dir, 'state.json');
    const state = await openPasswordState({ path, serviceUrl: 'http://x', keyFromEnv: 'k' });
    const saver = new StateSaver(state);
    state.record(1, 'a');
    saver.touch();
    state.record(2, 'b'); // while the first save is in flight
    saver.touch();
    expect(await saver.flush()).toBeUndefined();
    expect(JSON.parse(await readFile(path, 'utf8')).services['http://x'].sshUserPasswords).toEqual({ 1: 'a', 2: 'b' });
  });

  it('a full disk does not stop the apply: every result is kept and the error is handed back', async () => {
    const real = await openPasswordState({ path: join(dir, 'state.json'), serviceUrl: 'http://x', keyFromEnv: 'k' });
    const enospc = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    const full: PasswordState = {
      get exists() {
        return real.exists;
      },
      applied: real.applied,
      key: real.key,
      record: (id, fp) => real.record(id, fp),
      forget: (id) => real.forget(id),
      get dirty() {
        return real.dirty;
      },
      save: async () => {
        throw enospc;
      },
    };
    const s = new StoreService();
    const outcome = await run(s, full, 5);
    expect(outcome.results.map((r) => r.status)).toEqual(['applied', 'applied', 'applied', 'applied', 'applied']);
    expect(outcome.stateSaveError).toBe(enospc);
    expect(s.users.size).toBe(5);
  });
});
