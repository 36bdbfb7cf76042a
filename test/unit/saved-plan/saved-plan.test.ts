import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../../src/errors.js';
import type { SecretRef } from '../../../src/model/index.js';
import { parseSavedPlan, passwordReferences, serialiseSavedPlan, toSavedPlan, type SavedPlan } from '../../../src/saved-plan/index.js';
import { plan } from '../../../src/plan/index.js';
import { stateFingerprint } from '../../../src/state/index.js';
import { actual, desired, key, policyFor, secret, user } from '../../helpers/plan-fixtures.js';

const canary = 'CANARY-saved-plan-pw-1d2e';
const d = desired({
  sshUsers: [
    user('deploy', { password: secret(canary), passwordRef: { kind: 'env', name: 'DEPLOY_PASSWORD' } satisfies SecretRef }),
    user('backup', { password: secret(canary), passwordRef: { kind: 'file', path: '/srv/repo/secrets/backup' } satisfies SecretRef }),
    user('old', { ensure: 'absent' }),
  ],
  apikeys: [key('ci', { roles: [1, 2] })],
});
const remote = actual(
  [{ id: 9, username: 'old', level: 'n1' }, { id: 3, username: 'backup', level: 'n1' }],
  [{ id: 4, name: 'ci', superuser: false, roles: [1] }, { id: 2, name: 'manual', superuser: true, roles: [] }],
);
const p = plan(d, remote, policyFor(d, { passwords: { mode: 'rotate' } }));

function saved(overrides: Partial<SavedPlan> = {}): SavedPlan {
  return {
    ...toSavedPlan({
      amsyncVersion: '0.1.0',
      createdAt: '2025-01-02T03:04:05.000Z',
      desiredFile: 'access.yaml',
      desiredFileHash: 'a'.repeat(64),
      serviceUrl: 'https://access.example.com',
      settings: { prune: { sshUsers: false, apikeys: false }, rotatePasswords: true, passwordMode: 'rotate', allowEmptyPrune: false, maxDeletes: 10 },
      actualFingerprint: stateFingerprint(remote),
      plan: p,
      passwords: passwordReferences(p, d, (abs) => abs.replace('/srv/repo/', '')),
      actual: remote,
    }),
    ...overrides,
  };
}

describe('a saved plan', () => {
  it('round-trips through its file text', () => {
    const text = serialiseSavedPlan(saved());
    const back = parseSavedPlan(text, 'plan.json');
    expect(back).toEqual(JSON.parse(JSON.stringify(saved())));
    expect(back.plan.changes).toEqual(p.changes);
  });

  it('keeps passwords as references only, relative to the desired file, never values', () => {
    const text = serialiseSavedPlan(saved());
    expect(text).not.toContain(canary);
    expect(text).not.toContain('/srv/repo');
    expect(JSON.parse(text).passwords).toEqual([
      { username: 'backup', file: 'secrets/backup' },
      { username: 'deploy', env: 'DEPLOY_PASSWORD' },
    ]);
  });

  it('writes the listing snapshot one item per line, sorted by id, after everything else', () => {
    const text = serialiseSavedPlan(saved());
    expect(text).toContain('    "sshUsers": [\n      {"id":3,"username":"backup","level":"n1"},\n      {"id":9,"username":"old","level":"n1"}\n    ]');
    expect(text).toContain('{"id":2,"name":"manual","superuser":true,"roles":[]}');
    expect(Object.keys(JSON.parse(text))).toEqual([
      'formatVersion', 'kind', 'amsyncVersion', 'createdAt', 'desiredFile', 'desiredFileHash', 'serviceUrl', 'settings', 'actualFingerprint', 'plan', 'passwords', 'actual',
    ]);
  });
});

describe('reading a plan file', () => {
  const good = () => JSON.parse(serialiseSavedPlan(saved())) as Record<string, unknown> & { plan: { changes: Record<string, unknown>[] } };
  const codeOf = (text: string) => {
    try {
      parseSavedPlan(text, 'plan.json');
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidInputError);
      return { code: (error as InvalidInputError).code, message: (error as Error).message, diagnostics: (error as InvalidInputError).diagnostics };
    }
    throw new Error('parsed');
  };

  it('refuses what is not JSON, without quoting it (a mistaken argument may be a secret)', () => {
    const e = codeOf('hunter2-CANARY not json');
    expect(e.code).toBe('plan_invalid');
    expect(e.message).toContain('plan.json is not an amsync plan file: it is not JSON');
    expect(e.message).not.toContain('hunter2');
  });

  it('refuses a foreign file, and another format version, saying which', () => {
    expect(codeOf('{"format_version":"1.2","terraform_version":"1.9.0"}')).toMatchObject({ code: 'plan_foreign', message: expect.stringContaining('no "kind": "amsync-plan"') });
    expect(codeOf(JSON.stringify({ ...good(), formatVersion: 2 }))).toMatchObject({ code: 'plan_version', message: expect.stringContaining('format 2; this amsync reads format 1') });
  });

  it('refuses an edited plan with a password value in it, and does not echo the value', () => {
    const doc = good();
    (doc.plan.changes[0]!.fields as Record<string, unknown>).password = { before: null, after: 'CANARY-typed-in-pw' };
    const e = codeOf(JSON.stringify(doc));
    expect(e.code).toBe('plan_invalid');
    expect(e.diagnostics.map((x) => x.path)).toContain('plan.changes[0].fields.password.after');
    expect(JSON.stringify(e)).not.toContain('CANARY-typed-in-pw');
  });

  it('refuses unknown fields, a create with an id, and a change of the wrong shape', () => {
    const doc = good();
    doc.plan.changes[0] = { ...doc.plan.changes[0]!, action: 'create', id: 5 };
    (doc as Record<string, unknown>).extra = true;
    const e = codeOf(JSON.stringify(doc));
    expect(e.diagnostics.map((x) => `${x.path}: ${x.message}`)).toEqual(expect.arrayContaining([expect.stringMatching(/^plan\.changes\[0\]\.id: a create has id null/), expect.stringContaining('extra')]));
  });
});

describe('password references', () => {
  it('name only the users whose password the plan sends', () => {
    const onlyCreate = plan(d, remote, policyFor(d, { passwords: { mode: 'create-only' } }));
    expect(passwordReferences(onlyCreate, d, (x) => x)).toEqual([{ username: 'deploy', env: 'DEPLOY_PASSWORD' }]);
  });

  it('say "literal" for a password written in the file, without its value', () => {
    const lit = desired({ sshUsers: [user('x', { password: secret(canary), passwordRef: { kind: 'literal' } })] });
    const refs = passwordReferences(plan(lit, actual(), policyFor(lit)), lit, (x) => x);
    expect(refs).toEqual([{ username: 'x', literal: true }]);
  });
});

describe('a saved plan made with --secrets optional', () => {
  it('keeps passwordsUnavailable in its plan, round-trips it, and a plan without it is saved as before', () => {
    const withIt = { ...p, passwordsUnavailable: { references: ['env DEPLOY_PASSWORD'], changes: ['deploy'], driftNotChecked: [] } };
    const text = serialiseSavedPlan(saved({ plan: withIt }));
    expect(JSON.parse(text).plan.passwordsUnavailable).toEqual(withIt.passwordsUnavailable);
    expect(parseSavedPlan(text, 'plan.json').plan.passwordsUnavailable).toEqual(withIt.passwordsUnavailable);
    expect(serialiseSavedPlan(saved())).not.toContain('passwordsUnavailable');
  });
});
