import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CredentialError } from '../../../src/api/index.js';
import { checkCredentials } from '../../../src/app/check-credentials.js';
import { exitCodeFor, UsageError } from '../../../src/errors.js';
import { Secret } from '../../../src/secrets/secret.js';

/** One way to log in, checked before anything is sent (DESIGN.md §4): exit 64 otherwise. */

const KEY = 'CANARY-integrator-key-3c1f';
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'amsync-check-credentials-'));
  await writeFile(join(dir, 'key'), `${KEY}\n`);
  await writeFile(join(dir, 'empty'), '\n');
  await writeFile(join(dir, 'spaced'), `${KEY} ${KEY}\n`);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function usage(fn: () => void): UsageError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    expect(exitCodeFor(error)).toBe(64);
    expect((error as Error).message).not.toContain(KEY);
    return error as UsageError;
  }
  throw new Error('expected a usage error');
}

describe('credentials', () => {
  it('an access token and an integrator key together: exit 64 naming both', () => {
    const error = usage(() => checkCredentials({ token: new Secret('t'), refreshTokenFile: join(dir, 'key') }));
    expect(error.code).toBe('conflicting_credentials');
    expect(error.message).toContain('AMSYNC_TOKEN');
    expect(error.message).toContain('AMSYNC_REFRESH_TOKEN_FILE / --refresh-token-file');
    const again = usage(() => checkCredentials({ tokenFile: 'tok', refreshToken: new Secret(KEY) }));
    expect(again.message).toContain('AMSYNC_TOKEN_FILE / --token-file');
    expect(again.message).toContain('AMSYNC_REFRESH_TOKEN)');
  });

  it('the integrator key from the environment and from a file together: exit 64', () => {
    expect(usage(() => checkCredentials({ refreshToken: new Secret(KEY), refreshTokenFile: join(dir, 'key') })).code).toBe('conflicting_credentials');
  });

  it('none at all: exit 64 saying where a token or key goes', () => {
    const error = usage(() => checkCredentials({}));
    expect(error.code).toBe('no_token');
    expect(error.message).toContain('--refresh-token-file');
  });

  it('an integrator key that cannot be sent, or a key file that cannot be used: exit 64', () => {
    expect(usage(() => checkCredentials({ refreshToken: new Secret(`${KEY} x`) })).code).toBe('bad_token');
    expect(usage(() => checkCredentials({ refreshTokenFile: join(dir, 'missing') })).message).toMatch(/ENOENT/);
    expect(usage(() => checkCredentials({ refreshTokenFile: join(dir, 'empty') })).message).toMatch(/it is empty/);
    expect(usage(() => checkCredentials({ refreshTokenFile: join(dir, 'spaced') })).message).toMatch(/one word/);
    expect(usage(() => checkCredentials({ refreshTokenFile: dir })).message).toMatch(/directory/);
  });

  it('one credential of either kind passes', () => {
    expect(() => checkCredentials({ token: new Secret('t') })).not.toThrow();
    expect(() => checkCredentials({ token: new Secret('t'), tokenFile: 'f' })).not.toThrow();
    expect(() => checkCredentials({ refreshTokenFile: join(dir, 'key') })).not.toThrow();
    expect(() => checkCredentials({ refreshToken: new Secret(KEY) })).not.toThrow();
  });

  it('a key file in a folder amsync cannot write: exit 1 naming the file, the setting and the fix, before anything is sent', () => {
    const tried: string[] = [];
    const readOnly = (probeDir: string, name: string) => {
      tried.push(join(probeDir, name));
      throw Object.assign(new Error('read-only file system'), { code: 'EROFS' });
    };
    const file = join(dir, 'key');
    let error: unknown;
    try {
      checkCredentials({ refreshTokenFile: file }, readOnly);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(CredentialError);
    expect(exitCodeFor(error)).toBe(1);
    expect(error).toMatchObject({ code: 'integrator_key_not_writable' });
    const message = (error as Error).message;
    expect(message).toContain(`the integrator key file ${file} cannot be written back (EROFS creating a file in ${dir})`);
    expect(message).toContain('AMSYNC_REFRESH_TOKEN_FILE / --refresh-token-file');
    expect(message).toContain('nothing was sent');
    expect(message).not.toContain(KEY);
    expect(message.split('\n')).toHaveLength(1);
    // The probe is a new file beside the key, as a write-back makes.
    expect(tried).toHaveLength(1);
    expect(tried[0]).toMatch(new RegExp(`^${dir}/\\.key\\.[0-9a-f]{12}\\.probe$`));
  });

  it('a fleet target\'s key file: its messages name the target\'s integratorKey.file, not AMSYNC_REFRESH_TOKEN_FILE (issue 27, deliverable 6)', () => {
    const readOnly = () => {
      throw Object.assign(new Error('read-only file system'), { code: 'EROFS' });
    };
    const keyFile = 'integratorKey.file of target sp-1 in targets.yaml';
    const unwritable = (() => {
      try {
        checkCredentials({ refreshTokenFile: join(dir, 'key') }, readOnly, { keyFile });
      } catch (e) {
        return e as Error;
      }
      return undefined;
    })();
    expect(unwritable).toMatchObject({ code: 'integrator_key_not_writable' });
    expect(unwritable!.message).toContain(keyFile);
    expect(unwritable!.message).not.toContain('AMSYNC_REFRESH_TOKEN_FILE');
    const empty = usage(() => checkCredentials({ refreshTokenFile: join(dir, 'empty') }, undefined, { keyFile }));
    expect(empty.message).toContain(keyFile);
    expect(empty.message).not.toContain('AMSYNC_REFRESH_TOKEN_FILE');
  });

  it('a key file in a writable folder: the probe leaves nothing behind', async () => {
    const { readdir } = await import('node:fs/promises');
    const before = await readdir(dir);
    expect(() => checkCredentials({ refreshTokenFile: join(dir, 'key') })).not.toThrow();
    expect(await readdir(dir)).toEqual(before);
  });
});

describe("the integrator key's Secret is not the token sink's", () => {
  it('refuses integratorKeySecret in the Secret kubernetesSecret writes tokens and passwords to (an apikey named integrator-key would overwrite it): exit 64', () => {
    const error = usage(() => checkCredentials({ integratorKeySecret: 'amsync/amsync-tokens', kubernetesSecret: 'amsync/amsync-tokens' }));
    expect(error.message).toContain('keep the key in a Secret of its own');
    usage(() => checkCredentials({ integratorKeySecret: 'amsync/amsync-tokens/ik', kubernetesSecret: 'amsync/amsync-tokens' }));
  });

  it('accepts them in two Secrets, or the same name in two namespaces', () => {
    expect(() => checkCredentials({ integratorKeySecret: 'amsync/amsync-key', kubernetesSecret: 'amsync/amsync-tokens' })).not.toThrow();
    expect(() => checkCredentials({ integratorKeySecret: 'other/amsync-tokens', kubernetesSecret: 'amsync/amsync-tokens' })).not.toThrow();
  });
});
