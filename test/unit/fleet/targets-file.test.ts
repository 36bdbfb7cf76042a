import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import { parse as parseYaml } from 'yaml';
import { describe, expect, it } from 'vitest';
import { parseTargets, renderTargetsSchema, type ParseTargetsContext } from '../../../src/fleet/index.js';


/**
 * The targets file (DESIGN.md §9): services by name and URL, a credential by reference (never a
 * literal), labels, and client settings a target overrides. Every finding at `file:line:col`.
 */

const ctx = (over: Partial<ParseTargetsContext> = {}): ParseTargetsContext => ({
  file: 'targets.yaml',
  env: { SP1_TOKEN: 'tok-1', RJ_KEY: 'key-1' },
  baseDir: '/etc/amsync',
  checkFile: (path) => (path.endsWith('/missing') ? new Error('no such file') : true),
  ...over,
});

const lines = (text: string, c = ctx()) => {
  const result = parseTargets(text, c);
  return [...result.errors, ...result.warnings].map((d) => `${d.position ? `${d.position.line}:${d.position.col}` : '-'} ${d.severity}: ${d.message}`);
};

describe('a valid targets file', () => {
  it('gives each target its URL, credential, labels and overrides (paths from the file\'s folder)', () => {
    const result = parseTargets(
      `targets:
  - name: sp-1
    url: https://access.sp1.example.com
    token: { env: SP1_TOKEN }
    labels: { site: sp, env: prod }
    rate: 20
    concurrency: 4
    caFile: certs/ca.pem
    pageSize: 200
  - name: rj-1
    url: https://access.rj1.example.com/base
    integratorKey: { file: /run/secrets/rj-1 }
  - name: rj-2
    url: https://access.rj2.example.com
    integratorKey: { env: RJ_KEY }
  - name: sp-2
    url: https://access.sp2.example.com
    token: { file: tokens/sp-2 }
`,
      ctx(),
    );
    expect(result.errors).toEqual([]);
    const [sp1, rj1, rj2, sp2] = result.value!;
    expect(sp1).toMatchObject({ name: 'sp-1', url: 'https://access.sp1.example.com', labels: { site: 'sp', env: 'prod' }, overrides: { rate: 20, concurrency: 4, caFile: '/etc/amsync/certs/ca.pem', pageSize: 200 } });
    expect(sp1!.credentials?.kind).toBe('token');
    expect(sp1!.credentials?.kind === 'token' && sp1!.credentials.token.reveal()).toBe('tok-1');
    // The value never prints.
    expect(JSON.stringify(sp1)).not.toContain('tok-1');
    expect(rj1!.credentials).toEqual({ kind: 'integratorKeyFile', refreshTokenFile: '/run/secrets/rj-1' });
    expect(rj1!.labels).toEqual({});
    expect(rj2!.credentials?.kind).toBe('integratorKey');
    expect(sp2!.credentials).toEqual({ kind: 'tokenFile', tokenFile: '/etc/amsync/tokens/sp-2' });
    expect(sp1!.source).toEqual({ file: 'targets.yaml', line: 2, col: 5 });
  });
});

describe('mistakes in the targets file are errors at file:line:col, all at once', () => {
  it('a literal credential is an error that never shows it', () => {
    const found = lines('targets:\n  - name: a\n    url: https://a.example.com\n    token: "CANARY-literal"\n');
    expect(found).toEqual(['4:12 error: a credential is never written in the targets file: reference it with { env: NAME } or { file: PATH } (the value was not shown)']);
    expect(found.join('\n')).not.toContain('CANARY');
    expect(lines('targets:\n  - name: a\n    url: https://a.example.com\n    integratorKey: 12345\n').join()).not.toContain('12345');
  });

  it('names are unique and DNS labels; URLs are unique (same service, whatever the case or a trailing slash)', () => {
    expect(
      lines(`targets:
  - name: sp-1
    url: https://A.example.com
    token: { env: SP1_TOKEN }
  - name: sp-1
    url: https://a.example.com/
    token: { env: SP1_TOKEN }
  - name: -bad
    url: https://b.example.com
    token: { env: SP1_TOKEN }
`),
    ).toEqual([
      "5:11 error: target 'sp-1' is declared twice (first as targets[0], line 2); names are unique",
      '6:10 error: https://a.example.com/ is also the URL of targets[0] (line 2): two targets on one service would be two writers at once; declare it once',
      '8:11 error: "-bad" is not a target name (lowercase letters, digits and -, at most 63, not starting with -)',
    ]);
  });

  it('exactly one credential; a reference of the wrong shape says which', () => {
    expect(
      lines(`targets:
  - name: a
    url: https://a.example.com
  - name: b
    url: https://b.example.com
    token: { env: SP1_TOKEN }
    integratorKey: { env: RJ_KEY }
  - name: c
    url: https://c.example.com
    token: { env: SP1_TOKEN, file: x }
  - name: d
    url: https://d.example.com
    token: { enf: SP1_TOKEN }
`),
    ).toEqual([
      '2:5 error: target needs a credential: token: { env: NAME } or { file: PATH }, or integratorKey: { env: NAME }, { file: PATH } or { secret: NAMESPACE/NAME[/KEY] }',
      '7:5 error: give either token or integratorKey, not both (the integrator key renews access tokens by itself)',
      '10:12 error: a credential reference takes either env or file, not both',
      "13:14 error: unknown key 'enf' in a credential reference — did you mean 'env'?",
    ]);
  });

  it('unknown keys get a suggestion or a hint; overrides are checked like flags', () => {
    expect(
      lines(`targets:
  - name: a
    url: ftp://a.example.com
    token: { env: SP1_TOKEN }
    lables: { site: sp }
    tokenFile: x
    rate: 0
    concurrency: 1.5
    maxDeletes: 3
`),
    ).toEqual([
      "3:10 error: expected an http:// or https:// URL, got the string 'ftp://a.example.com'",
      "5:5 error: unknown key 'lables' — did you mean 'labels'?",
      "6:5 error: unknown key 'tokenFile' — a token file is token: { file: PATH }",
      '7:11 error: expected a number greater than 0, got the number 0',
      '8:18 error: expected a whole number, got the fraction 1.5',
      "9:5 error: unknown key 'maxDeletes' — guards apply to every target alike: set them on the command line or in the settings",
    ]);
  });

  it('an unset or empty variable, a missing file: errors, or warnings for validate (no credentials then)', () => {
    const text = `targets:
  - name: a
    url: https://a.example.com
    token: { env: UNSET }
  - name: b
    url: https://b.example.com
    integratorKey: { file: missing }
`;
    expect(lines(text)).toEqual([
      "4:12 error: environment variable UNSET is not set (the access token of target 'a')",
      "7:20 error: cannot read missing (the integrator key file of target 'b'): no such file",
    ]);
    const warned = parseTargets(text, ctx({ secrets: 'warn' }));
    expect(warned.errors).toEqual([]);
    expect(warned.warnings).toHaveLength(2);
    expect(warned.value!.map((t) => t.credentials)).toEqual([undefined, undefined]);
  });

  it('an empty file, or one that is not a mapping of targets, says what it must be', () => {
    expect(lines('')).toEqual(["1:1 error: missing required key 'targets'"]);
    expect(lines('- name: a\n')).toEqual(['1:1 error: the targets file must be a mapping with the key targets (a list of services); found a list']);
    expect(lines('targets: []\n')).toEqual(['1:10 error: needs at least 1 item(s)']);
  });
});

describe('config/targets.schema.json', () => {
  it('is up to date (else: npm run build && npm run schema)', () => {
    expect(readFileSync('config/targets.schema.json', 'utf8')).toBe(renderTargetsSchema());
  });

  it('accepts the example targets file and refuses a literal token (ajv)', () => {
    const ajv = new Ajv({ strict: true, allErrors: true, validateFormats: false });
    const validate = ajv.compile(JSON.parse(readFileSync('config/targets.schema.json', 'utf8')) as object);
    const example = parseYaml(readFileSync('examples/kubernetes/fleet/targets.yaml', 'utf8')) as unknown;
    expect(validate(example), JSON.stringify(validate.errors)).toBe(true);
    expect(validate({ targets: [{ name: 'a', url: 'https://a', token: 'literal' }] })).toBe(false);
  });
});

describe("a target's caFile (validate --targets)", () => {
  const text = 'targets:\n  - name: rj-1\n    url: https://access.rj1.example.com\n    token: { env: SP1_TOKEN }\n    caFile: ca/rj.pem\n';

  it('is checked when the context asks: an error at its value naming the target and the key, whatever the secrets mode', () => {
    const checkCaFile = (path: string) => (path === '/etc/amsync/ca/rj.pem' ? new Error('cannot be read (ENOENT)') : true);
    for (const secrets of ['warn', 'require'] as const) {
      expect(lines(text, ctx({ checkCaFile, secrets }))).toEqual(["5:13 error: the CA file ca/rj.pem (caFile of target 'rj-1') cannot be read (ENOENT)"]);
    }
    expect(parseTargets(text, ctx({ checkCaFile })).errors[0]).toMatchObject({ code: 'target_ca_file', path: 'targets[0].caFile' });
  });

  it('is left to the client otherwise (a run fails that target alone)', () => {
    expect(lines(text)).toEqual([]);
  });
});

describe("a target's integrator key in a Kubernetes Secret", () => {
  it('is taken by reference (NAMESPACE/NAME[/KEY]), for the run to read', () => {
    const result = parseTargets('targets:\n  - name: sp-1\n    url: https://sp-1.example.com\n    integratorKey: { secret: amsync/keys/sp-1 }\n', ctx());
    expect(result.errors).toEqual([]);
    expect(result.value?.[0]?.credentials).toEqual({ kind: 'integratorKeySecret', integratorKeySecret: 'amsync/keys/sp-1' });
  });

  it('two targets with one data key are an error at the second (each service rotates its own key)', () => {
    const text = 'targets:\n  - name: sp-1\n    url: https://sp-1.example.com\n    integratorKey: { secret: amsync/keys }\n  - name: sp-2\n    url: https://sp-2.example.com\n    integratorKey: { secret: amsync/keys/integrator-key }\n';
    expect(lines(text)).toEqual(["7:30 error: the integrator key amsync/keys/integrator-key is also that of targets[0] (line 2): each target's key needs a data key of its own"]);
  });
});
