import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { emptyDesiredState } from '../../../src/model/desired-state.js';
import { isSecret } from '../../../src/secrets/secret.js';
import { parseDesired } from '../../../src/desired/parse-desired.js';
import { secretFilesOf } from '../../../src/desired/secret-files.js';
import { baseDir, fakeSecretFiles, parse } from './parse-helper.js';


describe('a valid file becomes the DesiredState model', () => {
  it('fills the defaults: level n1, superuser false, roles [], ensure present, prune off, protect []', () => {
    const { value, errors, warnings } = parse('sshUsers:\n  - username: deploy\napikeys:\n  - name: ci\n');
    expect(errors).toEqual([]);
    expect(warnings).toEqual([]);
    expect(value).toEqual({
      sshUsers: [{ username: 'deploy', level: 'n1', ensure: 'present', source: { file: 'access.yaml', line: 2, col: 5 } }],
      apikeys: [{ name: 'ci', superuser: false, roles: [], ensure: 'present', source: { file: 'access.yaml', line: 4, col: 5 } }],
      prune: { sshUsers: false, apikeys: false },
      protect: { sshUsers: [], apikeys: [] },
    });
  });

  it('keeps every declared field', () => {
    const { value } = parse(
      [
        'sshUsers:',
        '  - { username: deploy, id: 7, level: n1, password: { env: DEPLOY_PASSWORD } }',
        '  - { username: gone, ensure: absent }',
        'apikeys:',
        '  - { name: billing, id: 42, superuser: true, roles: [7, 3, 7], ensure: present }',
        'prune: { sshUsers: true, apikeys: false }',
        'protect: { sshUsers: [root, "admin*"], apikeys: ["vendor-*"] }',
      ].join('\n'),
    );
    expect(value?.sshUsers[0]).toMatchObject({ username: 'deploy', id: 7, level: 'n1', ensure: 'present', passwordRef: { kind: 'env', name: 'DEPLOY_PASSWORD' } });
    expect(value?.sshUsers[1]).toEqual({ username: 'gone', level: 'n1', ensure: 'absent', source: { file: 'access.yaml', line: 3, col: 5 } });
    // Roles are a set: sorted, unique.
    expect(value?.apikeys[0]).toMatchObject({ name: 'billing', id: 42, superuser: true, roles: [3, 7], ensure: 'present' });
    expect(value?.prune).toEqual({ sshUsers: true, apikeys: false });
    expect(value?.protect).toEqual({ sshUsers: ['root', 'admin*'], apikeys: ['vendor-*'] });
  });

  it('an empty file is a valid, empty desired state', () => {
    expect(parse('')).toEqual({ value: emptyDesiredState, sections: {}, errors: [], warnings: [] });
  });

  it('a file of comments only, or with a lone document marker, is empty too', () => {
    expect(parse('# nothing yet\n').value).toEqual(emptyDesiredState);
    expect(parse('---\n# nothing yet\n').value).toEqual(emptyDesiredState);
    expect(parse('---\nsshUsers: []\n...\n').value).toEqual(emptyDesiredState);
  });

  it('keys left empty (everything below commented out) mean their defaults', () => {
    expect(parse('sshUsers:\napikeys:\nprune:\nprotect:\n  sshUsers:\n').value).toEqual(emptyDesiredState);
  });

  it('a UTF-8 username survives', () => {
    expect(parse('sshUsers:\n  - username: jörg\n').value?.sshUsers[0]?.username).toBe('jörg');
  });
});

describe('passwords are Secrets with their reference', () => {
  it('{env: NAME} reads the variable', () => {
    const user = parse('sshUsers:\n  - username: a\n    password: { env: DEPLOY_PASSWORD }\n').value!.sshUsers[0]!;
    expect(isSecret(user.password)).toBe(true);
    expect(user.password!.reveal()).toBe('env-password');
    expect(user.passwordRef).toEqual({ kind: 'env', name: 'DEPLOY_PASSWORD' });
  });

  it('{file: PATH} is relative to the desired file folder, and one trailing newline is dropped', () => {
    const read = fakeSecretFiles({ 'secrets/ok': 'line1\n\n', 'crlf': 'pw\r\n' });
    const result = parseDesired('sshUsers:\n  - username: a\n    password: { file: secrets/ok }\n  - username: b\n    password: { file: ./crlf }\n', {
      file: 'access.yaml',
      env: {},
      readSecretFile: read,
      baseDir,
    });
    expect(result.errors).toEqual([]);
    expect(result.value!.sshUsers[0]!.password!.reveal()).toBe('line1\n');
    expect(result.value!.sshUsers[1]!.password!.reveal()).toBe('pw');
    expect(result.value!.sshUsers[0]!.passwordRef).toEqual({ kind: 'file', path: resolve(baseDir, 'secrets/ok') });
  });

  it('without baseDir, relative files start from the folder of `file`', () => {
    const seen: string[] = [];
    parseDesired('sshUsers:\n  - username: a\n    password: { file: pw.txt }\n', {
      file: 'deploy/access.yaml',
      env: {},
      readSecretFile: (p) => {
        seen.push(p);
        return 'x';
      },
    });
    expect(seen).toEqual([resolve('deploy', 'pw.txt')]);
  });

  it('a literal password is accepted with a warning', () => {
    const { value, warnings } = parse('sshUsers:\n  - username: a\n    password: literal-pw\n');
    expect(value!.sshUsers[0]!.password!.reveal()).toBe('literal-pw');
    expect(value!.sshUsers[0]!.passwordRef).toEqual({ kind: 'literal' });
    expect(warnings.map((w) => w.code)).toEqual(['plaintext_password']);
  });

  it('an absent user resolves no secret at all', () => {
    let reads = 0;
    const result = parseDesired('sshUsers:\n  - username: a\n    ensure: absent\n    password: { file: nowhere }\n', {
      file: 'access.yaml',
      env: {},
      readSecretFile: () => {
        reads += 1;
        return new Error('unreadable');
      },
    });
    expect(reads).toBe(0);
    expect(result.value!.sshUsers[0]!.password).toBeUndefined();
  });

  it("in 'warn' mode (validate) a missing secret is a warning and the user has no password", () => {
    const result = parseDesired('sshUsers:\n  - username: a\n    password: { env: NOT_SET }\n', {
      file: 'access.yaml',
      env: {},
      readSecretFile: fakeSecretFiles(),
      secrets: 'warn',
    });
    expect(result.errors).toEqual([]);
    expect(result.warnings.map((w) => [w.code, w.severity])).toEqual([['secret_env_unset', 'warning']]);
    expect(result.value!.sshUsers[0]!.password).toBeUndefined();
  });
});

describe('secretFilesOf lists the secret files to watch', () => {
  it('gives absolute paths, sorted and unique, of file references only', () => {
    const { value } = parse(
      [
        'sshUsers:',
        '  - { username: a, password: { file: secrets/ok } }',
        '  - { username: b, password: { file: secrets/ok } }',
        '  - { username: c, password: { env: DEPLOY_PASSWORD } }',
        '  - { username: d, password: literal }',
        '  - { username: e }',
      ].join('\n'),
    );
    expect(secretFilesOf(value!)).toEqual([resolve(baseDir, 'secrets/ok')]);
  });
});

describe('secrets: optional (plan --secrets optional)', () => {
  const text = [
    'sshUsers:',
    '  - { username: a, password: { env: UNSET_PASSWORD } }',
    '  - { username: b, password: { env: EMPTY_PASSWORD } }',
    '  - { username: c, password: { file: secrets/missing } }',
    '  - { username: d, password: { file: secrets/empty } }',
    '  - { username: e, password: { env: DEPLOY_PASSWORD } }',
    '  - { username: f, password: { env: UNSET_PASSWORD }, ensure: absent }',
    '',
  ].join('\n');
  const optional = () => parseDesired(text, { file: 'access.yaml', env: { DEPLOY_PASSWORD: 'env-password', EMPTY_PASSWORD: '' }, readSecretFile: fakeSecretFiles(), baseDir, secrets: 'optional' });

  it('keeps the reference of a password it cannot read, with how it is written, and reports nothing per item', () => {
    const { value, errors, warnings } = optional();
    expect(errors).toEqual([]);
    // Only the warning any such file has: no per-item word about a secret.
    expect(warnings.map((w) => w.code)).toEqual(['ignored_on_absent']);
    const users = value!.sshUsers;
    expect(users.map((u) => u.passwordUnavailable)).toEqual(['env UNSET_PASSWORD', 'env EMPTY_PASSWORD', 'file secrets/missing', 'file secrets/empty', undefined, undefined]);
    expect(users.slice(0, 4).every((u) => u.password === undefined)).toBe(true);
    expect(users[2]!.passwordRef).toEqual({ kind: 'file', path: resolve(baseDir, 'secrets/missing') });
    expect(isSecret(users[4]!.password)).toBe(true);
    expect(users[5]).not.toHaveProperty('passwordRef');
  });

  it('is an error as before when required (the default), and a literal empty password stays an error', () => {
    expect(parse(text).errors.map((e) => e.code)).toEqual(['secret_env_unset', 'secret_env_empty', 'secret_file_unreadable', 'secret_file_empty']);
    const literal = parseDesired("sshUsers:\n  - { username: a, password: '' }\n", { file: 'access.yaml', env: {}, readSecretFile: fakeSecretFiles(), baseDir, secrets: 'optional' });
    expect(literal.errors.map((e) => e.code)).toEqual(['empty_password']);
  });
});
