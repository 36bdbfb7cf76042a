import { describe, expect, it } from 'vitest';
import type { Change, ChangeResult, Plan } from '../../../src/model/index.js';
import { syncEvents } from '../../../src/sync/sync-events.js';

const planOf = (changes: Change[]): Plan => ({ changes, unchanged: 0, unmanaged: [], protected: [], problems: [], notes: [] });
const applied = (key: string, action: ChangeResult['action']): ChangeResult => ({ kind: 'sshUser', key, action, status: 'applied' });

describe('credential_rotated', () => {
  it('is told for an applied update that set a new generated password, not for a create or a declared password', () => {
    const plan = planOf([
      { kind: 'sshUser', action: 'create', key: 'new', id: null, fields: { username: { before: null, after: 'new' }, password: { before: null, after: '(generated)' } } },
      { kind: 'sshUser', action: 'update', key: 'alice', id: 1, fields: { password: { before: '(sensitive)', after: '(generated)' } }, reason: 'password rotation: set 30d ago, rotated every 30d' },
      { kind: 'sshUser', action: 'update', key: 'bob', id: 2, fields: { password: { before: '(sensitive)', after: '(sensitive)' } }, reason: 'password changed' },
    ]);
    const events = syncEvents({ plan, results: [applied('new', 'create'), applied('alice', 'update'), applied('bob', 'update')] }, { dryRun: false });
    const rotated = events.filter((e) => e.event === 'credential_rotated');
    expect(rotated).toEqual([{ event: 'credential_rotated', target: null, summary: { rotated: 1 }, changes: [{ kind: 'sshUser', action: 'update', key: 'alice' }], message: '1 credential rotated' }]);
  });

  it('is not told when the rotation did not apply', () => {
    const plan = planOf([{ kind: 'sshUser', action: 'update', key: 'alice', id: 1, fields: { password: { before: '(sensitive)', after: '(generated)' } } }]);
    const events = syncEvents({ plan, results: [{ ...applied('alice', 'update'), status: 'failed', error: 'x' }] }, { dryRun: false });
    expect(events.map((e) => e.event)).toEqual(['failure']);
  });
});
