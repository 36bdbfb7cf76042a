import { describe, expect, it } from 'vitest';
import { heldWith, orderChanges } from '../../../src/apply/index.js';
import type { Change } from '../../../src/model/index.js';
import { actual } from '../../helpers/plan-fixtures.js';

// --replace of an apikey (issue 29): the old key's delete waits for its successor's create.
const successor: Change = { kind: 'apikey', action: 'create', key: 'ci', id: null, fields: { name: { before: null, after: 'ci' } }, replaces: 7 };
const old: Change = { kind: 'apikey', action: 'delete', key: 'ci', id: 7, fields: { name: { before: 'ci', after: null } }, replaced: true };
const other: Change = { kind: 'apikey', action: 'delete', key: 'x', id: 8, fields: { name: { before: 'x', after: null } } };

describe('the replaced key waits for its successor', () => {
  it('depends on the create (skipped if it does not apply); an ordinary delete does not', () => {
    const order = orderChanges([successor, old, other], actual());
    expect(order.before).toEqual([[0]]);
    expect(order.deletes).toEqual([1, 2]);
    expect([...order.dependsOn]).toEqual([[1, 0]]);
  });

  it('is held with its successor when that waits for an approval', () => {
    expect([...heldWith([successor, old, other], actual(), [0])].sort()).toEqual([0, 1]);
  });
});
