import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DataFilePersister, loadDataFile } from '../../../src/emulator/persistence.js';
import type { StoreData } from '../../../src/emulator/store.js';

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'amsync-persist-'));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function data(n: number): StoreData {
  return { version: 1, passwordPepper: 'p', nextIds: { sshUsers: n + 1, apikeys: 1 }, sshUsers: [], apikeys: [] };
}

describe('data file persistence', () => {
  it('group-commits concurrent writes; every caller sees a write that includes its change', async () => {
    const file = join(dir, 'state.json');
    let version = 0;
    let writes = 0;
    const persister = new DataFilePersister(file, () => {
      writes += 1;
      return data(version);
    });
    const waits: Promise<void>[] = [];
    for (let i = 1; i <= 20; i += 1) {
      version = i;
      waits.push(persister.persist());
    }
    await Promise.all(waits);
    expect(writes).toBeLessThan(20);
    expect((await loadDataFile(file))?.nextIds.sshUsers).toBe(21);
    // Only the data file remains: temporary files were renamed over it.
    expect(await readdir(dir)).toEqual(['state.json']);
  });

  it('loads nothing when the file does not exist yet', async () => {
    expect(await loadDataFile(join(dir, 'none.json'))).toBeNull();
  });

  it('refuses files that are not JSON, not its format, or repeat an id', async () => {
    const file = join(dir, 'x.json');
    await writeFile(file, 'nope');
    await expect(loadDataFile(file)).rejects.toMatchObject({ code: 'emulator_data_file' });
    await writeFile(file, JSON.stringify({ ...data(1), sshUsers: 3 }));
    await expect(loadDataFile(file)).rejects.toMatchObject({ code: 'emulator_data_file' });
    const key = { id: 1, name: 'k', superuser: false, roles: [], token: 't', created_at: 'a', updated_at: 'a' };
    await writeFile(file, JSON.stringify({ ...data(1), apikeys: [key, key] }));
    await expect(loadDataFile(file)).rejects.toThrow(/repeats apikey 1/);
    expect(JSON.parse(await readFile(file, 'utf8')).apikeys).toHaveLength(2);
  });
});
