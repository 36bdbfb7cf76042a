import { describe, expect, it } from 'vitest';
import { approvalHint, diagnosticCodes, noReview, type ApprovalStatus, type PlanReview } from '../../../src/model/index.js';

const review: PlanReview = {
  ...noReview,
  gates: [
    { index: 0, hash: 'aaaaaaaaaaaaaaaa', rules: ['superuser'] },
    { index: 2, hash: 'bbbbbbbbbbbbbbbb', rules: ['approveRoles'] },
  ],
  setHash: 'ssssssssssssssss',
};
const status = (approved: number[]): ApprovalStatus => ({ review, approved, withheld: [] });

describe('the approval hint names what approves the pending changes on the next run', () => {
  it('nothing approved yet: the one set hash approves every gated change', () => {
    expect(approvalHint(status([]))).toEqual({ hashes: ['ssssssssssssssss'], flags: '--approve ssssssssssssssss', setHash: true });
  });

  it('some approved: the set hash would match no change next time, so each pending change by its own hash', () => {
    expect(approvalHint(status([0]))).toEqual({ hashes: ['bbbbbbbbbbbbbbbb'], flags: '--approve bbbbbbbbbbbbbbbb', setHash: false });
  });

  it('all approved, or no gates: nothing to pass', () => {
    expect(approvalHint(status([0, 2]))).toEqual({ hashes: [], flags: '', setHash: false });
    expect(approvalHint({ review: noReview, approved: [], withheld: [] })).toEqual({ hashes: [], flags: '', setHash: false });
  });
});

describe('diagnostic codes are stable identifiers', () => {
  it('each is snake_case and used for one finding only', () => {
    const codes = Object.values(diagnosticCodes);
    for (const code of codes) expect(code).toMatch(/^[a-z]+(_[a-z0-9]+)*$/);
    expect(new Set(codes).size).toBe(codes.length);
  });
});
