import { describe, expect, it } from 'vitest';
import { desiredFileSchema } from '../../../src/desired/desired-schema.js';
import { formatPath } from '../../../src/yaml/doc-path.js';
import { closest, didYouMean, editDistance } from '../../../src/yaml/suggest.js';
import { keysAt } from '../../../src/yaml/zod-issues.js';

describe('"did you mean" suggests only likely typos', () => {
  it('counts edits, a swap of neighbours as one', () => {
    expect(editDistance('level', 'levl')).toBe(1);
    expect(editDistance('level', 'lveel')).toBe(1);
    expect(editDistance('', 'abc')).toBe(3);
  });

  it('case and separators are the closest slips', () => {
    expect(closest('SSH_USERS', ['sshUsers', 'apikeys'])).toBe('sshUsers');
    expect(closest('api-keys', ['sshUsers', 'apikeys'])).toBe('apikeys');
  });

  it('says nothing when nothing is close', () => {
    expect(closest('owners', ['sshUsers', 'apikeys', 'prune', 'protect'])).toBeUndefined();
    expect(didYouMean('x', ['id'])).toBe('');
    expect(didYouMean('pasword', ['password', 'level'])).toBe(" — did you mean 'password'?");
  });
});

describe('paths and the keys the schema allows', () => {
  it('formats paths the way the file is read', () => {
    expect(formatPath(['sshUsers', 1, 'levl'])).toBe('sshUsers[1].levl');
    expect(formatPath(['protect', 'sshUsers', 0])).toBe('protect.sshUsers[0]');
    expect(formatPath(['odd key'])).toBe('["odd key"]');
    expect(formatPath([])).toBe('');
  });

  it('knows the keys at each level of the desired-state schema', () => {
    expect(keysAt(desiredFileSchema(), [])).toEqual(['sshUsers', 'apikeys', 'prune', 'protect', 'policy', 'targets', 'ignore']);
    expect(keysAt(desiredFileSchema(), ['sshUsers', 3])).toEqual(['username', 'id', 'level', 'password', 'ensure', 'targets', 'renamedFrom', 'ignore', 'mode', 'expires', 'ttl', 'rotate']);
    expect(keysAt(desiredFileSchema(), ['apikeys', 0])).toEqual(['name', 'id', 'superuser', 'roles', 'ensure', 'targets', 'renamedFrom', 'ignore', 'mode', 'expires', 'ttl', 'rotate']);
    expect(keysAt(desiredFileSchema(), ['sshUsers', 0, 'password'])).toEqual(['env', 'file', 'generate']);
    expect(keysAt(desiredFileSchema(), ['protect'])).toEqual(['sshUsers', 'apikeys']);
  });
});
