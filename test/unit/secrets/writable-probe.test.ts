import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { localPathError, type LocalPath } from '../../../src/secrets/local-path-error.js';
import { probeWritable } from '../../../src/secrets/writable-probe.js';
import { closeFaults, fsFaults } from '../../helpers/fs-faults.js';

vi.mock('node:fs/promises', async (actual) => (await import('../../helpers/fs-faults.js')).faultyFsPromises(await actual()));
vi.mock('node:fs', async (actual) => (await import('../../helpers/fs-faults.js')).faultyFs(await actual()));

/** Issue 27 deliverable 6, review: the writable probe leaves nothing behind and agrees with the real writes. */

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'amsync-probe-'));
});
afterEach(async () => {
  fsFaults.clear();
  closeFaults.clear();
  await rm(dir, { recursive: true, force: true });
});

const probeFiles = async (folder: string) => (await readdir(folder)).filter((f) => f.startsWith('.amsync-probe'));

describe('probeWritable: its temporary file never stays', () => {
  it.each(['EDQUOT', 'ENOSPC', 'EIO'])('close() rejecting with %s: the error is thrown, and the probe file is removed', async (errno) => {
    closeFaults.set(dir, errno);
    await expect(probeWritable(join(dir, 'state.json'), 'replace')).rejects.toMatchObject({ code: errno, folder: dir });
    expect(await probeFiles(dir)).toEqual([]);
  });

  it('a tokensDir whose close() rejects: nothing is left in it for a token consumer to see', async () => {
    const tokens = join(dir, 'tokens');
    await mkdir(tokens);
    closeFaults.set(tokens, 'EDQUOT');
    await expect(probeWritable(tokens, 'folder')).rejects.toMatchObject({ code: 'EDQUOT' });
    expect(await readdir(tokens)).toEqual([]);
  });
});

describe('probeWritable and symbolic links: it refuses what the write refuses, and accepts what it accepts', () => {
  it('the audit log (opened with O_NOFOLLOW) as a link: refused (ELOOP), and the link target is not opened or made', async () => {
    await mkdir(join(dir, 'elsewhere'));
    const target = join(dir, 'elsewhere', 'audit.jsonl');
    await symlink(target, join(dir, 'audit.jsonl'));
    await expect(probeWritable(join(dir, 'audit.jsonl'), 'append')).rejects.toMatchObject({ code: 'ELOOP', kind: 'a symbolic link' });
    expect(await readdir(join(dir, 'elsewhere'))).toEqual([]);
    // The same to an existing file: refused, the file untouched.
    await writeFile(target, 'kept\n');
    await expect(probeWritable(join(dir, 'audit.jsonl'), 'append')).rejects.toMatchObject({ code: 'ELOOP' });
    expect(await readFile(target, 'utf8')).toBe('kept\n');
  });

  it('GITHUB_STEP_SUMMARY (appendFile follows links) as a link to a regular file: accepted', async () => {
    await writeFile(join(dir, 'real.md'), '');
    await symlink(join(dir, 'real.md'), join(dir, 'summary.md'));
    await expect(probeWritable(join(dir, 'summary.md'), 'append-followed')).resolves.toBeUndefined();
  });

  it('a replaced file (state, report: the rename replaces the link) as a link, dangling or looping: accepted', async () => {
    await symlink(join(dir, 'nowhere', 'x'), join(dir, 'dangling.json'));
    await symlink(join(dir, 'loop.json'), join(dir, 'loop.json'));
    await expect(probeWritable(join(dir, 'dangling.json'), 'replace')).resolves.toBeUndefined();
    await expect(probeWritable(join(dir, 'loop.json'), 'replace')).resolves.toBeUndefined();
  });

  it('tokensDir as a link to a folder (the token sink writes through it): accepted', async () => {
    await mkdir(join(dir, 'real-tokens'));
    await symlink(join(dir, 'real-tokens'), join(dir, 'tokens'));
    await expect(probeWritable(join(dir, 'tokens'), 'folder')).resolves.toBeUndefined();
  });
});

describe('what the line says', () => {
  const tokensDir = (path: string): LocalPath => ({ what: 'tokensDir', path, setting: '--tokens-dir, AMSYNC_TOKENS_DIR, tokensDir', knob: '--tokens-dir', folder: true });

  it('a FIFO given as tokensDir is called a FIFO, not a file', async () => {
    const path = join(dir, 'tokens');
    execFileSync('mkfifo', [path]);
    const error = await probeWritable(path, 'folder').catch((e: unknown) => e);
    const line = localPathError(error, tokensDir(path), { code: 'tokens_dir', nothingSent: true }).message;
    expect(line).toContain(`${path} is a FIFO (named pipe), not a folder (ENOTDIR)`);
    expect(line).not.toContain('is a file');
  });

  it('a device given as tokensDir is called a device', async () => {
    const error = await probeWritable('/dev/null', 'folder').catch((e: unknown) => e);
    expect(localPathError(error, tokensDir('/dev/null'), { code: 'tokens_dir' }).message).toContain('/dev/null is a device, not a folder (ENOTDIR)');
  });

  it('a symbolic link where amsync refuses one: said so, with the fix', async () => {
    await symlink(join(dir, 'x'), join(dir, 'audit.jsonl'));
    const error = await probeWritable(join(dir, 'audit.jsonl'), 'append').catch((e: unknown) => e);
    const line = localPathError(error, { what: 'the audit log', path: join(dir, 'audit.jsonl'), setting: '--audit-log', knob: '--audit-log' }, { code: 'audit_open_failed' }).message;
    expect(line).toContain('is a symbolic link, which amsync does not follow there (ELOOP); point --audit-log at a regular file, not a link');
  });

  it.each(['append', 'append-followed'] as const)('EACCES opening the file itself (%s, mode 0444 in a writable folder): the fix names the file, not its folder', async (mode) => {
    const path = join(dir, 'audit.jsonl');
    await writeFile(path, '');
    // As root a chmod 0444 stops nothing: the refusal is injected at the file itself.
    fsFaults.set(path, 'EACCES');
    const error = await probeWritable(path, mode).catch((e: unknown) => e);
    const line = localPathError(error, { what: 'the audit log', path, setting: '--audit-log', knob: '--audit-log' }, { code: 'audit_open_failed' }).message;
    expect(line).toContain(`permission denied`);
    expect(line).toContain(`let this user write to ${path}, or point --audit-log elsewhere`);
    expect(line).not.toContain(`write to ${dir},`);
  });
});
