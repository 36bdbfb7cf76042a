import { describe, expect, it } from 'vitest';
import { describeServiceChange, diffActualStates, staleMessage } from '../../../src/saved-plan/index.js';
import { actual } from '../../helpers/plan-fixtures.js';

const before = actual(
  [{ id: 7, username: 'bob', level: 'n1' }, { id: 8, username: 'dave', level: 'n1' }],
  [{ id: 4, name: 'ci', superuser: false, roles: [1] }, { id: 5, name: 'grafana', superuser: false, roles: [2, 3] }],
);

describe('what changed on the service since a plan was made', () => {
  it('names created, deleted and changed items, item by item, matched by id', () => {
    const after = actual(
      [{ id: 8, username: 'dave', level: 'n1' }, { id: 12, username: 'carol', level: 'n1' }],
      [{ id: 4, name: 'ci', superuser: false, roles: [2, 1] }, { id: 5, name: 'grafana', superuser: false, roles: [3, 2] }],
    );
    expect(diffActualStates(before, after).map(describeServiceChange)).toEqual([
      'sshUser bob (id 7) was deleted',
      'sshUser carol (id 12) was created',
      'apikey ci (id 4): roles changed [1] → [1, 2]',
    ]);
  });

  it('reports renames and several fields of one item on one line', () => {
    const after = actual([{ id: 7, username: 'robert', level: 'n2' }, before.sshUsers[1]!], [{ id: 4, name: 'ci-2', superuser: true, roles: [1] }, before.apikeys[1]!]);
    expect(diffActualStates(before, after).map(describeServiceChange)).toEqual([
      'sshUser bob (id 7): username changed bob → robert, level changed n1 → n2',
      'apikey ci (id 4): name changed ci → ci-2, superuser changed false → true',
    ]);
  });

  it('finds nothing between equal listings, whatever their order (roles are sets)', () => {
    const shuffled = actual([...before.sshUsers].reverse(), [{ id: 5, name: 'grafana', superuser: false, roles: [3, 2, 3] }, before.apikeys[0]!]);
    expect(diffActualStates(before, shuffled)).toEqual([]);
  });

  it('quotes a name that is not a plain word, so it cannot fake a line or move the cursor', () => {
    const after = actual([...before.sshUsers, { id: 9, username: 'evil\n  - sshUser x was deleted\u001b[2J', level: 'n1' }], [...before.apikeys]);
    const line = describeServiceChange(diffActualStates(before, after)[0]!);
    expect(line).toBe('sshUser "evil\\n  - sshUser x was deleted\\u001b[2J" (id 9) was created');
  });

  it('builds the refusal message: what moved, and what to do', () => {
    const after = actual([before.sshUsers[1]!, { id: 12, username: 'carol', level: 'n1' }], [...before.apikeys]);
    expect(staleMessage('plan.json', { reason: 'service', changes: diffActualStates(before, after) })).toBe(
      [
        'the saved plan plan.json is stale: the service changed since the plan was made (2 items); nothing was written:',
        '  - sshUser bob (id 7) was deleted',
        '  - sshUser carol (id 12) was created',
        'To go on, plan again (`amsync plan --out plan.json`), review it, and apply the new plan.',
      ].join('\n'),
    );
  });

  it('lists at most 20 items, then says how many more', () => {
    const many = actual(Array.from({ length: 25 }, (_, i) => ({ id: 100 + i, username: `u${100 + i}`, level: 'n1' })));
    const message = staleMessage('p.json', { reason: 'service', changes: diffActualStates(actual(), many) });
    expect(message.split('\n').filter((l) => l.startsWith('  - '))).toHaveLength(21);
    expect(message).toContain('  - … and 5 more');
  });
});
