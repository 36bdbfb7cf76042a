import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AuditTrail } from '../../../src/app/audit-trail.js';
import type { Change, Plan } from '../../../src/model/index.js';
import { createLogger } from '../../../src/obs/index.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'amsync-trail-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const update = (id: number, roles: number[]): Change => ({ kind: 'apikey', action: 'update', key: 'ci', id, fields: { roles: { before: [], after: roles } } });

describe('the audit trail of one apply', () => {
  it('keeps apart apikeys that share a name: each result line carries its own change, found by id', async () => {
    const plan: Plan = { changes: [update(5, [1]), update(9, [2, 3])], unchanged: 0, unmanaged: [], protected: [], problems: [], notes: [] };
    const trail = new AuditTrail(join(dir, 'audit.jsonl'), {}, createLogger({ level: 'silent', destination: { write: () => true }, pretty: false, colorize: false }));
    const hooks = trail.hooks(plan, 'manual');
    for (const change of plan.changes) hooks.onAttempt(change);
    hooks.onResult({ kind: 'apikey', key: 'ci', action: 'update', status: 'applied', id: 9 });
    hooks.onResult({ kind: 'apikey', key: 'ci', action: 'update', status: 'applied', id: 5 });
    trail.close();
    const lines = (await readFile(join(dir, 'audit.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as { phase: string; id: number; values: { roles: number[] } });
    expect(lines.map((l) => `${l.phase} ${l.id} ${JSON.stringify(l.values.roles)}`)).toEqual(['attempt 5 [1]', 'attempt 9 [2,3]', 'result 9 [2,3]', 'result 5 [1]']);
  });
});
