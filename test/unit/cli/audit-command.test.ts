import { appendFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemTimers, type Timers } from '../../../src/time/timers.js';
import { AuditLog, type AuditEntry, type AuditLine } from '../../../src/audit/index.js';
import { runInProcess } from '../../helpers/in-process.js';

let dir: string;
let seq = 0;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'amsync-audit-cli-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const identity = { pid: 1, host: 'h', user: 'u' };
const hour = 3_600_000;
/** "Now" for the command: 2025-02-01T00:00:00Z. */
const now = Date.UTC(2025, 1, 1);
const timers: Timers = { ...systemTimers, wallNow: () => now };

function entry(key: string, action: AuditEntry['action'], phase: AuditEntry['phase'] = 'attempt', extra: Partial<AuditEntry> = {}): AuditEntry {
  return { target: null, kind: 'sshUser', key, id: 7, action, phase, fields: ['level'], values: { level: 'n1' }, planHash: null, trigger: 'schedule', ...extra };
}

/** A log whose lines are written 48h, 30h, 20h, 10h and 1h before `now`. */
function sampleLog(): string {
  const folder = join(dir, String((seq += 1)));
  mkdirSync(folder);
  const path = join(folder, 'audit.jsonl');
  const times = [48, 30, 20, 10, 1].map((h) => now - h * hour);
  let at = 0;
  const log = AuditLog.open(path, { revision: 'a94a8fe5ccb19ba61c4c0873d391e987982fbbd3', identity, now: () => times[at++]! });
  log.record(entry('old-contractor', 'delete'));
  log.record(entry('old-contractor', 'delete', 'result', { status: 'applied' }));
  log.record(entry('deploy', 'create', 'attempt', { id: null, trigger: 'file-change' }));
  log.record(entry('deploy', 'create', 'result', { status: 'failed', error: 'duplicated', id: null, trigger: 'file-change' }));
  log.record(entry('billing', 'update', 'result', { kind: 'apikey', status: 'applied', id: 12 }));
  log.close();
  return path;
}

function run(args: string[], env: Record<string, string> = {}) {
  return runInProcess(['audit', ...args], { timers, env });
}

describe('amsync audit FILE prints the audit log as a table', () => {
  it('time, action, kind, key, id, status, trigger and revision, one row per line, oldest first', async () => {
    const result = await run([sampleLog()]);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    const rows = result.stdout.trimEnd().split('\n');
    expect(rows[0]).toMatch(/^time\s+action\s+kind\s+key\s+id\s+status\s+trigger\s+revision$/);
    expect(rows.slice(1).map((r) => r.split(/\s+/))).toEqual([
      ['2025-01-30T00:00:00.000Z', 'delete', 'sshUser', 'old-contractor', '7', 'attempt', 'schedule', 'a94a8fe5ccb1'],
      ['2025-01-30T18:00:00.000Z', 'delete', 'sshUser', 'old-contractor', '7', 'applied', 'schedule', 'a94a8fe5ccb1'],
      ['2025-01-31T04:00:00.000Z', 'create', 'sshUser', 'deploy', '-', 'attempt', 'file-change', 'a94a8fe5ccb1'],
      ['2025-01-31T14:00:00.000Z', 'create', 'sshUser', 'deploy', '-', 'failed', '(duplicated)', 'file-change', 'a94a8fe5ccb1'],
      ['2025-01-31T23:00:00.000Z', 'update', 'apikey', 'billing', '12', 'applied', 'schedule', 'a94a8fe5ccb1'],
    ]);
  });

  it('FILE defaults to the auditLog setting (AMSYNC_AUDIT_LOG)', async () => {
    const result = await run([], { AMSYNC_AUDIT_LOG: sampleLog() });
    expect(result.code).toBe(0);
    expect(result.stdout.trimEnd().split('\n')).toHaveLength(6);
  });

  it('a key with control characters is escaped, not sent to the terminal', async () => {
    const path = join(dir, `ctl-${(seq += 1)}.jsonl`);
    const log = AuditLog.open(path, { revision: null, identity });
    log.record(entry('evil\u001b[31mred\u202e', 'create', 'attempt', { id: null }));
    log.close();
    const result = await run([path]);
    expect(result.stdout).toContain('evil\\u001b[31mred\\u202e');
    expect(result.stdout).not.toContain('\u001b');
  });
});

describe('filters: --key, --action, --since, --until', () => {
  it('--key and --action keep the lines of that key and action', async () => {
    const path = sampleLog();
    const byKey = await run([path, '--key', 'deploy']);
    expect(byKey.stdout.trimEnd().split('\n').slice(1).every((r) => r.includes(' deploy '))).toBe(true);
    expect(byKey.stdout.trimEnd().split('\n')).toHaveLength(3);
    const byAction = await run([path, '--action', 'delete']);
    expect(byAction.stdout.trimEnd().split('\n')).toHaveLength(3);
    expect(byAction.stdout).not.toContain('create');
  });

  it('--since takes an age (24h before now) or an ISO time; --until an ISO time or an age; both inclusive', async () => {
    const path = sampleLog();
    const lastDay = await run([path, '--since', '24h', '--json']);
    expect(lastDay.stdout.trimEnd().split('\n').map((l) => (JSON.parse(l) as AuditLine).time)).toEqual(['2025-01-31T04:00:00.000Z', '2025-01-31T14:00:00.000Z', '2025-01-31T23:00:00.000Z']);
    const window = await run([path, '--since', '2025-01-30T18:00:00Z', '--until', '10h', '--json']);
    expect(window.stdout.trimEnd().split('\n').map((l) => (JSON.parse(l) as AuditLine).time)).toEqual(['2025-01-30T18:00:00.000Z', '2025-01-31T04:00:00.000Z', '2025-01-31T14:00:00.000Z']);
    const none = await run([path, '--since', '2025-02-01']);
    expect(none).toMatchObject({ code: 0, stdout: 'no matching audit lines\n' });
  });

  it('--json prints each matching audit line as one JSON line, every field kept', async () => {
    const result = await run([sampleLog(), '--key', 'billing', '--json']);
    const lines = result.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as AuditLine);
    expect(lines).toEqual([
      {
        time: '2025-01-31T23:00:00.000Z',
        target: null,
        kind: 'apikey',
        key: 'billing',
        id: 12,
        action: 'update',
        phase: 'result',
        status: 'applied',
        error: null,
        fields: ['level'],
        values: { level: 'n1' },
        planHash: null,
        trigger: 'schedule',
        revision: 'a94a8fe5ccb19ba61c4c0873d391e987982fbbd3',
        process: identity,
      },
    ]);
  });
});

describe('--include-rotated reads FILE.N … FILE.1, then FILE', () => {
  it('without it only FILE; with it every kept file, oldest first', async () => {
    const folder = join(dir, `rot-${(seq += 1)}`);
    mkdirSync(folder);
    const path = join(folder, 'audit.jsonl');
    const log = AuditLog.open(path, { revision: null, identity, maxBytes: 700, keep: 3 });
    for (let n = 0; n < 8; n += 1) log.record(entry(`user-${n}`, 'create', 'attempt', { id: null }));
    log.close();
    const live = await run([path, '--json']);
    const all = await run([path, '--json', '--include-rotated']);
    const keys = (text: string) => text.trimEnd().split('\n').map((l) => (JSON.parse(l) as AuditLine).key);
    expect(keys(all.stdout).length).toBeGreaterThan(keys(live.stdout).length);
    expect(keys(all.stdout).at(-1)).toBe('user-7');
    expect(keys(all.stdout)).toEqual([...keys(all.stdout)].sort());
    expect(keys(all.stdout).slice(-keys(live.stdout).length)).toEqual(keys(live.stdout));
  });
});

describe('a partial last line is passed over and said so', () => {
  it('the lines before it print; stderr counts it; exit 0', async () => {
    const path = sampleLog();
    appendFileSync(path, '{"time":"2025-01-31T23:30:00.000Z","tar');
    const result = await run([path, '--json']);
    expect(result.code).toBe(0);
    expect(result.stdout.trimEnd().split('\n')).toHaveLength(5);
    expect(result.stderr).toBe(`warning: passed over 1 partial last line (a write cut short by a crash or a full disk) (first: ${path}:6)\n`);
  });
});

describe('mistakes are clear', () => {
  it.each([
    [['--action', 'remove'], "Expected `--action` to be one of create, update, delete, got 'remove'"],
    [['--since', 'yesterday'], "Expected `--since` to be an ISO-8601 time (2025-01-31T12:00:00Z) or an age such as 24h, 30m or 7d, got 'yesterday'"],
    [['--until', '2025-13-45'], 'Expected `--until`'],
    [['--since', '1h', '--until', '2h'], '--since (1h) is after --until (2h)'],
    [['--kind', 'apikey'], "unknown option '--kind'"],
  ])('amsync audit FILE %j exits 64 naming the flag', async (args, message) => {
    const result = await run([sampleLog(), ...args]);
    expect(result.code).toBe(64);
    expect(result.stderr).toContain(message);
    expect(result.stdout).toBe('');
  });

  it('without FILE or an auditLog setting: exit 64 saying how to name it', async () => {
    const result = await run([]);
    expect(result.code).toBe(64);
    expect(result.stderr).toContain('name the audit log: amsync audit FILE, or set AMSYNC_AUDIT_LOG');
  });

  it('a file that cannot be read: exit 1, naming the file and why', async () => {
    const missing = join(dir, 'missing.jsonl');
    const result = await run([missing]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`error: cannot read the audit log ${missing}: no such file or folder\n`);
    const folder = await run([dir]);
    expect(folder.code).toBe(1);
    expect(folder.stderr).toContain('it is a folder');
  });

  it('with --json, a failure is one JSON error document on stdout', async () => {
    const result = await run([join(dir, 'missing.jsonl'), '--json']);
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toMatchObject({ error: { code: 'audit_unreadable' } });
  });
});
