import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { desiredFileSchema } from '../../../src/desired/desired-schema.js';
import { quickCheckDesired, quickCheckMaxItems } from '../../../src/desired/quick-check.js';

/**
 * The quick check may answer only where zod answers the same: same value for a file zod
 * accepts, "not sure" (undefined) for one it refuses. Files are generated near the schema's
 * edges: every key, valid and invalid values of every kind, numbers at the int and sign
 * limits, strings with spaces and digits, odd objects.
 */

const edgeNumbers = fc.constantFrom(0, -0, 1, 2, -1, 1.5, 7, 2 ** 53 - 1, 2 ** 53, -(2 ** 53), 1e21, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, Number.MAX_VALUE, Number.MIN_VALUE);
const edgeStrings = fc.constantFrom('', ' ', 'deploy', ' deploy', 'deploy ', 'n1', 'n2', '7', ' 7 ', '+3', '-1.5', '3x', 'sp-1', 'Sp', '-sp', 'site', 'example.com/tier', 'a b', 'A_B', '1A', 'present', 'absent', 'allow', 'forbid', 'approve', 'ação', '\u00a0x', 'x\u2028', '"\\', '__proto__', 'constructor', 'toString');
const scalar = fc.oneof(edgeNumbers, edgeStrings, fc.boolean(), fc.constant(null), fc.string({ maxLength: 6 }), fc.integer({ min: -3, max: 3 }));

/** A value of any shape, rarely deep. */
const anyValue: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, scalar, fc.array(tie('value'), { maxLength: 3 }), fc.dictionary(edgeStrings, tie('value'), { maxKeys: 3 })),
})).value;

/** Mostly a value of `valid`, sometimes an edge value, rarely any value at all. */
const mostly = (valid: fc.Arbitrary<unknown>, edges: fc.Arbitrary<unknown> = scalar): fc.Arbitrary<unknown> =>
  fc.oneof({ weight: 24, arbitrary: valid }, { weight: 1, arbitrary: edges }, { weight: 1, arbitrary: anyValue });

/** An object with some of `keys`, each from its own arbitrary, and rarely a stray key or an odd object. */
function someOf(shape: Record<string, fc.Arbitrary<unknown>>, required: string[] = []): fc.Arbitrary<Record<string, unknown>> {
  const stray = fc.oneof({ weight: 40, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.dictionary(edgeStrings, anyValue, { minKeys: 1, maxKeys: 1 }) });
  return fc
    .tuple(fc.record(shape, { requiredKeys: required }), stray, fc.integer({ min: 0, max: 59 }))
    .map(([object, stray, odd]) => {
      const out: Record<string, unknown> = { ...object, ...(stray ?? {}) };
      // Now and then an object the YAML readers do not make.
      if (odd === 0) return Object.assign(Object.create(null) as object, out) as Record<string, unknown>;
      if (odd === 1) Object.defineProperty(out, 'hidden', { value: 1, enumerable: false });
      return out;
    });
}

const name = (...valid: string[]) => mostly(fc.constantFrom(...valid), edgeStrings);
const id = mostly(fc.integer({ min: 1, max: 1000 }), edgeNumbers);
const count = mostly(fc.integer({ min: 0, max: 5 }), edgeNumbers);
const roleRef = mostly(fc.oneof(fc.constantFrom('auditor', 'admin'), fc.integer({ min: 1, max: 50 })), fc.oneof(edgeNumbers, edgeStrings));
const list = <T>(item: fc.Arbitrary<T>, minLength = 0) => mostly(fc.array(item, { minLength, maxLength: 3 }));
const selector = mostly(fc.oneof(fc.array(name('sp-1', 'rj-2'), { maxLength: 3 }), fc.dictionary(fc.oneof({ weight: 20, arbitrary: fc.constantFrom('site', 'example.com/tier', 'env') }, { weight: 1, arbitrary: edgeStrings }), name('sp', 'prod', 'web'), { maxKeys: 3 })));
const password = mostly(fc.oneof(fc.string({ maxLength: 8 }), someOf({ env: name('PW', '_X1') }, ['env']), someOf({ file: name('secrets/pw', 'pw') }, ['file'])), fc.oneof(edgeStrings, someOf({ env: edgeStrings, file: edgeStrings })));
const ensure = name('present', 'absent');
const bool = mostly(fc.boolean());

// Issue 29's per-item keys: former names, ignored fields (of the kind, or of the other kind, or
// the identity: zod refuses those), observe mode.
const renamedFrom = list(name('old-deploy', 'ops', 'billing-old'), 1);
const ignoreOf = (...fields: string[]) =>
  fc.oneof({ weight: 12, arbitrary: list(name(...fields)) }, { weight: 1, arbitrary: fc.array(fc.constantFrom('username', 'name', 'ttl', ...fields), { maxLength: 2 }) });
const mode = name('observe');
// Issue 30's expiry: RFC 3339 with an offset (and near misses zod refuses), durations.
const expires = name('2026-12-31T18:00:00Z', '2026-12-31T19:00:00+01:00', '2026-12-31T18:00:00.5Z', '2026-12-31T18:00:00', '2026-12-31', '2026-02-30T18:00:00Z');
const ttl = name('30s', '15m', '72h', '90d', '0s', '1w', '72 h', '1h30m');
const sshUser = someOf({ username: name('deploy', 'ops', 'j.doe'), id, level: name('n1', 'n2'), password, ensure, targets: selector, renamedFrom, ignore: ignoreOf('level', 'password'), mode, expires, ttl }, ['username']);
const apikey = someOf({ name: name('billing', 'monitor'), id, superuser: bool, roles: list(roleRef), ensure, targets: selector, renamedFrom, ignore: ignoreOf('superuser', 'roles'), mode, expires, ttl }, ['name']);
const kinds = (value: fc.Arbitrary<unknown>) => mostly(someOf({ sshUsers: value, apikeys: value }));
const policy = someOf({
  superuser: name('allow', 'forbid', 'approve'),
  forbiddenRoles: list(roleRef),
  approveRoles: list(roleRef),
  maxSuperuserKeys: count,
  usernamePattern: name('[a-z]+', '.*'),
  apikeyNamePattern: name('[a-z-]+'),
  levels: list(name('n1', 'n2'), 1),
  approveDeletesOver: count,
});
const orNull = (arb: fc.Arbitrary<unknown>) => fc.oneof({ weight: 5, arbitrary: arb }, { weight: 1, arbitrary: fc.constant(null) });
const desiredFile = someOf({
  sshUsers: orNull(list(sshUser)),
  apikeys: orNull(list(apikey)),
  prune: orNull(kinds(bool)),
  protect: orNull(kinds(orNull(list(name('root', 'admin-*'))))),
  policy: orNull(mostly(policy)),
  targets: selector,
  ignore: mostly(someOf({ sshUsers: ignoreOf('level', 'password'), apikeys: ignoreOf('superuser', 'roles') })),
});

function zodAnswer(raw: unknown): unknown {
  const parsed = desiredFileSchema().safeParse(raw);
  return parsed.success ? parsed.data : undefined;
}

describe('quickCheckDesired', () => {
  it('answers as zod does, or is not sure, on generated files (valid and broken)', () => {
    let accepted = 0;
    let zodAccepted = 0;
    fc.assert(
      fc.property(fc.oneof({ weight: 8, arbitrary: desiredFile }, { weight: 1, arbitrary: anyValue }), (raw) => {
        const quick = quickCheckDesired(raw);
        const zod = zodAnswer(raw);
        if (zod !== undefined) zodAccepted += 1;
        if (quick === undefined) return;
        accepted += 1;
        // Same value, -0 and all (toStrictEqual compares numbers with Object.is).
        expect(zod).toBeDefined();
        expect(quick).toStrictEqual(zod);
      }),
      { numRuns: 4000, seed: 20261123 },
    );
    // The generator reaches files zod accepts, and the quick check takes most of them: a
    // quick check that declined everything would pass the property and help nobody.
    expect(zodAccepted).toBeGreaterThan(300);
    expect(accepted / zodAccepted).toBeGreaterThan(0.6);
  });

  it('accepts a file that uses every key, with the value zod gives', () => {
    const raw = parseYaml(`
sshUsers:
  - username: deploy
    id: 12
    level: n1
    password: {env: DEPLOY_PW}
    ensure: present
    targets: [sp-1, rj-2]
    renamedFrom: [deployer, old-deploy]
    ignore: [level, password]
    mode: observe
  - username: ops
    password: {file: secrets/ops}
  - username: old
    ensure: absent
  - username: literal
    password: "s3cr\\"et ação"
apikeys:
  - name: billing
    roles: [3, auditor, 7, 3]
    superuser: false
    targets: {site: sp, example.com/tier: web}
  - name: monitor
    id: 4
    ignore: [roles]
    renamedFrom: [monitoring]
prune: {sshUsers: true}
protect: {sshUsers: [root, "admin-*"], apikeys: null}
policy:
  superuser: forbid
  forbiddenRoles: [1, root-role]
  approveRoles: []
  maxSuperuserKeys: 0
  usernamePattern: '[a-z]+'
  apikeyNamePattern: '.+'
  levels: [n1]
  approveDeletesOver: 3
targets: {env: prod}
ignore: {apikeys: [superuser], sshUsers: []}
`) as unknown;
    const quick = quickCheckDesired(raw);
    expect(quick).toBeDefined();
    expect(quick).toStrictEqual(zodAnswer(raw));
  });

  it('fills in the defaults as zod does, for an empty file and empty sections', () => {
    for (const raw of [{}, { sshUsers: null, apikeys: null, prune: null, protect: null, policy: null }, { prune: {}, protect: {}, policy: {} }, { protect: { sshUsers: null, apikeys: null } }]) {
      expect(quickCheckDesired(raw)).toBeDefined();
      expect(quickCheckDesired(raw)).toStrictEqual(zodAnswer(raw));
    }
  });

  it('is not sure of what zod refuses or of objects the YAML readers do not make', () => {
    class Item {
      username = 'deploy';
    }
    const cases: unknown[] = [
      [],
      'text',
      { sshUsers: [{ username: 'deploy', extra: 1 }] },
      { sshUsers: [{ username: ' deploy' }] },
      { sshUsers: [{ username: 'deploy', level: '' }] },
      { sshUsers: [{ username: 'deploy', password: { file: '' } }] },
      { apikeys: [{ name: 'k', superuser: 'yes' }] },
      { prune: { sshUsers: 1 } },
      { apikeys: [{ name: 'k', roles: ['7'] }] },
      { apikeys: [{ name: 'k', id: 2 ** 53 }] },
      { apikeys: [{ name: 'k', id: -0 }] },
      { sshUsers: [{ username: 'a', password: { env: 'A', file: 'b' } }] },
      { sshUsers: [new Item()] },
      { targets: { _x: 'y' } },
      { policy: { levels: [] } },
      { sshUsers: [{ username: 'a', [Symbol('s')]: 1 }] },
    ];
    for (const raw of cases) expect(quickCheckDesired(raw)).toBeUndefined();
  });

  it('is not sure of lists with holes, values that may read differently twice, or an altered Object.prototype', () => {
    const holes = (length: number, values: Record<number, unknown>): unknown[] => Object.assign(new Array<unknown>(length), values);
    const getter = Object.defineProperty({ username: 'u' }, 'level', { get: () => 'n1', enumerable: true });
    const cases: unknown[] = [
      { sshUsers: holes(1, {}) },
      { apikeys: [{ name: 'k', roles: holes(3, { 0: 1, 2: 2 }) }] },
      { policy: { levels: holes(1, {}) } },
      { sshUsers: [getter] },
      { sshUsers: [new Proxy({ username: 'u' }, {})] },
      new Proxy({ sshUsers: [] }, {}),
      { apikeys: new Proxy([], {}) },
    ];
    for (const raw of cases) {
      expect(quickCheckDesired(raw)).toBeUndefined();
    }
    const plain = { sshUsers: [{ username: 'u' }] };
    expect(quickCheckDesired(plain)).toBeDefined();
    for (const [key, enumerable] of [['id', false], ['extra', true]] as const) {
      Object.defineProperty(Object.prototype, key, { value: 5, enumerable, configurable: true, writable: true });
      try {
        expect(quickCheckDesired(plain)).toBeUndefined();
      } finally {
        delete (Object.prototype as Record<string, unknown>)[key];
      }
    }
    expect(quickCheckDesired(plain)).toBeDefined();
  });
});

describe('a large file goes to zod, which is the faster there (docs/performance.md, "Fast paths")', () => {
  const file = (n: number) => ({ sshUsers: Array.from({ length: n }, (_, i) => ({ username: `u${i}` })), apikeys: [{ name: 'k' }] });
  it(`up to ${quickCheckMaxItems} items the quick check answers; above, it leaves the file to zod, which gives the same value`, () => {
    expect(quickCheckDesired(file(quickCheckMaxItems - 1))).toEqual(desiredFileSchema().parse(file(quickCheckMaxItems - 1)));
    expect(quickCheckDesired(file(quickCheckMaxItems))).toBeUndefined();
    expect(desiredFileSchema().safeParse(file(quickCheckMaxItems)).success).toBe(true);
  });
});
