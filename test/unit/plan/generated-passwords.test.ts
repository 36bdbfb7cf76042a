import { describe, expect, it } from 'vitest';
import { GENERATED, SENSITIVE, type GeneratedPassword } from '../../../src/model/index.js';
import { itemSelection } from '../../../src/apply/index.js';
import { plan, type GeneratedPasswordFacts } from '../../../src/plan/index.js';
import { actual, desired, policyFor, user } from '../../helpers/plan-fixtures.js';

/** `password: {generate}` and `rotate: {every}` in the (pure) planner: generated once, rotated when due. */
const day = 86_400_000;
const generated = (extra: Partial<GeneratedPassword> = {}): { passwordGenerated: GeneratedPassword } => ({ passwordGenerated: { length: 32, classes: ['lower', 'upper', 'digit', 'symbol'], ...extra } });
const rotating = generated({ rotateEveryMs: 30 * day, rotateEvery: '30d' });
const now = Date.UTC(2026, 0, 31);
const remote = actual([{ id: 1, username: 'alice', level: 'n1' }]);
const facts = (records: GeneratedPasswordFacts['records'], notInSink: readonly string[] = []) => ({
  desired: new Map<string, string>(),
  applied: new Map([['1', 'fp']]),
  generated: { now, records, notInSink: new Set(notInSink) },
});

describe('generated passwords in the plan', () => {
  it('a create carries (generated), never a value', () => {
    const d = desired({ sshUsers: [user('bob', generated())] });
    const p = plan(d, remote, policyFor(d), facts(new Map()));
    expect(p.changes).toEqual([expect.objectContaining({ action: 'create', key: 'bob', fields: { username: { before: null, after: 'bob' }, level: { before: null, after: 'n1' }, password: { before: null, after: GENERATED } } })]);
  });

  it('an existing user with a recorded password keeps it until the rotation is due', () => {
    const d = desired({ sshUsers: [user('alice', rotating)] });
    expect(plan(d, remote, policyFor(d), facts(new Map([['1', { setAt: now - 30 * day + 1 }]]))).changes).toEqual([]);
    const due = plan(d, remote, policyFor(d), facts(new Map([['1', { setAt: now - 30 * day }]])));
    expect(due.changes).toEqual([
      expect.objectContaining({ action: 'update', key: 'alice', id: 1, fields: { password: { before: SENSITIVE, after: GENERATED } }, reason: 'password rotation: set 30d ago, rotated every 30d' }),
    ]);
  });

  it('without rotate: never generated again, however old', () => {
    const d = desired({ sshUsers: [user('alice', generated())] });
    expect(plan(d, remote, policyFor(d), facts(new Map([['1', { setAt: 0 }]]))).changes).toEqual([]);
  });

  it('a password the sink lost is generated again (an update)', () => {
    const d = desired({ sshUsers: [user('alice', generated())] });
    const p = plan(d, remote, policyFor(d), facts(new Map([['1', { setAt: now, lost: true }]])));
    expect(p.changes.map((c) => [c.action, c.reason])).toEqual([['update', 'the generated password was not written to the sink: a new one is generated']]);
  });

  it('a user amsync never set a password for keeps it, and a sink that lacks it is a note, not a write', () => {
    const d = desired({ sshUsers: [user('alice', rotating)] });
    const none = plan(d, remote, policyFor(d), facts(new Map()));
    expect(none.changes).toEqual([]);
    expect(none.notes).toEqual(['Generated password not set by amsync, kept as it is: SSH user "alice"; --replace sshUser:NAME generates and sets one.']);
    const unsunk = plan(d, remote, policyFor(d), facts(new Map([['1', { setAt: now }]]), ['alice']));
    expect(unsunk.changes).toEqual([]);
    expect(unsunk.notes).toEqual(['Generated password missing from the password sink (or changed there), kept as it is on the service: SSH user "alice"; --replace sshUser:NAME sets a new one.']);
  });

  it('--rotate-passwords generates a new one; --replace sshUser:NAME does too', () => {
    const d = desired({ sshUsers: [user('alice', generated())] });
    const rotated = plan(d, remote, policyFor(d, { passwords: { mode: 'rotate' } }), facts(new Map([['1', { setAt: now }]])));
    expect(rotated.changes.map((c) => c.kind === 'sshUser' && c.fields.password)).toEqual([{ before: SENSITIVE, after: GENERATED }]);
    const replaced = plan(d, remote, policyFor(d, { selection: itemSelection({ only: [], exclude: [], replace: ['sshUser:alice'] })! }), facts(new Map([['1', { setAt: now }]])));
    expect(replaced.changes.map((c) => [c.action, c.kind === 'sshUser' && c.fields.password])).toEqual([['update', { before: SENSITIVE, after: GENERATED }]]);
  });
});
