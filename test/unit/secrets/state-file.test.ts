import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fingerprint } from '../../../src/secrets/fingerprint.js';
import { Secret } from '../../../src/secrets/secret.js';
import { openPasswordState } from '../../../src/secrets/state-file.js';
import { safeFileName, TokenSink } from '../../../src/secrets/token-sink.js';


let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'amsync-state-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('the password state file', () => {
  it('a save keeps what another run saved since this one read the file: only its own records and forgets are written over it', async () => {
    // A run that lost its writer lock (paused past a takeover) still saves what it applied; it
    // must not wipe the fingerprints the run that took over saved meanwhile (another service's too).
    const path = join(dir, 'state.json');
    const seed = await openPasswordState({ path, serviceUrl: 'http://a', keyFromEnv: 'k' });
    seed.record(1, 'fp-1');
    seed.record(2, 'fp-2');
    await seed.save();
    const slow = await openPasswordState({ path, serviceUrl: 'http://a', keyFromEnv: 'k' });
    const other = await openPasswordState({ path, serviceUrl: 'http://a', keyFromEnv: 'k' });
    other.record(3, 'fp-3-other');
    other.forget(2);
    await other.save();
    const elsewhere = await openPasswordState({ path, serviceUrl: 'http://b', keyFromEnv: 'k' });
    elsewhere.record(9, 'fp-b');
    await elsewhere.save();
    slow.record(4, 'fp-4-slow');
    slow.forget(1);
    await slow.save();
    const doc = JSON.parse(await readFile(path, 'utf8'));
    expect(doc.services['http://a'].sshUserPasswords).toEqual({ '3': 'fp-3-other', '4': 'fp-4-slow' });
    expect(doc.services['http://b'].sshUserPasswords).toEqual({ '9': 'fp-b' });
  });

  it('keeps fingerprints, never passwords, in a 0600 file with a generated 0600 key beside it', async () => {
    const path = join(dir, '.amsync', 'state.json');
    const state = await openPasswordState({ path, serviceUrl: 'http://127.0.0.1:1/' });
    expect(state.exists).toBe(false);
    state.record(7, fingerprint(state.key, new Secret('CANARY-hunter2')));
    await state.save();
    const text = await readFile(path, 'utf8');
    expect(text).not.toContain('CANARY-hunter2');
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect((await stat(`${path}.key`)).mode & 0o777).toBe(0o600);

    const again = await openPasswordState({ path, serviceUrl: 'http://127.0.0.1:1' });
    expect(again.exists).toBe(true);
    expect(again.applied.get('7')).toBe(fingerprint(again.key, new Secret('CANARY-hunter2')));
    expect(again.applied.get('7')).not.toBe(fingerprint(again.key, new Secret('other')));
  });

  it('keeps services apart', async () => {
    const path = join(dir, 'state.json');
    const a = await openPasswordState({ path, serviceUrl: 'http://a', keyFromEnv: 'k' });
    a.record(1, 'fp-a');
    await a.save();
    const b = await openPasswordState({ path, serviceUrl: 'http://b', keyFromEnv: 'k' });
    expect(b.applied.size).toBe(0);
  });

  it('uses AMSYNC_STATE_KEY when given, and writes no key file', async () => {
    const path = join(dir, 'state.json');
    const s = await openPasswordState({ path, serviceUrl: 'http://a', keyFromEnv: 'my-key' });
    s.record(1, 'x');
    await s.save();
    await expect(stat(`${path}.key`)).rejects.toThrow();
    expect(s.key.toString()).toBe('my-key');
  });

  it('refuses a state file whose key is lost, rather than re-setting every password', async () => {
    const path = join(dir, 'state.json');
    await writeFile(path, JSON.stringify({ version: 1, services: {} }));
    await expect(openPasswordState({ path, serviceUrl: 'http://a' })).rejects.toMatchObject({ code: 'state_key_missing' });
  });

  it('refuses a corrupt state file with a clear code', async () => {
    const path = join(dir, 'state.json');
    await writeFile(path, '{nope');
    await expect(openPasswordState({ path, serviceUrl: 'http://a', keyFromEnv: 'k' })).rejects.toMatchObject({ code: 'state_file_invalid' });
  });

  it('does not write when nothing changed', async () => {
    const path = join(dir, 'state.json');
    const s = await openPasswordState({ path, serviceUrl: 'http://a', keyFromEnv: 'k' });
    await s.save();
    await expect(stat(path)).rejects.toThrow();
  });
});

describe('the token sink', () => {
  it('writes each token to tokensDir/<name>, 0600, and only when it changed', async () => {
    const sink = new TokenSink(join(dir, 'tokens'));
    expect(await sink.write('billing', new Secret('tok-1'))).toBe(true);
    expect(await sink.write('billing', new Secret('tok-1'))).toBe(false);
    expect(await sink.write('billing', new Secret('tok-2'))).toBe(true);
    const path = join(dir, 'tokens', 'billing');
    expect(await readFile(path, 'utf8')).toBe('tok-2');
    expect((await stat(path)).mode & 0o777).toBe(0o600);
  });

  it('never lets a name escape the folder, and never maps two names to one file', () => {
    expect(safeFileName('../../etc/passwd')).toBe('..%2F..%2Fetc%2Fpasswd');
    expect(safeFileName('..')).toBe('%2E%2E');
    expect(safeFileName('a b/c')).toBe('a%20b%2Fc');
    expect(safeFileName('svc a')).not.toBe(safeFileName('svc_a'));
    expect(safeFileName('billing-integration')).toBe('billing-integration');
  });

  it('saves a generated key with the first state file, even when AMSYNC_STATE_KEY is empty', async () => {
    const path = join(dir, 'state.json');
    const first = await openPasswordState({ path, serviceUrl: 'http://a', keyFromEnv: '' });
    first.record(1, 'fp');
    await first.save();
    const second = await openPasswordState({ path, serviceUrl: 'http://a', keyFromEnv: '' });
    expect(second.applied.get('1')).toBe('fp');
    expect(second.key.equals(first.key)).toBe(true);
  });
});
