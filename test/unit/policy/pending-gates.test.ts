import { describe, expect, it } from 'vitest';
import { noReview, type ApprovalStatus } from '../../../src/model/index.js';
import { changesToWrite, pendingGates } from '../../../src/policy/index.js';

const status = (approved: number[]): ApprovalStatus => ({
  review: {
    ...noReview,
    gates: [
      { index: 0, hash: 'aaaaaaaaaaaaaaaa', rules: ['superuser'] },
      { index: 2, hash: 'bbbbbbbbbbbbbbbb', rules: ['approveRoles'] },
    ],
    setHash: 'ffffffffffffffff',
  },
  approved,
  withheld: [],
});
const plan = { changes: ['gated-0', 'plain-1', 'gated-2', 'plain-3'] };

describe('what the prompt still asks for, and what is written after it', () => {
  it('the pending gates are those no approval covers yet', () => {
    expect(pendingGates(status([])).map((g) => g.index)).toEqual([0, 2]);
    expect(pendingGates(status([2])).map((g) => g.index)).toEqual([0]);
  });

  it('a plain yes writes the ungated changes and those approved before', () => {
    expect(changesToWrite(plan, status([]), [])).toEqual(['plain-1', 'plain-3']);
    expect(changesToWrite(plan, status([0]), [])).toEqual(['gated-0', 'plain-1', 'plain-3']);
  });

  it("a typed hash adds its change; the set's hash adds them all", () => {
    expect(changesToWrite(plan, status([]), ['BBBBBBBBBBBBBBBB '])).toEqual(['plain-1', 'gated-2', 'plain-3']);
    expect(changesToWrite(plan, status([]), ['ffffffffffffffff'])).toEqual(plan.changes);
  });
});
