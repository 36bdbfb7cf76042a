import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createdKey, openPasswordState } from '../../../src/secrets/state-file.js';

/**
 * The state file's create times of items with a `ttl:` (issue 30): merged with what another
 * process saved meanwhile, like the fingerprints; an older file without them still reads, and
 * a save that records none leaves the file's shape as it was.
 */

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'amsync-state-created-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const T = Date.UTC(2026, 0, 2, 3, 4, 5);
const open = (path: string, serviceUrl = 'http://a') => openPasswordState({ path, serviceUrl, keyFromEnv: 'k' });

describe('createdAt in the state file', () => {
  it("two processes' records are merged on save, not written over each other", async () => {
    const path = join(dir, 'state.json');
    const first = await open(path);
    const second = await open(path);
    first.recordCreated!('apikey', 3, T);
    first.record(1, 'fp-1');
    await first.save();
    second.recordCreated!('sshUser', 7, T + 1_000);
    await second.save();
    const doc = JSON.parse(await readFile(path, 'utf8'));
    expect(doc.services['http://a']).toEqual({
      sshUserPasswords: { '1': 'fp-1' },
      createdAt: { 'apikey:3': new Date(T).toISOString(), 'sshUser:7': new Date(T + 1_000).toISOString() },
    });
    const again = await open(path);
    expect(again.createdAt!.get(createdKey('apikey', 3))).toBe(T);
    expect(again.createdAt!.get(createdKey('sshUser', 7))).toBe(T + 1_000);
  });

  it('an old state file without createdAt reads, and saves without the key when none is recorded', async () => {
    const path = join(dir, 'state.json');
    const old = `${JSON.stringify({ version: 1, services: { 'http://a': { sshUserPasswords: { '4': 'fp-4' } } } }, null, 2)}\n`;
    await writeFile(path, old, { mode: 0o600 });
    const state = await open(path);
    expect(state.applied.get('4')).toBe('fp-4');
    expect(state.createdAt!.size).toBe(0);
    state.record(4, 'fp-4b');
    await state.save();
    expect(await readFile(path, 'utf8')).toBe(old.replace('fp-4', 'fp-4b'));
  });

  it('a record equal to the one kept changes nothing; an unreadable time is dropped on read', async () => {
    const path = join(dir, 'state.json');
    await writeFile(path, JSON.stringify({ version: 1, services: { 'http://a': { sshUserPasswords: {}, createdAt: { 'apikey:1': new Date(T).toISOString(), 'apikey:2': 'yesterday' } } } }), { mode: 0o600 });
    const state = await open(path);
    expect([...state.createdAt!.entries()]).toEqual([['apikey:1', T]]);
    state.recordCreated!('apikey', 1, T);
    expect(state.dirty).toBe(false);
  });
});
