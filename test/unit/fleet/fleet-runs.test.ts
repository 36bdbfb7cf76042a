import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/api/index.js';
import { LockWaitStoppedError } from '../../../src/errors.js';
import { runFleetSync, type Target } from '../../../src/fleet/index.js';
import type { DesiredState } from '../../../src/model/index.js';
import type { SyncOutcome } from '../../../src/sync/index.js';

const target = (name: string): Target => ({ name, url: `https://${name}.example` }) as Target;
const desired = { sshUsers: [], apikeys: [] } as unknown as DesiredState;

/** Runs two targets, one at a time; the first throws `error` after the interrupt came. */
async function interruptedWith(error: Error) {
  const stop = new AbortController();
  const { outcomes } = await runFleetSync({
    targets: [target('a'), target('b')],
    desired,
    concurrency: 1,
    signal: stop.signal,
    syncTarget: (): Promise<SyncOutcome> => {
      stop.abort(new Error('interrupted (SIGINT)'));
      return Promise.reject(error);
    },
  });
  return outcomes;
}

describe('an interrupt during a fleet sync', () => {
  it('a target cut short before it wrote (its listing stopped) is interrupted, not "not started": it was contacted', async () => {
    const listing = new ApiError('network', 'GET /api/sshusers: stopped', { method: 'GET', path: '/api/sshusers', route: '/api/sshusers', stopped: true });
    const [a, b] = await interruptedWith(listing);
    expect(a).toMatchObject({ name: 'a', status: 'interrupted', error: { code: 'interrupted', message: 'interrupted before any change was sent: nothing was written' } });
    expect(b).toMatchObject({ name: 'b', status: 'skipped', error: { code: 'interrupted', message: 'not started: the run was interrupted' } });
  });

  it('a target waiting for its writer lock is interrupted, not failed; nothing was sent', async () => {
    const [a] = await interruptedWith(new LockWaitStoppedError('/s/state.a.json.lock', 'held by pid 4711 on this host'));
    expect(a).toMatchObject({ status: 'interrupted', error: { code: 'interrupted', message: 'interrupted while waiting for the writer lock /s/state.a.json.lock (held by pid 4711 on this host); nothing was sent' } });
  });

  it('any other error is still that target\'s failure', async () => {
    const [a] = await interruptedWith(new Error('boom'));
    expect(a).toMatchObject({ status: 'failed', error: { message: 'boom' } });
  });
});
