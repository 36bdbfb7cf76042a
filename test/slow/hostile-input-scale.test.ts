import { describe, expect, it } from 'vitest';
import { limits } from '../../src/yaml/limits.js';
import { parse } from '../unit/desired/parse-helper.js';

/**
 * The scale case of test/unit/yaml/hostile-input.test.ts, in the slow project: 200,000 keys
 * take 4 s of CPU alone and 12 to 20 s of a worker in `npm test` on a busy 2-core machine.
 * No wall-clock bound: a quadratic duplicate check would take tens of minutes here, and the
 * test's own timeout is the hang guard.
 */
describe('hostile input at scale', () => {
  it('a map of 200,000 distinct keys finishes (no quadratic duplicate check) and reports a bounded list', { timeout: 180_000 }, () => {
    const keys = Array.from({ length: 200_000 }, (_, i) => `k${i}: 1`).join('\n');
    const result = parse(keys);
    expect(result.errors).toHaveLength(limits.maxDiagnostics + 1);
    expect(result.errors.at(-1)!.code).toBe('too_many_problems');
  });
});
