import { describe, expect, it } from 'vitest';
import { maxSecretKeyLength, passwordDataKey, secretDataKey, secretDataKeyName } from '../../../src/kube/index.js';

/** As the API server checks a Secret's data key (IsConfigMapKey). */
const validKey = (key: string): boolean => /^[-._a-zA-Z0-9]+$/.test(key) && key.length <= maxSecretKeyLength && key !== '.' && !key.startsWith('..');

describe('secretDataKey: an item name as a Secret data key', () => {
  it('keeps letters, digits, - and . as they are', () => {
    expect(secretDataKey('ci-deploy')).toBe('ci-deploy');
    expect(secretDataKey('Grafana.v2')).toBe('Grafana.v2');
  });

  it('escapes every other byte as _XX, _ itself included', () => {
    expect(secretDataKey('CI deploy')).toBe('CI_20deploy');
    expect(secretDataKey('ci_deploy')).toBe('ci_5Fdeploy');
    expect(secretDataKey('a/b@c')).toBe('a_2Fb_40c');
    expect(secretDataKey('Zähler')).toBe('Z_C3_A4hler');
  });

  it('escapes the leading dot of ., .. and ..x, and gives the empty name a key', () => {
    expect(secretDataKey('.')).toBe('_2E');
    expect(secretDataKey('..')).toBe('_2E.');
    expect(secretDataKey('..hidden')).toBe('_2E.hidden');
    expect(secretDataKey('.env')).toBe('.env');
    expect(secretDataKey('')).toBe('_');
  });

  it('never gives two names one key, and every key is valid and reads back as its name', () => {
    // Names built to collide under a lossy mapping: the escape written out, the escaped byte, dots.
    const names = ['a b', 'a_20b', 'a_b', 'a__b', 'a-b', 'a.b', 'a b', '_', '', '.', '..', '_2E', '_2E.', '..x', '.x', 'x..', 'é', '_C3_A9', 'e\u0301', 'CI deploy', 'CI_deploy', 'ci deploy '];
    for (let code = 0; code < 256; code += 1) names.push(`k${String.fromCharCode(code)}`);
    const keys = names.map(secretDataKey);
    expect(new Set(keys).size).toBe(new Set(names).size);
    for (const [i, key] of keys.entries()) {
      expect(validKey(key), JSON.stringify(key)).toBe(true);
      expect(secretDataKeyName(key)).toBe(names[i]);
    }
  });

  it('reads no name back from a key it never makes', () => {
    expect(secretDataKeyName('a_2')).toBeUndefined();
    expect(secretDataKeyName('a_zz')).toBeUndefined();
    expect(secretDataKeyName('a_41')).toBeUndefined(); // `A` would be kept, never escaped
  });
});

describe('passwordDataKey: a generated password\'s data key', () => {
  it('is password__ and the username\'s data key, valid, and read back as no item name', () => {
    expect(passwordDataKey('alice')).toBe('password__alice');
    expect(passwordDataKey('a b')).toBe('password__a_20b');
    expect(passwordDataKey('..')).toBe('password___2E.');
    for (const name of ['alice', 'a b', '..', '', 'x_y']) {
      expect(validKey(passwordDataKey(name))).toBe(true);
      expect(secretDataKeyName(passwordDataKey(name))).toBeUndefined();
    }
  });

  it('never equals an apikey\'s data key, whatever the names (no apikey key holds __)', () => {
    const names = ['alice', 'password', 'password__alice', 'password_alice', 'password__', '_', '__', 'a_5F', 'passwordé', '', '.', 'x y'];
    const apikeys = new Set(names.map(secretDataKey));
    for (const name of names) expect(apikeys.has(passwordDataKey(name))).toBe(false);
    for (const key of apikeys) expect(key).not.toContain('__');
    expect(new Set(names.map(passwordDataKey)).size).toBe(names.length);
  });
});
