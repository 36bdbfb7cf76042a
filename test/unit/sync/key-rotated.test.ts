import { describe, expect, it } from 'vitest';
import type { Change, Plan } from '../../../src/model/index.js';
import { syncEvents } from '../../../src/sync/sync-events.js';

const planOf = (changes: Change[]): Plan => ({ changes, unchanged: 0, unmanaged: [], protected: [], problems: [], notes: [] });
const fields = { name: { before: null, after: 'ci' }, superuser: { before: null, after: false }, roles: { before: null, after: [1] } };

describe('credential_rotated for apikeys (rotate: {every, overlap})', () => {
  it('is told for an applied successor create of a scheduled rotation, not for a --replace or a plain create', () => {
    const plan = planOf([
      { kind: 'apikey', action: 'create', key: 'ci', id: null, fields, reason: 'rotation: token created 90d ago, rotated every 90d; replaces id 5', replaces: 5 },
      { kind: 'apikey', action: 'create', key: 'manual', id: null, fields, reason: 'replaces id 6', replaces: 6 },
      { kind: 'apikey', action: 'create', key: 'fresh', id: null, fields },
    ]);
    const results = [
      { kind: 'apikey' as const, key: 'ci', action: 'create' as const, status: 'applied' as const, id: 9, replaces: 5 },
      { kind: 'apikey' as const, key: 'manual', action: 'create' as const, status: 'applied' as const, id: 10, replaces: 6 },
      { kind: 'apikey' as const, key: 'fresh', action: 'create' as const, status: 'applied' as const, id: 11 },
    ];
    const rotated = syncEvents({ plan, results }, { dryRun: false }).filter((e) => e.event === 'credential_rotated');
    expect(rotated).toEqual([{ event: 'credential_rotated', target: null, summary: { rotated: 1 }, changes: [{ kind: 'apikey', action: 'create', key: 'ci' }], message: '1 credential rotated' }]);
  });
});
