import { describe, expect, it } from 'vitest';
import { SENSITIVE } from '../../../src/model/index.js';
import { plan } from '../../../src/plan/index.js';
import { actual, desired, policyFor, secret, user } from '../../helpers/plan-fixtures.js';

/**
 * `--secrets optional`: users whose password is declared (`passwordRef`) and could not be read
 * (`passwordUnavailable`) are planned as they will be applied, and the plan says what it lacks.
 */
const missing = (shown: string) => ({ passwordRef: { kind: 'env', name: shown.slice(4) } as const, passwordUnavailable: shown });
const d = desired({
  sshUsers: [
    user('alice', missing('env ALICE_PASSWORD')),
    user('bob', missing('env BOB_PASSWORD')),
    user('carol', { password: secret('carol-pw'), passwordRef: { kind: 'env', name: 'CAROL_PASSWORD' } }),
    user('gone', { ...missing('env GONE_PASSWORD'), ensure: 'absent' }),
  ],
});
const remote = actual([{ id: 1, username: 'alice', level: 'n1' }, { id: 3, username: 'carol', level: 'n1' }]);
const fingerprints = { desired: new Map([['carol', 'fp-c']]), applied: new Map([['1', 'fp-a'], ['3', 'fp-c']]) };

describe('a plan made without some passwords', () => {
  it('creates with the password (sensitive), checks no drift of a missing one, and says so once', () => {
    const p = plan(d, remote, policyFor(d), fingerprints);
    expect(p.changes.map((c) => [c.action, c.key])).toEqual([['create', 'bob']]);
    expect(p.changes[0]!.fields).toEqual({ username: { before: null, after: 'bob' }, level: { before: null, after: 'n1' }, password: { before: null, after: SENSITIVE } });
    expect(p.problems).toEqual([]);
    expect(p.passwordsUnavailable).toEqual({ references: ['env ALICE_PASSWORD', 'env BOB_PASSWORD'], changes: ['bob'], driftNotChecked: ['alice'] });
    expect(p.notes).toEqual([
      'Password secrets not available to this run (--secrets optional): env ALICE_PASSWORD, env BOB_PASSWORD. Password drift not checked for 1 existing SSH user. A change marked "not available to this run" sends the password when it is applied with the secret.',
    ]);
  });

  it('rotates a missing password as any other (--rotate-passwords): the update sends it when applied', () => {
    const p = plan(d, remote, policyFor(d, { passwords: { mode: 'rotate' } }), fingerprints);
    expect(p.changes.map((c) => [c.action, c.key, c.reason])).toEqual([
      ['update', 'alice', 'password rotation'],
      ['create', 'bob', undefined],
      ['update', 'carol', 'password rotation'],
    ]);
    expect(p.passwordsUnavailable).toEqual({ references: ['env ALICE_PASSWORD', 'env BOB_PASSWORD'], changes: ['alice', 'bob'], driftNotChecked: [] });
  });

  it('without a state file compares no password anyway: nothing is "not checked" for want of a secret', () => {
    const p = plan(d, remote, policyFor(d, { passwords: { mode: 'create-only' } }));
    expect(p.passwordsUnavailable?.driftNotChecked).toEqual([]);
    expect(p.notes).toHaveLength(2);
  });

  it('names at most 20 references in the note; the plan keeps them all', () => {
    const many = desired({ sshUsers: Array.from({ length: 25 }, (_, i) => user(`u${String(i).padStart(2, '0')}`, missing(`env P${String(i).padStart(2, '0')}`))) });
    const p = plan(many, actual(), policyFor(many));
    expect(p.passwordsUnavailable?.references).toHaveLength(25);
    expect(p.notes[0]).toContain('env P19 and 5 more.');
    expect(p.notes[0]).not.toContain('env P20');
  });

  it('with every password read, the plan is as before: no field, no note', () => {
    const full = desired({ sshUsers: [user('carol', { password: secret('carol-pw') })] });
    const p = plan(full, remote, policyFor(full), fingerprints);
    expect(p).not.toHaveProperty('passwordsUnavailable');
    expect(p.notes).toEqual([]);
  });
});
