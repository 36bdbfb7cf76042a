import { describe, expect, it } from 'vitest';
import { registerSecret } from '../../../src/secrets/known-secrets.js';
import { scrubbedJson } from '../../../src/secrets/scrubbed-json.js';
import { Secret } from '../../../src/secrets/secret.js';
import { forms } from '../../helpers/encodings.js';


describe('JSON that leaves amsync holds no known secret and is still JSON', () => {
  const canaries = ['json-"canary"-1', 'json-\\canary\\-2', 'json-çanary-ß-3'];
  for (const canary of canaries) registerSecret(canary);

  it('in strings, in object keys, escaped inside a string, or inside a Secret', () => {
    const text = scrubbedJson({
      plain: canaries[0],
      [canaries[1]!]: 'a key',
      nested: [{ deep: `x ${canaries[2]!} y` }],
      quoted: JSON.stringify({ inner: canaries[1] }),
      secret: new Secret('json-wrapped-canary-4'),
    });
    for (const form of forms([...canaries, 'json-wrapped-canary-4'])) expect(text).not.toContain(form);
    expect(() => JSON.parse(text)).not.toThrow();
    expect(text).not.toContain('\n');
  });

  it('a short secret that equals text amsync wrote around the strings (`null`, an id) leaves a parseable line', () => {
    registerSecret('null');
    registerSecret('4242');
    const text = scrubbedJson({ id: 4242, error: null, key: 'a null user 4242' });
    expect(JSON.parse(text)).toEqual({ id: 4242, error: null, key: 'a [redacted] user [redacted]' });
  });
});
