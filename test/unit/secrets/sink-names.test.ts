import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../../src/errors.js';
import { KubeSecretSink, passwordDataKey, secretDataKey } from '../../../src/kube/index.js';
import type { DesiredState } from '../../../src/model/index.js';
import { Secret, TokenSink, type SecretSink } from '../../../src/secrets/index.js';
import { checkSinkNames, sinkNameFindings } from '../../../src/secrets/index.js';

// An item whose secret the sink could never store under its name (a file name past NAME_MAX, a
// data key past 253 characters) is refused before anything is sent: its password would be set
// on the service and lost, and set again on every run.

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'amsync-sink-names-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A Secret sink that must never call the API server: the check is pure. */
const kube = (): KubeSecretSink =>
  new KubeSecretSink({
    ref: { namespace: 'amsync', name: 'amsync-tokens' },
    api: () => {
      throw new Error('the API server was called');
    },
  });

describe('the Kubernetes Secret sink: a data key of at most 253 characters', () => {
  // ' ' is `_20` (three characters), `é` two bytes (six): the key's length, not the name's, counts.
  const at253 = [`${' '.repeat(84)}a`, `${'é'.repeat(42)}a`, 'k'.repeat(253)];
  const at254 = [`${' '.repeat(84)}ab`, `${'é'.repeat(42)}ab`, 'k'.repeat(254)];

  it('takes an apikey whose data key is exactly 253 characters and refuses one of 254, as its write does', async () => {
    const sink = kube();
    for (const name of at253) {
      expect(secretDataKey(name)).toHaveLength(253);
      expect(sink.nameProblem(name), JSON.stringify(name)).toBeUndefined();
    }
    for (const name of at254) {
      expect(secretDataKey(name)).toHaveLength(254);
      expect(sink.nameProblem(name)).toBe('its data key would be 254 characters, past the 253 Kubernetes allows (each byte of the name other than a letter, a digit, - or . takes three, _XX)');
      // The write refuses it for the same reason, without a call to the API server.
      await expect(sink.write(name, new Secret('tok-never-1'))).rejects.toThrow(/its data key would be 254 characters/);
    }
  });

  it('counts password__ in a generated password\'s data key', async () => {
    const passwords = kube().passwordSink();
    const fits = `${' '.repeat(81)}`; // password__ + 243 = 253
    expect(passwordDataKey(fits)).toHaveLength(253);
    expect(passwords.nameProblem(fits)).toBeUndefined();
    expect(passwordDataKey(`${fits}a`)).toHaveLength(254);
    expect(passwords.nameProblem(`${fits}a`)).toMatch(/^its data key would be 254 characters/);
    await expect(passwords.write(`${fits}a`, new Secret('pw-never-1'))).rejects.toThrow(/its data key would be 254 characters/);
  });
});

describe('the tokensDir sink: a file name of at most 255 bytes (NAME_MAX)', () => {
  // `%XX` for every byte other than a letter, a digit, `.`, `-` or `_`: `é` (two bytes) is six.
  const at255 = ['f'.repeat(255), `${'é'.repeat(42)}abc`, `${' '.repeat(85)}`];
  const at256 = ['f'.repeat(256), `${'é'.repeat(42)}abcd`, `${' '.repeat(85)}a`];

  it('takes a name whose file name is exactly 255 bytes (and writes it, its temporary file too), and refuses one of 256 before touching the folder', async () => {
    const sink = new TokenSink(join(dir, 'tokens'));
    for (const [i, name] of at255.entries()) {
      expect(sink.nameProblem(name), JSON.stringify(name)).toBeUndefined();
      expect(await sink.write(name, new Secret(`tok-255-${i}`))).toBe(true);
      expect(await sink.read(name)).toBe(`tok-255-${i}`);
    }
    const files = await readdir(join(dir, 'tokens'));
    expect(files.map((f) => Buffer.byteLength(f))).toEqual([255, 255, 255]);
    for (const name of at256) {
      expect(sink.nameProblem(name)).toBe('its file name would be 256 bytes, past the 255 a file name may have (NAME_MAX; each byte of the name other than a letter, a digit, ., - or _ takes three, %XX)');
      await expect(sink.write(name, new Secret('tok-never-2'))).rejects.toThrow(/its file name would be 256 bytes/);
    }
    expect(await readdir(join(dir, 'tokens'))).toHaveLength(3);
  });

  it('agrees with the file system: a 256-byte name is ENAMETOOLONG there', async () => {
    await expect(writeFile(join(dir, 'x'.repeat(256)), '')).rejects.toMatchObject({ code: 'ENAMETOOLONG' });
    await writeFile(join(dir, 'x'.repeat(255)), 'fits');
    expect(await readFile(join(dir, 'x'.repeat(255)), 'utf8')).toBe('fits');
  });

  it('refuses a path past PATH_MAX too (a deep tokensDir)', () => {
    const deep = new TokenSink(`/${'d'.repeat(250)}`.repeat(17));
    expect(deep.nameProblem('k')).toMatch(/^its path in \/d+.* would be \d+ bytes, past the 4095 a path may have \(PATH_MAX\)$/);
  });

  it('the password sink (tokensDir/passwords~) has the same limit', () => {
    const passwords = new TokenSink(join(dir, 'tokens')).passwordSink();
    expect(passwords.nameProblem('p'.repeat(255))).toBeUndefined();
    expect(passwords.nameProblem('p'.repeat(256))).toMatch(/^its file name would be 256 bytes/);
  });
});

describe('sinkNameFindings / checkSinkNames: the declared items refused before anything is sent', () => {
  const long = 'x y/'.repeat(38); // 152 characters, 76 of them escaped: a 304-character key and file name
  const at = (line: number) => ({ file: 'access.yaml', line, col: 5 });
  const desired = {
    sshUsers: [
      { username: long, level: 'n1', ensure: 'present', passwordGenerated: { length: 32 }, source: at(2) },
      { username: 'fine', level: 'n1', ensure: 'present', passwordGenerated: { length: 32 }, source: at(4) },
      // No generated password: nothing of it goes to the sink.
      { username: `${long}-set`, level: 'n1', ensure: 'present', source: at(6) },
      { username: `${long}-gone`, level: 'n1', ensure: 'absent', passwordGenerated: { length: 32 }, source: at(8) },
    ],
    apikeys: [
      { name: long, ensure: 'present', roles: [], superuser: false, source: at(11) },
      { name: 'ok', ensure: 'present', roles: [], superuser: false, source: at(13) },
      { name: `${long}-gone`, ensure: 'absent', roles: [], superuser: false, source: at(15) },
    ],
  } as unknown as DesiredState;

  it('names each item, the sink and why, at the item, for both sinks', () => {
    for (const sink of [new TokenSink('/var/lib/amsync/tokens'), kube()] as SecretSink[]) {
      const found = sinkNameFindings(desired, sink);
      expect(found.map((d) => [d.code, d.severity, d.path, d.position?.line])).toEqual([
        ['secret_sink_name', 'error', 'sshUsers[0].username', 2],
        ['secret_sink_name', 'error', 'apikeys[0].name', 11],
      ]);
      const passwords = sink.passwordSink!().describe;
      expect(found[0]!.message).toBe(`SSH user "${long}": its generated password cannot be stored in the password sink, ${passwords}: ${sink.passwordSink!().nameProblem(long)!}; shorten the username`);
      expect(found[1]!.message).toBe(`apikey "${long}": its token cannot be stored in the token sink, ${sink.describe}: ${sink.nameProblem(long)!}; shorten the name`);
    }
    expect(sinkNameFindings(desired, new TokenSink('/t'))[0]!.message).toContain('tokensDir /t/passwords~: its file name would be 304 bytes');
    expect(sinkNameFindings(desired, kube())[0]!.message).toContain('the Secret amsync/amsync-tokens: its data key would be 314 characters');
  });

  it('throws InvalidInputError (exit 65) with them; nothing without a sink or without such an item', () => {
    let thrown: unknown;
    try {
      checkSinkNames(desired, kube());
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(InvalidInputError);
    expect((thrown as InvalidInputError).message).toBe('the secret of 2 declared items cannot be stored in the Secret amsync/amsync-tokens under its name; nothing was sent');
    expect((thrown as InvalidInputError).diagnostics).toHaveLength(2);
    expect(() => checkSinkNames(desired, undefined)).not.toThrow();
    expect(() => checkSinkNames({ ...desired, sshUsers: desired.sshUsers.slice(1), apikeys: desired.apikeys.slice(1) }, kube())).not.toThrow();
  });
});
