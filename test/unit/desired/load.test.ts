import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exitCodeFor, InvalidInputError } from '../../../src/errors.js';
import { loadDesired, readSecretFile } from '../../../src/desired/load.js';
import { limits } from '../../../src/yaml/limits.js';


let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'amsync-load-'));
  mkdirSync(join(dir, 'team', 'secrets'), { recursive: true });
  writeFileSync(join(dir, 'team', 'secrets', 'deploy'), 'from-a-file\n');
  writeFileSync(join(dir, 'team', 'access.yaml'), 'sshUsers:\n  - username: deploy\n    password: { file: secrets/deploy }\n');
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function loadError(path: string, env: Record<string, string> = {}): Promise<InvalidInputError> {
  const error = await loadDesired(path, env).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(InvalidInputError);
  expect(exitCodeFor(error)).toBe(65);
  return error as InvalidInputError;
}

describe('loadDesired reads the file, and only it touches the file system', () => {
  it('returns the state, its warnings and the sha256 of the bytes', async () => {
    const path = join(dir, 'team', 'access.yaml');
    const loaded = await loadDesired(path, {});
    expect(loaded.value.sshUsers[0]!.password!.reveal()).toBe('from-a-file');
    expect(loaded.warnings).toEqual([]);
    expect(loaded.fileHash).toBe(createHash('sha256').update(readFileSync(path)).digest('hex'));
  });

  it('resolves {file: PATH} from the desired file folder, whatever the working directory', async () => {
    const loaded = await loadDesired(join(dir, 'team', 'access.yaml'), {});
    expect(loaded.value.sshUsers[0]!.passwordRef).toEqual({ kind: 'file', path: join(dir, 'team', 'secrets', 'deploy') });
  });

  it('loads the committed example with its env variables set', async () => {
    const loaded = await loadDesired('examples/access.yaml', { DEPLOY_PASSWORD: 'x' });
    expect(loaded.value.sshUsers.map((u) => u.username)).toContain('deploy');
    expect(loaded.warnings).toEqual([]);
  });

  it('throws InvalidInputError with every error and warning', async () => {
    const path = join(dir, 'bad.yaml');
    writeFileSync(path, 'sshUsers:\n  - username: a\n    levl: n1\n    password: literal\n  - username: a\n');
    const error = await loadError(path);
    expect(error.code).toBe('desired_invalid');
    expect(error.message).toContain('2 errors');
    expect(error.diagnostics.map((d) => d.code)).toEqual(['unknown_key', 'duplicate_identity', 'plaintext_password']);
    expect(error.diagnostics[0]!.position).toEqual({ file: path, line: 3, col: 5 });
  });

  it('a missing file', async () => {
    const error = await loadError(join(dir, 'nope.yaml'));
    expect(error.code).toBe('desired_unreadable');
    expect(error.message).toContain('no such file');
  });

  it('a directory without a *.yaml or *.yml file (a folder of them is read: test/unit/desired/several-files.test.ts)', async () => {
    const error = await loadError(join(dir, 'team', 'secrets'));
    expect(error.message).toContain('holds no *.yaml or *.yml file');
    expect(error.diagnostics[0]!.code).toBe('no_desired_files');
  });

  it('a file over 10 MB is refused without being read', async () => {
    const path = join(dir, 'huge.yaml');
    writeFileSync(path, '');
    truncateSync(path, limits.maxFileBytes + 1);
    const error = await loadError(path);
    expect(error.diagnostics[0]!.code).toBe('file_too_large');
  });

  it('a non-UTF-8 file', async () => {
    const path = join(dir, 'latin1.yaml');
    writeFileSync(path, Buffer.from('sshUsers:\n  - username: j\xf6rg\n', 'latin1'));
    expect((await loadError(path)).diagnostics[0]).toMatchObject({ code: 'not_utf8', position: { line: 2, col: 16 } });
  });
});

describe('readSecretFile reads a password file and explains why it cannot', () => {
  it('reads the content as it is (the trailing newline is dropped later)', () => {
    expect(readSecretFile(join(dir, 'team', 'secrets', 'deploy'))).toBe('from-a-file\n');
  });

  it('refuses a directory, a file too large to be a password, and non-UTF-8 content', () => {
    expect(String(readSecretFile(join(dir, 'team')))).toContain('directory');
    const big = join(dir, 'big-secret');
    writeFileSync(big, 'x'.repeat(limits.maxSecretFileBytes + 1));
    expect(String(readSecretFile(big))).toContain('larger than');
    const binary = join(dir, 'binary-secret');
    writeFileSync(binary, Buffer.from([0xff, 0xfe, 0x00]));
    expect(String(readSecretFile(binary))).toContain('not UTF-8');
  });

  it('gives an Error, never throws, for a missing file', () => {
    const result = readSecretFile(join(dir, 'missing'));
    expect(result).toBeInstanceOf(Error);
    expect((result as NodeJS.ErrnoException).code).toBe('ENOENT');
  });
});
