import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AuditLog, type AuditEntry } from '../../../src/audit/index.js';
import { AuditLogError } from '../../../src/audit/audit-log-error.js';
import { parseAuditText, readAuditLog } from '../../../src/audit/read-audit-log.js';
import { registerSecret } from '../../../src/secrets/known-secrets.js';
import { Secret } from '../../../src/secrets/secret.js';
import { root } from '../../helpers/spawn.js';
import { forms } from '../../helpers/encodings.js';

let dir: string;
let seq = 0;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'amsync-audit-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A fresh path in a fresh folder. */
function logPath(name = 'audit.jsonl'): string {
  const folder = join(dir, String((seq += 1)));
  mkdirSync(folder);
  return join(folder, name);
}

const identity = { pid: 4242, host: 'build-host', user: 'amsync' };
const fixedNow = () => Date.UTC(2025, 0, 31, 12, 0, 0, 123);

function entry(overrides: Partial<AuditEntry> = {}): AuditEntry {
  return {
    target: null,
    kind: 'sshUser',
    key: 'deploy',
    id: 7,
    action: 'update',
    phase: 'attempt',
    fields: ['level'],
    values: { level: 'n2' },
    planHash: 'sha256:abc',
    trigger: 'schedule',
    ...overrides,
  };
}

function linesOf(path: string): unknown[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as unknown);
}

describe('each write attempt and each result is one JSON line', () => {
  it('an attempt and its result carry every field, in the documented shape', () => {
    const path = logPath();
    const log = AuditLog.open(path, { revision: 'abc123', identity, now: fixedNow });
    log.record(entry({ target: 'eu-1', kind: 'apikey', key: 'billing', id: null, action: 'create', fields: ['superuser', 'roles'], values: { superuser: false, roles: [3, 7] }, trigger: 'file-change' }));
    log.record(entry({ target: 'eu-1', kind: 'apikey', key: 'billing', id: 12, action: 'create', phase: 'result', status: 'applied', fields: ['superuser', 'roles'], values: { superuser: false, roles: [3, 7] }, trigger: 'file-change' }));
    log.record(entry({ phase: 'result', status: 'failed', error: 'conflict' }));
    log.close();
    const [attempt, result, failed] = linesOf(path);
    expect(attempt).toEqual({
      time: '2025-01-31T12:00:00.123Z',
      target: 'eu-1',
      kind: 'apikey',
      key: 'billing',
      id: null,
      action: 'create',
      phase: 'attempt',
      status: null,
      error: null,
      fields: ['superuser', 'roles'],
      values: { superuser: false, roles: [3, 7] },
      planHash: 'sha256:abc',
      trigger: 'file-change',
      revision: 'abc123',
      process: identity,
    });
    expect(result).toMatchObject({ phase: 'result', status: 'applied', id: 12, error: null });
    expect(failed).toMatchObject({ phase: 'result', status: 'failed', error: 'conflict', revision: 'abc123' });
    // What is written reads back as audit lines.
    expect(parseAuditText(readFileSync(path, 'utf8'))).toMatchObject({ invalidLines: 0, partialLines: 0 });
    expect(parseAuditText(readFileSync(path, 'utf8')).lines).toHaveLength(3);
  });

  it('the process identity defaults to pid, host name and user name', () => {
    const path = logPath();
    const log = AuditLog.open(path, { revision: null });
    const line = log.record(entry());
    log.close();
    expect(line.process.pid).toBe(process.pid);
    expect(line.process.host).not.toBe('');
    expect(line.process.user).not.toBe('');
    expect(line.revision).toBeNull();
  });

  it('never a password or a token among the values, whatever the caller passes; field names stay', () => {
    const path = logPath();
    const log = AuditLog.open(path, { revision: null, identity, now: fixedNow });
    const line = log.record(
      entry({
        kind: 'apikey',
        fields: ['password', 'token', 'roles'],
        values: { password: 'pw-plain-1', token: 'tok-plain-2', apiToken: 'tok-plain-3', clientSecret: 'sec-plain-4', wrapped: new Secret('wrapped-plain-5'), roles: [1, 2], nested: { a: 1 } },
      }),
    );
    log.close();
    expect(line.values).toEqual({ roles: [1, 2] });
    expect(line.fields).toEqual(['password', 'token', 'roles']);
    const text = readFileSync(path, 'utf8');
    for (const value of ['pw-plain-1', 'tok-plain-2', 'tok-plain-3', 'sec-plain-4', 'wrapped-plain-5']) expect(text).not.toContain(value);
  });

  it('an error is written as its code; a message in its place becomes `other`', () => {
    const path = logPath();
    const log = AuditLog.open(path, { revision: null, identity });
    expect(log.record(entry({ phase: 'result', status: 'failed', error: 'rate_limited' })).error).toBe('rate_limited');
    expect(log.record(entry({ phase: 'result', status: 'failed', error: 'the service said: {"msg": "user deploy exists"}' })).error).toBe('other');
    log.close();
  });

  it('an attempt with a status, or a result without one, is refused loudly', () => {
    const log = AuditLog.open(logPath(), { revision: null, identity });
    expect(() => log.record(entry({ phase: 'attempt', status: 'applied' }))).toThrow(expect.objectContaining({ code: 'audit_entry_invalid' }));
    expect(() => log.record(entry({ phase: 'result' }))).toThrow(expect.objectContaining({ code: 'audit_entry_invalid' }));
    log.close();
    expect(() => log.record(entry())).toThrow(expect.objectContaining({ code: 'audit_closed' }));
  });
});

describe('a canary secret never reaches an audit line', () => {
  // Quote, backslash and non-ASCII: the characters an encoder changes.
  const canaries = ['canary-"quoted"-pass', 'canary-back\\slash-tok', 'canary-ümlaut-€-密码'];
  for (const canary of canaries) registerSecret(canary);

  it('in no form (raw, JSON-escaped, URL-encoded...), wherever a caller put it; every line still parses', () => {
    const path = logPath();
    const log = AuditLog.open(path, { revision: `rev-${canaries[0]!}`, identity: { ...identity, user: canaries[2]! }, now: fixedNow });
    log.record(
      entry({
        target: canaries[1]!,
        key: `user-${canaries[0]!}`,
        planHash: encodeURIComponent(canaries[2]!),
        values: { level: JSON.stringify(canaries[1]!), description: `see ${canaries[2]!}`, [canaries[0]!]: 'a field named like a secret' },
      }),
    );
    log.record(entry({ phase: 'result', status: 'failed', error: canaries[1]!, key: canaries[2]! }));
    log.close();
    const text = readFileSync(path, 'utf8');
    for (const form of forms(canaries)) expect(text).not.toContain(form);
    expect(text).toContain('[redacted]');
    expect(parseAuditText(text)).toMatchObject({ invalidLines: 0, partialLines: 0 });
    expect(parseAuditText(text).lines).toHaveLength(2);
  });
});

describe('the file is 0600', () => {
  it('a new file is created 0600, whatever the umask allows', () => {
    const path = logPath();
    const previous = process.umask(0);
    try {
      AuditLog.open(path, { revision: null, identity }).close();
    } finally {
      process.umask(previous);
    }
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it('an existing file readable by others is tightened to 0600, and said so', () => {
    const path = logPath();
    writeFileSync(path, '');
    chmodSync(path, 0o644);
    const log = AuditLog.open(path, { revision: null, identity });
    log.close();
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(log.notices).toEqual([{ code: 'mode_tightened', path, previousMode: 0o644 }]);
  });

  it('a symbolic link or a folder in its place is refused: only a regular file is appended to', () => {
    const target = logPath('elsewhere');
    writeFileSync(target, '');
    const link = join(dir, `link-${(seq += 1)}`);
    symlinkSync(target, link);
    expect(() => AuditLog.open(link, { revision: null })).toThrow(expect.objectContaining({ code: 'audit_not_regular_file' }));
    const folder = logPath('folder');
    mkdirSync(folder);
    expect(() => AuditLog.open(folder, { revision: null })).toThrow(expect.objectContaining({ code: 'audit_not_regular_file' }));
    expect(readFileSync(target, 'utf8')).toBe('');
  });
});

describe('rotation by size keeps `keep` files, each 0600 and made of whole lines', () => {
  it('a rotation the file system refuses is one line naming the path, the setting and the fix (issue 27, deliverable 6)', () => {
    const path = logPath();
    // A folder (not empty) where FILE.1 goes: rename(FILE, FILE.1) is refused.
    mkdirSync(`${path}.1`);
    writeFileSync(join(`${path}.1`, 'x'), 'x');
    const log = AuditLog.open(path, { revision: null, identity, maxBytes: 600, keep: 1 });
    let error: unknown;
    try {
      for (let n = 0; n < 20; n += 1) log.record(entry({ key: `user-${n}` }));
    } catch (e) {
      error = e;
    } finally {
      log.close();
    }
    expect(error).toBeInstanceOf(AuditLogError);
    expect(error).toMatchObject({ code: 'audit_rotate_failed' });
    const message = (error as Error).message;
    expect(message).toContain(path);
    expect(message).toContain('--audit-log, AMSYNC_AUDIT_LOG, auditLog');
    expect(message).toMatch(/\((EISDIR|ENOTEMPTY|EEXIST)\); .*--audit-log/);
    expect(message.split('\n')).toHaveLength(1);
  });

  it('FILE → FILE.1 → … → FILE.keep; the oldest goes; reading them oldest first gives the newest lines in order', async () => {
    const path = logPath();
    const log = AuditLog.open(path, { revision: null, identity, maxBytes: 2000, keep: 2 });
    const lineBytes = Buffer.byteLength(`${JSON.stringify(log.record(entry({ key: 'user-0000' })))}\n`);
    for (let n = 1; n < 40; n += 1) log.record(entry({ key: `user-${String(n).padStart(4, '0')}` }));
    log.close();
    expect(existsSync(`${path}.1`)).toBe(true);
    expect(existsSync(`${path}.2`)).toBe(true);
    expect(existsSync(`${path}.3`)).toBe(false);
    const perFile = Math.floor(2000 / lineBytes);
    for (const file of [path, `${path}.1`, `${path}.2`]) {
      expect(statSync(file).size).toBeLessThanOrEqual(2000);
      expect(statSync(file).mode & 0o777).toBe(0o600);
    }
    const read = await readAuditLog(path, { includeRotated: true });
    expect(read.files).toEqual([`${path}.2`, `${path}.1`, path]);
    expect(read).toMatchObject({ invalidLines: 0, partialLines: 0 });
    const keys = read.lines.map((l) => l.key);
    // The newest lines, consecutive, ending with the last one written.
    expect(keys.at(-1)).toBe('user-0039');
    expect(keys.length).toBeGreaterThanOrEqual(2 * perFile + 1);
    expect(keys).toEqual(keys.map((_, i) => `user-${String(40 - keys.length + i).padStart(4, '0')}`));
  });

  it('a line larger than maxBytes still goes in whole, alone in a fresh file', () => {
    const path = logPath();
    const log = AuditLog.open(path, { revision: null, identity, maxBytes: 100 });
    log.record(entry({ key: 'a' }));
    log.record(entry({ key: 'b' }));
    log.close();
    expect(linesOf(`${path}.1`)).toMatchObject([{ key: 'a' }]);
    expect(linesOf(path)).toMatchObject([{ key: 'b' }]);
  });

  it('when something else moves the file away (another writer rotated it), the next line goes to a new file', () => {
    const path = logPath();
    const log = AuditLog.open(path, { revision: null, identity });
    log.record(entry({ key: 'before' }));
    renameSync(path, `${path}.moved`);
    log.record(entry({ key: 'after' }));
    log.close();
    expect(linesOf(`${path}.moved`)).toMatchObject([{ key: 'before' }]);
    expect(linesOf(path)).toMatchObject([{ key: 'after' }]);
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it('options are checked loudly', () => {
    expect(() => AuditLog.open(logPath(), { revision: null, keep: 0 })).toThrow('Expected `keep` to be a whole number from 1 upwards, got 0');
    expect(() => AuditLog.open(logPath(), { revision: null, maxBytes: 0.5 })).toThrow('Expected `maxBytes`');
  });
});

describe('a partial last line (a crash of an earlier version, a full disk) is tolerated', () => {
  it('the reader ignores a final partial line and counts it', () => {
    const whole = `${JSON.stringify({ time: '2025-01-31T12:00:00.000Z', target: null, kind: 'sshUser', key: 'a', id: 1, action: 'delete', phase: 'attempt', status: null, error: null, fields: [], values: {}, planHash: null, trigger: 'manual', revision: null, process: identity })}\n`;
    const reading = parseAuditText(`${whole}${whole}{"time":"2025-01-31T12:0`, 'f');
    expect(reading.lines).toHaveLength(2);
    expect(reading).toMatchObject({ invalidLines: 0, partialLines: 1, firstProblem: { file: 'f', line: 3 } });
    expect(parseAuditText(`${whole}not json\n${whole}`)).toMatchObject({ invalidLines: 1, partialLines: 0, firstProblem: { line: 2 } });
  });

  it('opening a file that ends in a partial line closes it with a newline: the next line is whole', () => {
    const path = logPath();
    writeFileSync(path, '{"time":"2025-01-31T12:00:00.000Z","key":"cut sh', { mode: 0o600 });
    const log = AuditLog.open(path, { revision: null, identity });
    log.record(entry({ key: 'next' }));
    log.close();
    expect(log.notices).toEqual([{ code: 'partial_line_closed', path }]);
    const reading = parseAuditText(readFileSync(path, 'utf8'));
    expect(reading.lines.map((l) => l.key)).toEqual(['next']);
    expect(reading).toMatchObject({ invalidLines: 1, partialLines: 0 });
  });
});

/** The appender (test/helpers/audit-appender.ts) in a child process of its own, through vite-node. */
const viteNode = join(root, 'node_modules', 'vite-node', 'vite-node.mjs');
const appender = join(root, 'test', 'helpers', 'audit-appender.ts');
const children = new Set<ReturnType<typeof spawn>>();
afterEach(() => {
  for (const child of children) child.kill('SIGKILL');
  children.clear();
});

function startAppender(env: Record<string, string>, shellPrefix?: string) {
  const child = shellPrefix
    ? spawn('/bin/sh', ['-c', `${shellPrefix}; exec "$0" "$1" "$2"`, process.execPath, viteNode, appender], { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
    : spawn(process.execPath, [viteNode, appender], { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const lines = (predicate: (text: string) => boolean) =>
    new Promise<string>((resolve, reject) => {
      const check = () => {
        if (predicate(stdout)) resolve(stdout);
      };
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        check();
      });
      child.on('exit', () => (predicate(stdout) ? resolve(stdout) : reject(new Error(`appender exited early: ${stdout}${stderr}`))));
    });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  return { child, lines, exited };
}

describe('a process killed while it appends leaves only whole lines', () => {
  it('a child appending in a tight loop, SIGKILLed mid-stream (rotating as it goes): every line of every file parses', async () => {
    const path = logPath();
    const run = startAppender({ AUDIT_PATH: path, AUDIT_READY_AFTER: '400', AUDIT_MAX_BYTES: String(256 * 1024), AUDIT_KEEP: '3', AUDIT_MAX_LINES: '200000' });
    await run.lines((text) => text.includes('ready 400'));
    run.child.kill('SIGKILL');
    expect(await run.exited).toEqual({ code: null, signal: 'SIGKILL' });
    const read = await readAuditLog(path, { includeRotated: true });
    expect(read.files.length).toBeGreaterThan(1);
    expect(read.lines.length).toBeGreaterThan(100);
    expect(read).toMatchObject({ invalidLines: 0, partialLines: 0 });
    // Consecutive ids: no line lost or doubled in what was kept.
    const ids = read.lines.map((l) => l.id!);
    expect(ids).toEqual(ids.map((_, i) => ids[0]! + i));
  });

  it('a write that fails (the file-size limit, like a full disk) throws audit_write_failed; the cut line is ignored when read and closed on the next open', async () => {
    const path = logPath();
    // 200 blocks of 512 or 1024 bytes, as the shell counts them: far less than the loop writes.
    const run = startAppender({ AUDIT_PATH: path, AUDIT_READY_AFTER: '1', AUDIT_MAX_LINES: '100000' }, 'ulimit -f 200');
    const out = await run.lines((text) => text.includes('failed'));
    expect(out).toContain('failed audit_write_failed');
    expect(await run.exited).toMatchObject({ code: 3 });
    const before = await readAuditLog(path);
    expect(before.lines.length).toBeGreaterThan(0);
    expect(before.invalidLines).toBe(0);
    expect(before.partialLines).toBeLessThanOrEqual(1);
    const log = AuditLog.open(path, { revision: null, identity });
    log.record(entry({ key: 'after-the-disk-was-freed' }));
    log.close();
    const after = await readAuditLog(path);
    expect(after.lines.at(-1)!.key).toBe('after-the-disk-was-freed');
    expect(after.partialLines).toBe(0);
    expect(after.invalidLines).toBe(before.partialLines);
  });
});

describe('errors are AuditLogErrors with stable codes', () => {
  it('a folder that cannot be created', () => {
    const blocker = logPath('file-not-folder');
    writeFileSync(blocker, '');
    const error = (() => {
      try {
        AuditLog.open(join(blocker, 'audit.jsonl'), { revision: null });
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(AuditLogError);
    expect(error).toMatchObject({ code: 'audit_open_failed' });
  });
});

describe('the audit log names its setting as the settings table does', () => {
  it('auditLogSetting is the flag, the variable and the key of the table', async () => {
    const { settingOptions } = await import('../../../src/settings/index.js');
    const { auditLogSetting } = await import('../../../src/audit/audit-log-error.js');
    const option = settingOptions.find((o) => o.path.length === 1 && o.path[0] === 'auditLog');
    expect(auditLogSetting).toBe([option?.flag, option?.env, 'auditLog'].join(', '));
  });
});
