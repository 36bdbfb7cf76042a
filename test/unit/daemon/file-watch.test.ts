import { mkdir, mkdtemp, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { systemTimers } from '../../../src/time/index.js';
import { contentHash, watchFiles, type FileWatch } from '../../../src/daemon/index.js';
import { waitFor } from '../../helpers/daemon-deferred.js';

const logger = pino({ level: 'silent' });
let dir: string;
let watch: FileWatch | undefined;
let changes: string[][];

async function start(files: string[]): Promise<FileWatch> {
  watch = await watchFiles({ files, debounceMs: 50, onChange: (c) => changes.push([...c]), logger, timers: systemTimers, pollMs: 0 });
  return watch;
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'amsync-watch-'));
  changes = [];
});

afterEach(async () => {
  await watch?.close();
  watch = undefined;
  await rm(dir, { recursive: true, force: true });
});

describe('the watch sees edits however they are saved', () => {
  it('an in-place write', async () => {
    const file = join(dir, 'access.yaml');
    await writeFile(file, 'a: 1\n');
    await start([file]);
    await writeFile(file, 'a: 2\n');
    await waitFor(() => changes.length > 0, 'a change');
    expect(changes[0]).toEqual([file]);
  });

  it("an editor's atomic save: a new file renamed over the old one", async () => {
    const file = join(dir, 'access.yaml');
    await writeFile(file, 'a: 1\n');
    await start([file]);
    await writeFile(join(dir, '.access.yaml.swp'), 'a: 2\n');
    await rename(join(dir, '.access.yaml.swp'), file);
    await waitFor(() => changes.length > 0, 'a change');
    expect(changes.flat()).toEqual([file]);
    // And the watch goes on after the inode changed.
    await writeFile(join(dir, 'access.yaml.tmp'), 'a: 3\n');
    await rename(join(dir, 'access.yaml.tmp'), file);
    await waitFor(() => changes.length > 1, 'a second change');
  });

  it("a Kubernetes ConfigMap update: the `..data` symlink swapped to a new directory, twice", async () => {
    const cm = join(dir, 'config');
    await mkdir(join(cm, '..2025_01_01_00_00_00.1'), { recursive: true });
    await writeFile(join(cm, '..2025_01_01_00_00_00.1', 'access.yaml'), 'a: 1\n');
    await symlink('..2025_01_01_00_00_00.1', join(cm, '..data'));
    await symlink('..data/access.yaml', join(cm, 'access.yaml'));
    const file = join(cm, 'access.yaml');
    await start([file]);

    const swap = async (from: string, to: string, content: string) => {
      await mkdir(join(cm, to));
      await writeFile(join(cm, to, 'access.yaml'), content);
      await symlink(to, join(cm, '..data_tmp'));
      await rename(join(cm, '..data_tmp'), join(cm, '..data'));
      await rm(join(cm, from), { recursive: true });
    };
    await swap('..2025_01_01_00_00_00.1', '..2025_01_01_00_01_00.2', 'a: 2\n');
    await waitFor(() => changes.length > 0, 'the first swap');
    expect(changes[0]).toEqual([file]);
    await swap('..2025_01_01_00_01_00.2', '..2025_01_01_00_02_00.3', 'a: 3\n');
    await waitFor(() => changes.length > 1, 'the second swap');
  });

  it('a referenced secret file, once the watch is told about it', async () => {
    const file = join(dir, 'access.yaml');
    const secrets = join(dir, 'secrets');
    await mkdir(secrets);
    const secret = join(secrets, 'deploy');
    await writeFile(file, 'a: 1\n');
    await writeFile(secret, 'pw-1');
    const w = await start([file]);
    await w.setFiles([file, secret]);
    await writeFile(secret, 'pw-2');
    await waitFor(() => changes.length > 0, 'the secret change');
    expect(changes[0]).toEqual([secret]);
  });

  it('a file deleted, then created again with other content', async () => {
    const file = join(dir, 'access.yaml');
    await writeFile(file, 'a: 1\n');
    const w = await start([file]);
    await rm(file);
    await waitFor(() => changes.length > 0, 'the deletion');
    await writeFile(file, 'a: 2\n');
    await waitFor(() => changes.length > 1, 'the new file');
    expect(await w.check()).toEqual([]);
  });
});

describe('the watch compares contents, not events', () => {
  it('rewriting the same bytes, or touching other files in the directory, is no change', async () => {
    const file = join(dir, 'access.yaml');
    await writeFile(file, 'a: 1\n');
    const w = await start([file]);
    await writeFile(file, 'a: 1\n');
    await writeFile(join(dir, 'unrelated.txt'), 'x');
    expect(await w.check()).toEqual([]);
    expect(changes).toEqual([]);
  });

  it('fingerprints say missing, the content hash, or of a folder (-f DIR) the hash of its listing', async () => {
    expect(await contentHash(join(dir, 'nope'))).toBe('missing');
    const folder = join(dir, 'folder');
    await mkdir(folder, { recursive: true });
    const empty = await contentHash(folder);
    expect(empty).toMatch(/^dir:[0-9a-f]{64}$/);
    await writeFile(join(folder, '.swp'), 'x');
    expect(await contentHash(folder)).toBe(empty);
    await writeFile(join(folder, 'team.yaml'), 'x');
    expect(await contentHash(folder)).not.toBe(empty);
    await writeFile(join(dir, 'f'), 'x');
    expect(await contentHash(join(dir, 'f'))).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it('a folder in the watch reports a desired file added to it', async () => {
    const folder = join(dir, 'teams');
    await mkdir(folder, { recursive: true });
    await writeFile(join(folder, 'a.yaml'), 'a: 1\n');
    const w = await start([folder, join(folder, 'a.yaml')]);
    await writeFile(join(folder, 'b.yaml'), 'b: 1\n');
    // The comparison the event started, or this one: either finds the listing changed.
    const now = await w.check();
    expect([...now, ...changes.flat()]).toContain(folder);
    expect([...now, ...changes.flat()]).not.toContain(join(folder, 'a.yaml'));
  });
});
