import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readAuditTail } from '../../../src/audit/index.js';

const dir = mkdtempSync(join(tmpdir(), 'amsync-audit-tail-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function line(n: number): string {
  return JSON.stringify({
    time: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString(),
    target: null, kind: 'sshUser', key: `user-${n}`, id: n, action: 'create', phase: 'result', status: 'applied', error: null,
    fields: ['level'], values: {}, planHash: null, trigger: 'schedule', revision: null, process: { pid: 1, host: 'h', user: 'u' },
  });
}

describe('readAuditTail: the last lines of the audit log, from a bounded read of its end', () => {
  it('gives the last N lines, oldest first', async () => {
    const file = join(dir, 'a.jsonl');
    writeFileSync(file, Array.from({ length: 120 }, (_, i) => `${line(i)}\n`).join(''));
    const lines = await readAuditTail(file, 50);
    expect(lines.map((l) => l.key)).toEqual(Array.from({ length: 50 }, (_, i) => `user-${70 + i}`));
  });

  it('reads no more than maxBytes from the end: the line cut by the window is dropped, not misread', async () => {
    const file = join(dir, 'b.jsonl');
    const all = Array.from({ length: 40 }, (_, i) => `${line(i)}\n`).join('');
    writeFileSync(file, all);
    const oneLine = line(39).length + 1;
    // A window of 3.5 lines: 3 whole lines, the half before them dropped.
    const lines = await readAuditTail(file, 50, Math.floor(oneLine * 3.5));
    expect(lines.map((l) => l.key)).toEqual(['user-37', 'user-38', 'user-39']);
  });

  it('passes over a partial last line and a missing file is no lines', async () => {
    const file = join(dir, 'c.jsonl');
    writeFileSync(file, `${line(1)}\n${line(2)}\n{"time":"2026`);
    expect((await readAuditTail(file, 50)).map((l) => l.key)).toEqual(['user-1', 'user-2']);
    expect(await readAuditTail(join(dir, 'missing.jsonl'), 50)).toEqual([]);
  });

  it('an unreadable path throws audit_unreadable', async () => {
    await expect(readAuditTail(dir, 50)).rejects.toMatchObject({ code: 'audit_unreadable' });
  });
});
