import { describe, expect, it } from 'vitest';
import { CredentialError } from '../../../src/api/index.js';
import { finishRun } from '../../../src/app/finish-run.js';
import { renewalGraceMs } from '../../../src/app/index.js';
import { AmsyncError, InterruptedError } from '../../../src/errors.js';

/** A context whose finish records the credential wait it was given and fails as told. */
function context(lost?: Error) {
  const graces: (number | undefined)[] = [];
  return {
    graces,
    settings: { http: { timeoutMs: 30_000 } } as never,
    finish: (_notifyGraceMs: number, credentialGraceMs?: number) => {
      graces.push(credentialGraceMs);
      return lost === undefined ? Promise.resolve() : Promise.reject(lost);
    },
  };
}

const notPersisted = () => new CredentialError('integrator_key_not_persisted', 'the service rotated the integrator key and it could not be written back to /keys/key (EROFS)');
const interrupted = () => new InterruptedError('SIGINT', 'interrupted by SIGINT: 3 applied, 0 failed, 7 not started (never sent); nothing was sent after the signal; the results above are saved');

describe('the end of a one-shot run after an interrupt', () => {
  it('a key that could not be kept is added to the interrupt line: exit 130 stays, both are said', async () => {
    const error = await finishRun(context(notPersisted()), 0, { error: interrupted() }, true).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InterruptedError);
    expect((error as InterruptedError).signal).toBe('SIGINT');
    expect((error as Error).message).toContain('interrupted by SIGINT: 3 applied, 0 failed, 7 not started');
    expect((error as Error).message).toContain('could not be written back to /keys/key');
    expect((error as Error).message.split('\n')).toHaveLength(1);
  });

  it('waits for a renewal on the wire at most the client timeout, not the full grace', async () => {
    const c = context();
    await expect(finishRun(c, 0, { error: interrupted() }, true)).rejects.toBeInstanceOf(InterruptedError);
    expect(c.graces).toEqual([30_000]);
    expect(30_000).toBeLessThan(renewalGraceMs);
  });

  it('without an interrupt: unchanged, the full grace, and a key lost is the failure', async () => {
    const c = context(notPersisted());
    const error = await finishRun(c, 0, undefined, false).catch((e: unknown) => e);
    expect((error as AmsyncError).code).toBe('integrator_key_not_persisted');
    expect(c.graces).toEqual([undefined]);
    const ok = context();
    const failure = new AmsyncError('unavailable', 'x');
    await expect(finishRun(ok, 0, { error: failure }, false)).rejects.toBe(failure);
  });
});
