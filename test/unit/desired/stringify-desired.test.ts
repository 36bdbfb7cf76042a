import { describe, expect, it } from 'vitest';
import type { DesiredState } from '../../../src/model/index.js';
import { limits } from '../../../src/yaml/index.js';
import { parseDesired, stringifyDesired, stringifyDesiredChunks } from '../../../src/desired/index.js';
import { desired, key, user } from '../../helpers/plan-fixtures.js';

const parse = (text: string, maxBytes?: number) =>
  parseDesired(text, { file: 'out.yaml', env: {}, readSecretFile: () => new Error('none'), ...(maxBytes === undefined ? {} : { maxBytes }) });

describe('the desired state written as YAML, line by line', () => {
  it('writes names plain where every reader takes them as strings, and quotes the rest', () => {
    const names = ['deploy', 'bench-user-1', 'true', 'No', 'null', '123', '- not: a list', 'a: b', "it's \"q\"", 'back\\slash', 'ünï', 'line\nbreak', 'tab\there', '#hash', 'admin*'];
    const state = desired({ sshUsers: names.map((n) => user(n)), apikeys: names.map((n) => key(n)) });
    const text = stringifyDesired(state, { omitDefaults: true });
    expect(text).toContain('  - username: deploy\n');
    expect(text).toContain('  - username: "true"\n');
    expect(text).toContain('  - username: "No"\n');
    expect(text).toContain('  - name: "123"\n');
    expect(text).toContain('  - username: "- not: a list"\n');
    expect(text).toContain(`  - username: 'it''s "q"'\n`);
    expect(text).toContain('  - username: "line\\nbreak"\n');
    const parsed = parse(text);
    expect(parsed.errors).toEqual([]);
    expect(parsed.value!.sshUsers.map((u) => u.username)).toEqual(names);
    expect(parsed.value!.apikeys.map((k) => k.name)).toEqual(names);
  });

  it('comes in chunks of at most 1,000 items, which join to the whole text', () => {
    const state: DesiredState = desired({ sshUsers: Array.from({ length: 2500 }, (_, i) => user(`u${i}`)), apikeys: [key('k', { roles: [3, 7] })] });
    const chunks = [...stringifyDesiredChunks(state, { omitDefaults: true })];
    expect(chunks.length).toBe(3);
    for (const chunk of chunks) expect(chunk.split('\n  - ').length - 1).toBeLessThanOrEqual(1000);
    expect(chunks.join('')).toBe(stringifyDesired(state, { omitDefaults: true }));
    expect(chunks.at(-1)).toContain('  - name: k\n    roles: [ 3, 7 ]\n');
  });
});

describe("a text larger than the file limit (an export's own output)", () => {
  // ~10.5 MB: 42,000 users with 240-character names.
  const big = `sshUsers:\n${Array.from({ length: 42_000 }, (_, i) => `  - username: u${String(i).padStart(239, '0')}\n`).join('')}`;

  it('is refused as a file amsync reads', () => {
    expect(big.length).toBeGreaterThan(limits.maxFileBytes);
    expect(parse(big).errors[0]?.message).toMatch(/amsync reads at most/);
  });

  it('is read when the limit is lifted (the export checks its own output so)', () => {
    const parsed = parse(big, Number.POSITIVE_INFINITY);
    expect(parsed.errors).toEqual([]);
    expect(parsed.value!.sshUsers).toHaveLength(42_000);
  });
});
