import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseApprovals, readApprovalsFile, readiness, defaultReadiness, type DaemonStatus } from '../../../src/daemon/index.js';

/** The daemon's approvals file (DESIGN.md §10): a list of hashes the pipeline writes. */

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'amsync-approvals-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const A = '3f9c0a1be27d4410';
const B = '0be1c2d3e4f50617';

describe('an approvals file is a YAML or JSON list of hashes', () => {
  it('reads a YAML list with comments, a JSON list, or an approvals: key; case does not matter', () => {
    expect(parseApprovals(`# PR 42\n- ${A}\n- ${B.toUpperCase()}  # PR 43\n`, 'a.yaml')).toEqual({ ok: true, hashes: new Set([A, B]) });
    expect(parseApprovals(JSON.stringify([A]), 'a.json')).toEqual({ ok: true, hashes: new Set([A]) });
    expect(parseApprovals(`approvals:\n  - ${A}\n`, 'a.yaml')).toEqual({ ok: true, hashes: new Set([A]) });
    expect(parseApprovals('', 'a.yaml')).toEqual({ ok: true, hashes: new Set() });
  });

  it('anything else approves nothing, and says why: one bad entry spoils the file', () => {
    expect(parseApprovals(`- ${A}\n- yes\n`, 'a.yaml')).toEqual({ ok: false, error: 'a.yaml: entry 2 is not an approval hash (16 hex digits, as the plan prints it)' });
    expect(parseApprovals(`{ hashes: [${A}] }`, 'a.yaml')).toMatchObject({ ok: false });
    expect(parseApprovals('- [unclosed', 'a.yaml')).toMatchObject({ ok: false, error: expect.stringContaining('is not YAML or JSON') });
  });

  it('a missing file approves nothing without an error (not written yet); a folder is an error', async () => {
    expect(await readApprovalsFile(join(dir, 'none.yaml'))).toEqual({ ok: true, hashes: new Set(), missing: true });
    expect(await readApprovalsFile(dir)).toMatchObject({ ok: false });
    await writeFile(join(dir, 'ok.yaml'), `- ${A}\n`);
    expect(await readApprovalsFile(join(dir, 'ok.yaml'))).toEqual({ ok: true, hashes: new Set([A]) });
  });
});

describe('/readyz with changes waiting for approval', () => {
  const ready: DaemonStatus = {
    lastSuccessAt: 1,
    lastOutcome: 'success',
    lastError: undefined,
    consecutiveFailures: 0,
    configValid: true,
    running: false,
    stuck: false,
    lastRunAbandoned: false,
    runDeadlineMs: 600_000,
    stopping: false,
    mode: 'apply',
  };

  it('stays ready and lists the hashes (never names), at most ten', () => {
    expect(readiness({ ...ready, pendingApprovals: [A, B] }, defaultReadiness)).toEqual({ ready: true, reason: `ok (2 changes await approval: ${A}, ${B})` });
    const many = Array.from({ length: 12 }, (_, i) => i.toString(16).padStart(16, '0'));
    expect(readiness({ ...ready, pendingApprovals: many }, defaultReadiness).reason).toMatch(/12 changes await approval: .*, and 2 more\)$/);
    expect(readiness({ ...ready, pendingApprovals: [] }, defaultReadiness)).toEqual({ ready: true, reason: 'ok' });
  });
});
