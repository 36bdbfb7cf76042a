import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ActualState, DesiredState, SecretValue } from '../../../src/model/index.js';
import { plan } from '../../../src/plan/index.js';
import { approvalHash, approvalSetHash } from '../../../src/policy/index.js';
import { parseSavedPlan, serialiseSavedPlan, toSavedPlan } from '../../../src/saved-plan/index.js';
import { stateFingerprint } from '../../../src/state/index.js';

/**
 * Hashes written before the kinds were declared as data (issue 28): approvals people gave,
 * saved plans on disk and their fingerprints must keep matching. The values were computed by
 * the code before the change (commit b0f91d5) on this fixture; a field order, a name or a
 * value shape that moves changes them.
 */
const secret: SecretValue = { reveal: () => 'pw' };
const desired: DesiredState = {
  sshUsers: [
    { username: 'deploy', level: 'n1', password: secret, ensure: 'present' },
    { username: 'ops', id: 2, level: 'n2', ensure: 'present' },
    { username: 'gone', level: 'n1', ensure: 'absent' },
  ],
  apikeys: [
    { name: 'billing', superuser: true, roles: [7, 3], ensure: 'present' },
    { name: 'ci', superuser: false, roles: [1, 2], ensure: 'present' },
    { name: 'renamed', id: 11, superuser: true, roles: [], ensure: 'present' },
  ],
  prune: { sshUsers: true, apikeys: true },
  protect: { sshUsers: [], apikeys: [] },
};
const actual: ActualState = {
  sshUsers: [
    { id: 2, username: 'operator', level: 'n1' },
    { id: 5, username: 'gone', level: 'n1' },
    { id: 9, username: 'stray', level: 'n3' },
  ],
  apikeys: [
    { id: 10, name: 'ci', superuser: false, roles: [2] },
    { id: 11, name: 'old', superuser: false, roles: [4, 1] },
    { id: 12, name: 'extra', superuser: true, roles: [5] },
  ],
};
const planned = plan(desired, actual, { prune: desired.prune, isProtected: () => false, passwords: { mode: 'rotate' } });

const savedText = (): string =>
  serialiseSavedPlan(
    toSavedPlan({
      amsyncVersion: '0.1.0',
      createdAt: '2025-01-01T00:00:00.000Z',
      desiredFile: 'access.yaml',
      desiredFileHash: 'a'.repeat(64),
      serviceUrl: 'http://127.0.0.1:1',
      settings: { prune: desired.prune, rotatePasswords: true, passwordMode: 'rotate', allowEmptyPrune: false, maxDeletes: 10 },
      actualFingerprint: stateFingerprint(actual),
      plan: planned,
      passwords: [],
      actual,
    }),
  );

describe('hashes made before the kinds were declared still match', () => {
  it("each change's approval hash and the set's hash", () => {
    expect(planned.changes.map((c) => `${c.kind}:${c.key}:${c.action}=${approvalHash(c)}`)).toEqual([
      'sshUser:deploy:create=1de3950e4e6f0fed',
      'sshUser:gone:delete=eea30557b62a143c',
      'sshUser:ops:update=bc028f5d714e824d',
      'sshUser:stray:delete=25b4987a994c46bf',
      'apikey:billing:create=c5809c16192d87aa',
      'apikey:ci:update=626c05e4e2798d76',
      'apikey:extra:delete=da1188e92fb4f42a',
      'apikey:renamed:update=2d4eff1fce195941',
    ]);
    expect(approvalSetHash(planned.changes)).toBe('9a6ea52b7e6fd20b');
  });

  it('the state fingerprint', () => {
    expect(stateFingerprint(actual)).toBe('86d2a614523b50d57b654eb8c3108346d60ff6a9eeb7fb1b43fca84a82169e04');
  });

  it("a saved plan's bytes, and read back it writes the same bytes", () => {
    const text = savedText();
    expect(createHash('sha256').update(text).digest('hex')).toBe('d82f7b60a129ff9b05ece9c22eee706a51fbb37629661c1feb9c2a622b61c876');
    expect(serialiseSavedPlan(parseSavedPlan(text, 'plan.json'))).toBe(text);
  });
});
