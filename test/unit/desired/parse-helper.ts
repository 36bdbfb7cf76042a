import { relative, resolve } from 'node:path';
import { parseDesired, type ParseDesiredResult } from '../../../src/desired/parse-desired.js';

/** Folder the fake secret files live in; computed, never a path of this machine in a file. */
export const baseDir = resolve('fixture-base');

/** A fake secret-file reader: secrets/ok holds a password, secrets/empty a bare newline. */
export function fakeSecretFiles(files: Record<string, string> = { 'secrets/ok': 'file-password\n', 'secrets/empty': '\n' }) {
  return (absPath: string): string | Error => {
    const rel = relative(baseDir, absPath).split('\\').join('/');
    const content = files[rel];
    return content ?? Object.assign(new Error(`ENOENT: no such file or directory, open '${absPath}'`), { code: 'ENOENT' });
  };
}

export const testEnv = { DEPLOY_PASSWORD: 'env-password', EMPTY_PASSWORD: '' };

export function parse(text: string, env: Record<string, string | undefined> = testEnv): ParseDesiredResult {
  return parseDesired(text, { file: 'access.yaml', env, readSecretFile: fakeSecretFiles(), baseDir });
}
