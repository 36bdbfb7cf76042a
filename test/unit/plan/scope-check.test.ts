import { describe, expect, it } from 'vitest';
import type { Change, Plan } from '../../../src/model/index.js';
import { kindsWithoutWriteScope } from '../../../src/plan/scope-check.js';

const change = (kind: Change['kind']): Change => ({ kind, action: 'create', key: 'x', id: null, fields: {} });
const planOf = (...kinds: Change['kind'][]): Plan => ({ changes: kinds.map(change), unchanged: 0, unmanaged: [], protected: [], problems: [], notes: [] });
const scope = (name: string, write: boolean) => ({ name, read: true, write });

describe('which kinds a token may not write, from its scopes', () => {
  it('a kind the plan writes whose scope is read-only', () => {
    expect(kindsWithoutWriteScope(planOf('sshUser', 'apikey'), [scope('sshusers', false), scope('apikeys', true)])).toEqual(['sshUser']);
    expect(kindsWithoutWriteScope(planOf('apikey'), [scope('3rdparty.apikeys', false)])).toEqual(['apikey']);
  });

  it('nothing when the plan does not write that kind, or a scope of it allows writing', () => {
    expect(kindsWithoutWriteScope(planOf('apikey'), [scope('sshusers', false), scope('apikeys', true)])).toEqual([]);
    expect(kindsWithoutWriteScope(planOf('sshUser'), [scope('ssh_users', false), scope('sshusers', true)])).toEqual([]);
  });

  it('nothing for a kind no scope names: scope names are not promised, a guess must not stop a run', () => {
    expect(kindsWithoutWriteScope(planOf('sshUser', 'apikey'), [scope('firewall', false)])).toEqual([]);
    expect(kindsWithoutWriteScope(planOf('sshUser'), [])).toEqual([]);
  });
});
