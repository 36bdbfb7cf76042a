import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkLocalInputs } from '../../../src/app/check-local-inputs.js';
import { Secret } from '../../../src/secrets/secret.js';

/**
 * Found by the chaos bad-input corpus (test/chaos): a token that cannot be sent or a token file
 * that cannot be read failed the run as an "incomplete listing" (exit 1), and a tokensDir that
 * is a file let the sync create apikeys whose tokens it then could not store. Each is now a
 * usage error (exit 64) before the first request, and no message shows a token.
 */

const TOKEN = 'CANARY-check-token-71ab';
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'amsync-check-inputs-'));
  await writeFile(join(dir, 'token'), `${TOKEN}\n`);
  await writeFile(join(dir, 'empty'), '\n');
  await writeFile(join(dir, 'spaced'), `${TOKEN} ${TOKEN}\n`);
  await writeFile(join(dir, 'a-file'), 'x');
  await mkdir(join(dir, 'tokens'));
  await symlink('loop-b', join(dir, 'loop-a'));
  await symlink('loop-a', join(dir, 'loop-b'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const usage = (fn: () => void) => {
  try {
    fn();
  } catch (error) {
    return error as { name: string; code: string; message: string };
  }
  throw new Error('expected a usage error');
};

describe('a bearer token that cannot be sent is a usage error before any request', () => {
  it('accepts a sendable AMSYNC_TOKEN (surrounding white space is trimmed) or a readable token file', () => {
    expect(() => checkLocalInputs({ token: new Secret(` ${TOKEN}\n`) })).not.toThrow();
    expect(() => checkLocalInputs({ tokenFile: join(dir, 'token') })).not.toThrow();
    // An unusable AMSYNC_TOKEN falls back to the file, as the client does.
    expect(() => checkLocalInputs({ token: new Secret('two words'), tokenFile: join(dir, 'token') })).not.toThrow();
  });

  it('refuses AMSYNC_TOKEN with white space inside or a character no header can carry, without showing it', () => {
    for (const bad of [`${TOKEN} extra`, `${TOKEN}é`, `${TOKEN}\r\nX-Injected: 1`]) {
      const error = usage(() => checkLocalInputs({ token: new Secret(bad) }));
      expect(error).toMatchObject({ name: 'UsageError', code: 'bad_token' });
      expect(error.message).not.toContain(TOKEN);
    }
  });

  it('refuses a token file that is missing, empty, a folder, a symlink loop, or holds two words', () => {
    const cases: [string, RegExp][] = [
      ['absent', /ENOENT/],
      ['empty', /empty/],
      ['tokens', /directory/],
      ['loop-a', /ELOOP/],
      ['spaced', /cannot be sent|one word/],
    ];
    for (const [name, why] of cases) {
      const error = usage(() => checkLocalInputs({ tokenFile: join(dir, name) }));
      expect(error).toMatchObject({ name: 'UsageError', code: 'token_file' });
      expect(error.message).toMatch(why);
      expect(error.message).not.toContain(TOKEN);
    }
  });
});

describe('a tokensDir that is not a folder is refused before any request (exit 1: LocalPathError, issue 27)', () => {
  it('accepts a folder, or one that does not exist yet', () => {
    expect(() => checkLocalInputs({ token: new Secret(TOKEN), tokensDir: join(dir, 'tokens') })).not.toThrow();
    expect(() => checkLocalInputs({ token: new Secret(TOKEN), tokensDir: join(dir, 'not-yet', 'tokens') })).not.toThrow();
  });

  it('refuses a file, or a path through a file', () => {
    expect(usage(() => checkLocalInputs({ token: new Secret(TOKEN), tokensDir: join(dir, 'a-file') }))).toMatchObject({ code: 'tokens_dir', message: expect.stringContaining('not a folder') });
    expect(usage(() => checkLocalInputs({ token: new Secret(TOKEN), tokensDir: join(dir, 'a-file', 'sub') }))).toMatchObject({ code: 'tokens_dir', message: expect.stringContaining('ENOTDIR') });
  });
});
