import { execFileSync } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { chmod, mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type RunningEmulator } from '../../src/emulator/index.js';
import { FakeScheduler } from '../helpers/daemon-fakes.js';
import { emulatorPerTest } from '../helpers/emulator-per-test.js';
import { fsFaults } from '../helpers/fs-faults.js';
import { runInProcess } from '../helpers/in-process.js';

// EROFS and ENOSPC cannot be made for real here (no read-only or full file system can be
// mounted): they are injected at node:fs for the folders the test marks (test/helpers/fs-faults.ts).
vi.mock('node:fs/promises', async (actual) => (await import('../helpers/fs-faults.js')).faultyFsPromises(await actual()));
vi.mock('node:fs', async (actual) => (await import('../helpers/fs-faults.js')).faultyFs(await actual()));

/**
 * Issue 27 finding 6: a state file under a regular file, or in a read-only folder, ended in
 * `unexpected failure: Error: EEXIST … mkdir …` with a stack trace; a tokensDir, audit log,
 * report or plan file that cannot be written was found only after the writes (apikeys created
 * whose tokens could not be stored, a sync applied and then exit 1 for its report). Every local
 * path amsync writes, with every cause a file system gives, is now one line naming the path,
 * its setting and the fix, exit 1, no stack, and nothing sent: the emulator's log is empty.
 */

const TOKEN = 'CANARY-bearer-local-outputs-3f7a';

let emu: RunningEmulator;
let dir: string;

emulatorPerTest(TOKEN, 'amsync-local-outputs-', (e, d) => {
  emu = e;
  dir = d;
});
beforeEach(async () => {
  await writeFile(join(dir, 'access.yaml'), 'apikeys:\n  - name: ci\n');
});
afterEach(() => fsFaults.clear());

const root = process.getuid?.() === 0;

/** A cause: the folder to put the path in (made by `setup`), and the errnos the line may give. */
interface Cause {
  readonly name: string;
  /** Where the path goes: a folder, or what stands in the way. Returns the parent of the path. */
  setup(): Promise<string>;
  /** The path itself is made (a folder, a FIFO) rather than a parent. */
  readonly atPath?: (path: string) => Promise<void>;
  readonly errnos: readonly string[];
  readonly reason: RegExp;
}

const causes: readonly Cause[] = [
  {
    name: 'a regular file where a folder must be',
    setup: async () => {
      await writeFile(join(dir, 'a-file'), 'not a folder\n');
      return join(dir, 'a-file', 'sub');
    },
    errnos: ['ENOTDIR', 'EEXIST'],
    reason: /a-file is a file, not a folder/,
  },
  {
    // As root a chmod stops nothing: sysfs refuses a new file to root too.
    name: 'a folder this user may not write',
    setup: async () => {
      if (root) return '/sys/kernel';
      await mkdir(join(dir, 'locked'));
      await chmod(join(dir, 'locked'), 0o500);
      return join(dir, 'locked');
    },
    errnos: ['EACCES', 'EPERM'],
    reason: /permission denied/,
  },
  {
    name: 'a read-only file system',
    setup: async () => {
      await mkdir(join(dir, 'ro'));
      fsFaults.set(join(dir, 'ro'), 'EROFS');
      return join(dir, 'ro');
    },
    errnos: ['EROFS'],
    reason: /the file system is read-only/,
  },
  {
    name: 'a full disk',
    setup: async () => {
      await mkdir(join(dir, 'full'));
      fsFaults.set(join(dir, 'full'), 'ENOSPC');
      return join(dir, 'full');
    },
    errnos: ['ENOSPC'],
    reason: /no space left on the device/,
  },
  {
    name: 'a folder where a file must be',
    setup: async () => dir,
    atPath: (path) => mkdir(path),
    errnos: ['EISDIR'],
    reason: /is a folder/,
  },
  {
    name: 'a FIFO where a file must be',
    setup: async () => dir,
    atPath: async (path) => void execFileSync('mkfifo', [path]),
    errnos: ['ENOTREG'],
    reason: /it is a FIFO \(named pipe\), not a regular file/,
  },
  {
    name: 'a regular file where a folder must be (the path itself)',
    setup: async () => dir,
    atPath: (path) => writeFile(path, 'not a folder\n'),
    errnos: ['ENOTDIR'],
    reason: /is a file, not a folder/,
  },
];

/** A path kind: the command that writes it, how the path is given, and what the line must name. */
interface PathKind {
  readonly name: string;
  readonly file: string;
  readonly folder?: boolean;
  args(path: string): string[];
  /** The environment that names it, when a variable does (GITHUB_STEP_SUMMARY). */
  env?(path: string): Record<string, string>;
  readonly what: string;
  readonly setting: string;
  readonly code: string;
}

const kinds: readonly PathKind[] = [
  { name: 'state file', file: 'state.json', args: (p) => ['sync', '--state-file', p], what: 'the state file', setting: '--state-file, AMSYNC_STATE_FILE, stateFile', code: 'state_file_unwritable' },
  { name: 'tokensDir', file: 'tokens', folder: true, args: (p) => ['sync', '--tokens-dir', p], what: 'tokensDir', setting: '--tokens-dir, AMSYNC_TOKENS_DIR, tokensDir', code: 'tokens_dir' },
  { name: 'audit log', file: 'audit.jsonl', args: (p) => ['sync', '--audit-log', p], what: 'the audit log', setting: '--audit-log, AMSYNC_AUDIT_LOG, auditLog', code: 'audit_open_failed' },
  { name: 'report file', file: 'report.json', args: (p) => ['sync', '--report', p], what: 'the report', setting: '--report', code: 'report_unwritable' },
  { name: 'plan file', file: 'plan.json', args: (p) => ['plan', '--out', p], what: 'the plan file', setting: '--out', code: 'plan_unwritable' },
  { name: 'step summary', file: 'summary.md', args: () => ['sync'], env: (p) => ({ GITHUB_STEP_SUMMARY: p }), what: 'the step summary', setting: 'GITHUB_STEP_SUMMARY', code: 'step_summary_unwritable' },
  { name: 'export file', file: 'export.yaml', args: (p) => ['export', '-o', p], what: 'the export', setting: '-o/--output', code: 'export_unwritable' },
];

/** Which causes make sense for a kind: a folder cannot be "a folder where a file must be". */
function applies(kind: PathKind, cause: Cause): boolean {
  if (cause.name.startsWith('a regular file where a folder must be (the path itself)')) return kind.folder === true;
  if (cause.atPath !== undefined) return kind.folder !== true;
  return true;
}

const table = kinds.flatMap((kind) => causes.filter((cause) => applies(kind, cause)).map((cause) => [`${kind.name}: ${cause.name}`, kind, cause] as const));

/** The state file in a folder of its own (each kind but the state file's own row): only the path under test fails. */
function amsync(args: readonly string[], env: Record<string, string> = {}) {
  const withState = args.includes('--state-file') || args[0] === 'export' ? args : [...args, '--state-file', join(dir, 'state', 'state.json')];
  return runInProcess(withState, {
    cwd: dir,
    env: { AMSYNC_URL: emu.url, AMSYNC_TOKEN: TOKEN, AMSYNC_LOG_LEVEL: 'warn', ...env },
  });
}

describe('a local path amsync cannot write: one line naming the path, its setting and the fix; exit 1; nothing sent', () => {
  it.each(table)('%s', async (_, kind, cause) => {
    const parent = await cause.setup();
    const path = join(parent, kind.file);
    await cause.atPath?.(path);
    const json = kind.name !== 'export file'; // an export is YAML: it has no --json
    const run = await amsync([...kind.args(path), ...(json ? ['--json'] : [])], kind.env?.(path));

    expect(emu.requests(), run.stderr).toEqual([]);
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr).not.toMatch(/unexpected failure|^\s+at /m);
    const lines = run.stderr.split('\n').filter((l) => l !== '');
    expect(lines, run.stderr).toHaveLength(1);
    const line = lines[0]!;
    expect(line.startsWith(`error: cannot write ${kind.what} ${path} (${kind.setting}): `), line).toBe(true);
    expect(line).toMatch(cause.reason);
    expect(cause.errnos.some((e) => line.includes(`(${e})`)), line).toBe(true);
    expect(line.endsWith('; nothing was sent'), line).toBe(true);
    // --json: the same line and the path kind's stable code.
    if (json) expect(JSON.parse(run.stdout)).toEqual({ error: { code: kind.code, message: line.slice('error: '.length) } });
    // Nothing of the run was left behind: no lock taken, no probe file.
    expect(existsSync(join(dir, 'state', 'state.json.lock'))).toBe(false);
    if (existsSync(parent) && !parent.startsWith('/sys')) expect((await readdir(parent)).filter((f) => f.startsWith('.amsync-probe'))).toEqual([]);
  });

  // The writer lock is in the state file's folder, which the state file's row checks; what is
  // left is the lock file itself refusing (injected at its name: the link that takes it).
  it.each(['EROFS', 'ENOSPC', 'EACCES'])('writer lock: %s on the lock file itself', async (errno) => {
    const state = join(dir, 'state', 'state.json');
    await mkdir(join(dir, 'state'));
    fsFaults.set(`${state}.lock`, errno);
    const run = await amsync(['sync', '--json']);
    expect(emu.requests(), run.stderr).toEqual([]);
    expect(run.code, run.stderr).toBe(1);
    const line = `cannot write the writer lock ${state}.lock (beside the state file: --state-file, AMSYNC_STATE_FILE, stateFile): `;
    expect(run.stderr.startsWith(`error: ${line}`), run.stderr).toBe(true);
    expect(run.stderr).toContain(`(${errno}); `);
    expect(run.stderr.split('\n').filter((l) => l !== '')).toHaveLength(1);
    expect(JSON.parse(run.stdout).error.code).toBe('writer_lock_unwritable');
  });

  it('the state key file beside the state file: a folder there is refused before anything is sent', async () => {
    await mkdir(join(dir, 'state', 'state.json.key'), { recursive: true });
    const run = await amsync(['sync']);
    expect(emu.requests()).toEqual([]);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      `error: cannot write the state key file ${join(dir, 'state', 'state.json.key')} (beside the state file: --state-file, AMSYNC_STATE_FILE, stateFile; or set AMSYNC_STATE_KEY): ${join(dir, 'state', 'state.json.key')} is a folder (EISDIR); move that folder away, or point --state-file at a file; nothing was sent\n`,
    );
  });

  it('the daemon in apply mode: a state folder it cannot write stops it at start (exit 1, one line), nothing sent', async () => {
    await mkdir(join(dir, 'ro'));
    fsFaults.set(join(dir, 'ro'), 'EROFS');
    const signals = new EventEmitter();
    const state = join(dir, 'ro', 'state.json');
    // Before, it started and failed every run; stop it if it does.
    let stopped = false;
    const stopIfStarted = (_: string, all: string) => {
      if (stopped || !all.includes('daemon started')) return;
      stopped = true;
      signals.emit('SIGTERM', 'SIGTERM');
      signals.emit('SIGINT', 'SIGINT');
    };
    // At info, so that a daemon that starts says so (and is stopped).
    const env = { AMSYNC_URL: emu.url, AMSYNC_TOKEN: TOKEN, AMSYNC_LOG_LEVEL: 'info' };
    const run = await runInProcess(['daemon', '--listen', '127.0.0.1:0', '--state-file', state], { cwd: dir, env, signals, scheduler: new FakeScheduler().factory, onStderr: stopIfStarted });
    expect(run.stderr).not.toContain('daemon started');
    expect(emu.requests()).toEqual([]);
    expect(run.code).toBe(1);
    expect(run.stderr.split('\n').filter((l) => l.startsWith('error: ') || / at /.test(l))).toEqual([
      `error: cannot write the state file ${state} (--state-file, AMSYNC_STATE_FILE, stateFile): the file system is read-only (EROFS); point --state-file at a writable file system (a writable volume, not a read-only mount); nothing was sent`,
    ]);
  });

  it('every path writable: the sync runs, and the checks leave no file behind', async () => {
    await mkdir(join(dir, 'out'));
    const out = (f: string) => join(dir, 'out', f);
    const run = await amsync(['sync', '--state-file', out('state.json'), '--tokens-dir', out('tokens'), '--audit-log', out('audit.jsonl'), '--report', out('report.json')]);
    expect(run.code, run.stderr).toBe(0);
    expect(emu.requests().filter((r) => r.method === 'POST')).toHaveLength(1);
    expect((await readdir(join(dir, 'out'))).sort()).toEqual(['audit.jsonl', 'report.json', 'tokens']);
    expect(await readdir(out('tokens'))).toEqual(expect.arrayContaining(['ci']));
  });
});

describe('a plan reads the state file and its key: one that cannot be read is one line, never a wait or a stack', () => {
  const reads: readonly (readonly [string, (state: string) => Promise<void>, string, RegExp])[] = [
    ['the state file is a folder', async (state) => void (await mkdir(state, { recursive: true })), 'the state file', /is a folder \(EISDIR\)/],
    // Before, reading it waited for a writer forever.
    ['the state file is a FIFO', async (state) => void execFileSync('mkfifo', [state]), 'the state file', /a FIFO \(named pipe\), not a regular file \(ENOTREG\)/],
    ['the state key file is a folder', async (state) => void (await mkdir(`${state}.key`, { recursive: true })), 'the state key file', /is a folder \(EISDIR\)/],
  ];
  it.each(reads)('%s', async (_, make, what, reason) => {
    const state = join(dir, 'state.json');
    await make(state);
    const run = await runInProcess(['plan', '--state-file', state], { cwd: dir, env: { AMSYNC_URL: emu.url, AMSYNC_TOKEN: TOKEN, AMSYNC_LOG_LEVEL: 'warn' } });
    expect(run.code, run.stderr).toBe(1);
    const lines = run.stderr.split('\n').filter((l) => l !== '');
    expect(lines, run.stderr).toHaveLength(1);
    expect(lines[0]!.startsWith(`error: cannot read ${what} ${what === 'the state file' ? state : `${state}.key`} (`), lines[0]).toBe(true);
    expect(lines[0]).toMatch(reason);
    expect(run.stderr).not.toMatch(/unexpected failure|^\s+at /m);
  });
});

describe('a path refused during the run (the check at start passed)', () => {
  it('--report on a disk that filled during the apply: the changes stand; one line names the report, --report and the fix; exit 1', async () => {
    await mkdir(join(dir, 'out'));
    const report = join(dir, 'out', 'report.json');
    const fillOnceApplied = (chunk: string) => {
      if (chunk.includes('✓ created')) fsFaults.set(join(dir, 'out'), 'ENOSPC');
    };
    const env = { AMSYNC_URL: emu.url, AMSYNC_TOKEN: TOKEN, AMSYNC_LOG_LEVEL: 'warn' };
    const run = await runInProcess(['sync', '--report', report, '--state-file', join(dir, 'state', 'state.json')], { cwd: dir, env, tty: true, stdin: 'yes\n', onStdout: fillOnceApplied });
    expect(emu.requests().filter((r) => r.method === 'POST').map((r) => r.item?.name)).toEqual(['ci']);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(`error: cannot write the report ${report} (--report): no space left on the device (ENOSPC); free space on that disk, or point --report at another disk\n`);
  });

  it.each(['EROFS', 'ENOSPC'])('the state file, %s: the changes are applied and reported; one line names the file, its setting and the fix; exit 1', async (errno) => {
    await writeFile(join(dir, 'access.yaml'), 'sshUsers:\n  - username: deploy\n    password: { env: DEPLOY_PASSWORD }\n');
    const stateDir = join(dir, 'state');
    const state = join(stateDir, 'state.json');
    // The disk fills (or the volume turns read-only) once the first change is applied.
    const refuseOnceApplied = (chunk: string) => {
      if (chunk.includes('✓ created')) fsFaults.set(stateDir, errno);
    };
    const env = { AMSYNC_URL: emu.url, AMSYNC_TOKEN: TOKEN, AMSYNC_LOG_LEVEL: 'warn', DEPLOY_PASSWORD: 'CANARY-password-local-outputs-91' };
    const run = await runInProcess(['sync', '--state-file', state], { cwd: dir, env, tty: true, stdin: 'yes\n', onStdout: refuseOnceApplied });
    expect(emu.requests().filter((r) => r.method === 'POST').map((r) => r.item?.name)).toEqual(['deploy']);
    expect(run.stdout).toContain('✓ created sshUser "deploy"');
    expect(run.code).toBe(1);
    const errors = run.stderr.split('\n').filter((l) => l.startsWith('error: '));
    expect(errors, run.stderr).toHaveLength(1);
    expect(run.stderr).not.toMatch(/unexpected failure|^\s+at /m);
    const fix = errno === 'EROFS' ? 'point --state-file at a writable file system' : 'free space on that disk, or point --state-file at another disk';
    expect(errors[0]).toMatch(new RegExp(`^error: the state file ${state.replace(/[.]/g, '\\.')} could not be written \\(--state-file, AMSYNC_STATE_FILE, stateFile\\): .* \\(${errno}\\): the changes above were applied`));
    expect(errors[0]).toContain(`; ${fix}`);
    expect(errors[0]).toContain('then run once with --rotate-passwords');
    expect(run.stderr).not.toContain('CANARY-password');
  });
});

describe('the check agrees with the writes on symbolic links and read-only files (issue 27 deliverable 6, review)', () => {
  it('a symbolic link as the audit log (opened with O_NOFOLLOW): one line before any request, exit 1; its target untouched', async () => {
    await mkdir(join(dir, 'elsewhere'));
    const target = join(dir, 'elsewhere', 'audit.jsonl');
    await writeFile(target, '');
    const link = join(dir, 'audit.jsonl');
    await symlink(target, link);
    const run = await amsync(['sync', '--audit-log', link, '--json']);
    expect(emu.requests(), run.stderr).toEqual([]);
    expect(run.code, run.stderr).toBe(1);
    const line = `cannot write the audit log ${link} (--audit-log, AMSYNC_AUDIT_LOG, auditLog): ${link} is a symbolic link, which amsync does not follow there (ELOOP); point --audit-log at a regular file, not a link; nothing was sent`;
    expect(run.stderr).toBe(`error: ${line}\n`);
    expect(JSON.parse(run.stdout)).toEqual({ error: { code: 'audit_open_failed', message: line } });
    expect(await readFile(target, 'utf8')).toBe('');
    expect(await readdir(join(dir, 'elsewhere'))).toEqual(['audit.jsonl']);
  });

  it('GITHUB_STEP_SUMMARY as a link to a file (appendFile follows it): accepted, the summary goes through it', async () => {
    await writeFile(join(dir, 'real-summary.md'), '');
    await symlink(join(dir, 'real-summary.md'), join(dir, 'summary.md'));
    const run = await amsync(['sync'], { GITHUB_STEP_SUMMARY: join(dir, 'summary.md') });
    expect(run.code, run.stderr).toBe(0);
    expect(emu.requests().filter((r) => r.method === 'POST')).toHaveLength(1);
    expect(await readFile(join(dir, 'real-summary.md'), 'utf8')).not.toBe('');
  });

  it('a FIFO given as tokensDir is called a FIFO, not a file', async () => {
    const tokens = join(dir, 'tokens');
    execFileSync('mkfifo', [tokens]);
    const run = await amsync(['sync', '--tokens-dir', tokens]);
    expect(emu.requests(), run.stderr).toEqual([]);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(`error: cannot write tokensDir ${tokens} (--tokens-dir, AMSYNC_TOKENS_DIR, tokensDir): ${tokens} is a FIFO (named pipe), not a folder (ENOTDIR); move it away, or point --tokens-dir elsewhere; nothing was sent\n`);
  });

  // Mode 0444 in a writable folder; as root a chmod stops nothing, so the refusal is injected at the file itself.
  const readOnlyFiles = [
    ['the audit log', (p: string) => ['sync', '--audit-log', p], () => ({}), '--audit-log, AMSYNC_AUDIT_LOG, auditLog', 'or point --audit-log elsewhere'],
    ['the step summary', () => ['sync'], (p: string) => ({ GITHUB_STEP_SUMMARY: p }), 'GITHUB_STEP_SUMMARY', 'or point GITHUB_STEP_SUMMARY elsewhere'],
  ] as const;
  it.each(readOnlyFiles)('%s read-only in a writable folder (EACCES): the fix names the file, not the folder', async (what, args, env, setting, elsewhere) => {
    await mkdir(join(dir, 'out'));
    const file = join(dir, 'out', 'file');
    await writeFile(file, '');
    fsFaults.set(file, 'EACCES');
    const run = await amsync(args(file), env(file));
    expect(emu.requests(), run.stderr).toEqual([]);
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr).toMatch(new RegExp(`^error: cannot write ${what} ${file} \\(${setting}\\): permission denied( for uid \\d+)? \\(EACCES\\); let this user write to ${file}, ${elsewhere}; nothing was sent\\n$`));
  });
});
