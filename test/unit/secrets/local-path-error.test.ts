import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { exitCodeFor } from '../../../src/errors.js';
import { writeFileAtomic } from '../../../src/secrets/atomic-write.js';
import { LocalPathError, localPathError, type LocalPath } from '../../../src/secrets/local-path-error.js';
import { Secret } from '../../../src/secrets/secret.js';
import { TokenFileError, TokenSink } from '../../../src/secrets/token-sink.js';
import { fsFaults } from '../../helpers/fs-faults.js';

// EROFS and ENOSPC injected at node:fs for marked folders (test/helpers/fs-faults.ts).
vi.mock('node:fs/promises', async (actual) => (await import('../../helpers/fs-faults.js')).faultyFsPromises(await actual()));
vi.mock('node:fs', async (actual) => (await import('../../helpers/fs-faults.js')).faultyFs(await actual()));

/**
 * The one helper that puts a file-system error on a local path in words (issue 27, finding 6),
 * shared by the state file, the writer lock, tokensDir, the audit log, report and plan files
 * (and usable for the integrator key file); and the two writers that used to let such an
 * error out raw or do harm: the atomic write and the token sink.
 */

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'amsync-local-path-'));
});
afterEach(async () => {
  fsFaults.clear();
  await rm(dir, { recursive: true, force: true });
});

const errno = (code: string, path = '/x') => Object.assign(new Error(`${code}: raw node message, open '${path}'`), { code, path });

describe('localPathError: one line naming the path, its setting, the errno and the fix', () => {
  const target = (path: string): LocalPath => ({ what: 'the state file', path, setting: '--state-file, AMSYNC_STATE_FILE, stateFile', knob: '--state-file' });

  it.each([
    ['EROFS', 'the file system is read-only (EROFS); point --state-file at a writable file system'],
    ['EACCES', 'permission denied'],
    ['EPERM', 'permission denied'],
    ['ENOSPC', 'no space left on the device (ENOSPC); free space on that disk, or point --state-file at another disk'],
    ['EDQUOT', 'the disk quota is exceeded (EDQUOT)'],
  ])('%s', (code, words) => {
    const error = localPathError(errno(code), target('/data/state.json'), { code: 'state_file_unwritable', nothingSent: true });
    expect(error).toBeInstanceOf(LocalPathError);
    expect(error).toMatchObject({ code: 'state_file_unwritable', errno: code, path: '/data/state.json' });
    expect(error.message).toMatch(/^cannot write the state file \/data\/state\.json \(--state-file, AMSYNC_STATE_FILE, stateFile\): /);
    expect(error.message).toContain(words);
    expect(error.message.endsWith('; nothing was sent')).toBe(true);
    // Node's own message (its syscall) is the cause, not the line.
    expect(error.message).not.toContain('raw node message');
    expect(error.message).not.toContain('\n');
    expect(exitCodeFor(error)).toBe(1);
  });

  it('EEXIST (mkdir -p) and ENOTDIR (open) name the regular file standing where a folder must be', async () => {
    await writeFile(join(dir, 'a-file'), 'x');
    for (const code of ['EEXIST', 'ENOTDIR']) {
      const error = localPathError(errno(code), target(join(dir, 'a-file', 'deeper', 'state.json')), { code: 'state_file_unwritable' });
      expect(error.message).toContain(`${join(dir, 'a-file')} is a file, not a folder (${code}); move that file away, or point --state-file elsewhere`);
    }
  });

  it('a read error says read, and an error without an errno keeps its message on one line', () => {
    expect(localPathError(errno('EISDIR'), target('/d/state.json'), { code: 'state_file_unreadable', verb: 'read' }).message).toBe(
      'cannot read the state file /d/state.json (--state-file, AMSYNC_STATE_FILE, stateFile): /d/state.json is a folder (EISDIR); move that folder away, or point --state-file at a file',
    );
    expect(localPathError(new Error('odd'), target('/d/s.json'), { code: 'x' }).message).toContain('): odd; check /d, or point --state-file elsewhere');
  });
});

describe('writeFileAtomic replaces only a regular file', () => {
  // Before: the rename put a regular file where the FIFO (or, as root, /dev/full) was.
  it('a FIFO at the path is refused (ENOTREG) and left in place; nothing else is written', async () => {
    const path = join(dir, 'report.json');
    execFileSync('mkfifo', [path]);
    await expect(writeFileAtomic(path, '{}\n')).rejects.toMatchObject({ code: 'ENOTREG' });
    expect((await stat(path)).isFIFO()).toBe(true);
    expect(await readdir(dir)).toEqual(['report.json']);
  });

  it('a folder at the path is EISDIR before any temporary file is made', async () => {
    await mkdir(join(dir, 'plan.json'));
    await expect(writeFileAtomic(join(dir, 'plan.json'), '{}\n')).rejects.toMatchObject({ code: 'EISDIR' });
    expect(await readdir(dir)).toEqual(['plan.json']);
  });
});

describe('the token sink: a file system that refuses a token file is an error for that key, not an unexpected failure', () => {
  it.each(['EROFS', 'ENOSPC'])('%s: each key gets a TokenFileError that says why and what to do', async (code) => {
    const tokens = join(dir, 'tokens');
    await mkdir(tokens);
    fsFaults.set(tokens, code);
    const sink = new TokenSink(tokens);
    // Before: the raw error left keepCurrent, and the whole run ended in `unexpected failure` with a stack.
    const kept = await sink.keepCurrent([
      { name: 'a', token: new Secret('tok-canary-a') },
      { name: 'b', token: new Secret('tok-canary-b') },
    ]);
    expect(kept.written).toBe(0);
    expect(kept.errors.map((e) => e.name).sort()).toEqual(['a', 'b']);
    for (const { error } of kept.errors) {
      expect(error).toBeInstanceOf(TokenFileError);
      expect(error.message).toContain(`the token file ${join(tokens, 'a')}`.slice(0, -1));
      expect(error.message).toContain(`(${code}); `);
      expect(error.message).toContain('--tokens-dir');
      expect(error.message).toContain('its token was not written');
      expect(error.message).not.toContain('tok-canary');
    }
  });
});
