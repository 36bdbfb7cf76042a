import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditLog, auditControlLineSchema, auditLineSchema, filterAuditLines, isControlLine, parseAuditText, type AuditEntry } from '../../../src/audit/index.js';
import { renderAuditTable } from '../../../src/report/render-audit.js';

/** Issue 29 item 7: a daemon's control lines (suspend, resume, windows, override) in the audit log. */

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'amsync-audit-ctl-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const identity = { pid: 4242, host: 'build-host', user: 'amsync' };
const fixedNow = () => Date.UTC(2025, 0, 31, 12, 0, 0, 123);
const write: AuditEntry = { target: null, kind: 'sshUser', key: 'deploy', id: 7, action: 'update', phase: 'attempt', fields: ['level'], values: { level: 'n2' }, planHash: 'abc', trigger: 'schedule' };
const writeText = '{"time":"2025-01-31T12:00:00.123Z","target":null,"kind":"sshUser","key":"deploy","id":7,"action":"update","phase":"attempt","status":null,"error":null,"fields":["level"],"values":{"level":"n2"},"planHash":"abc","trigger":"schedule","revision":"r1","process":{"pid":4242,"host":"build-host","user":"amsync"}}';

describe('the control line', () => {
  it('is written in its own shape: event, target, reason, uid, time; a write line stays byte for byte as it was', () => {
    const path = join(dir, 'a.jsonl');
    const log = AuditLog.open(path, { revision: 'r1', identity, now: fixedNow });
    log.record(write);
    log.recordControl({ event: 'suspended', reason: 'change freeze INC-42', uid: 1000 }, null);
    log.recordControl({ event: 'window_closed', reason: 'outside every allow window', uid: null }, 'eu-1');
    log.close();
    expect(readFileSync(path, 'utf8').split('\n')).toEqual([
      writeText,
      '{"time":"2025-01-31T12:00:00.123Z","event":"suspended","target":null,"reason":"change freeze INC-42","uid":1000,"revision":"r1","process":{"pid":4242,"host":"build-host","user":"amsync"}}',
      '{"time":"2025-01-31T12:00:00.123Z","event":"window_closed","target":"eu-1","reason":"outside every allow window","uid":null,"revision":"r1","process":{"pid":4242,"host":"build-host","user":"amsync"}}',
      '',
    ]);
  });

  it('refuses an unknown event before writing', () => {
    const path = join(dir, 'b.jsonl');
    const log = AuditLog.open(path, { revision: null, identity, now: fixedNow });
    expect(() => log.recordControl({ event: 'paused' as 'suspended', reason: null, uid: null }, null)).toThrow('event must be one of suspended, resumed, window_closed, window_opened, override');
    log.close();
    expect(readFileSync(path, 'utf8')).toBe('');
  });

  it('the schemas tell the two apart: a control line is not a write line, nor the other way round', () => {
    const control = { time: '2025-01-31T12:00:00.123Z', event: 'resumed', target: null, reason: 'change freeze', uid: 0, revision: null, process: identity };
    expect(auditControlLineSchema.safeParse(control).success).toBe(true);
    expect(auditLineSchema.safeParse(control).success).toBe(false);
    expect(auditControlLineSchema.safeParse(JSON.parse(writeText)).success).toBe(false);
    expect(auditControlLineSchema.safeParse({ ...control, event: 'paused' }).success).toBe(false);
    expect(auditControlLineSchema.safeParse({ ...control, uid: 1.5 }).success).toBe(false);
    expect(auditControlLineSchema.safeParse({ ...control, time: 'yesterday' }).success).toBe(false);
  });
});

describe('reading them back', () => {
  const suspended = '{"time":"2025-01-31T12:00:01.000Z","event":"suspended","target":null,"reason":"freeze","uid":1000,"revision":null,"process":{"pid":1,"host":"h","user":"u"}}';
  const resumed = '{"time":"2025-01-31T12:00:02.000Z","event":"resumed","target":null,"reason":"freeze","uid":1000,"revision":null,"process":{"pid":1,"host":"h","user":"u"}}';
  const text = `${writeText}\n${suspended}\n${resumed}\n`;

  it('counts them as lines, not as invalid; `lines` keeps the write lines, `records` all, in file order', () => {
    const read = parseAuditText(text, 'audit.jsonl');
    expect(read).toMatchObject({ invalidLines: 0, partialLines: 0 });
    expect(read.lines).toHaveLength(1);
    expect(read.records.map((r) => (isControlLine(r) ? r.event : r.action))).toEqual(['update', 'suspended', 'resumed']);
  });

  it('--key and --action leave them out; a time bound alone does not', () => {
    const { records } = parseAuditText(text);
    expect(filterAuditLines(records, { key: 'deploy' })).toHaveLength(1);
    expect(filterAuditLines(records, { action: 'update' })).toHaveLength(1);
    expect(filterAuditLines(records, { since: Date.parse('2025-01-31T12:00:01.500Z') }).map((r) => isControlLine(r) && r.event)).toEqual(['resumed']);
  });

  it('the table shows them in the same columns; without them it is as it was', () => {
    const { records, lines } = parseAuditText(text);
    expect(renderAuditTable(lines)).toBe(
      ['time                      action  kind     key     id  status   trigger   revision', '2025-01-31T12:00:00.123Z  update  sshUser  deploy  7   attempt  schedule  r1', ''].join('\n'),
    );
    expect(renderAuditTable(records)).toBe(
      [
        'time                      action     kind     key     id  status       trigger   revision',
        '2025-01-31T12:00:00.123Z  update     sshUser  deploy  7   attempt      schedule  r1',
        '2025-01-31T12:00:01.000Z  suspended  daemon   freeze  -   by uid 1000  ctl       -',
        '2025-01-31T12:00:02.000Z  resumed    daemon   freeze  -   by uid 1000  ctl       -',
        '',
      ].join('\n'),
    );
  });
});
