import { mkdir, mkdtemp, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { forms } from '../helpers/encodings.js';
import { runInProcess, type InProcessRun as CliRun } from '../helpers/in-process.js';

/**
 * `plan --secrets optional` (issue 29, item 6): a pull request's plan with a read-only token
 * and none of the password secrets. Checked against the emulator's request log: such a plan
 * sends GETs only; without the flag it is refused before any request, as before.
 */

const TOKEN = 'CANARY-bearer-nosecrets-8c1e';
const RO_TOKEN = 'CANARY-readonly-nosecrets-2b7d';
// Canaries with a quote, a backslash and non-ASCII: every encoding of them is looked for.
const ALICE = 'CANARY-alice-"q\\b-ü€🔑-41d0';
const BOB = 'CANARY-bob-"q\\b-ñ漢-9e2a';
const CAROL = 'CANARY-carol-"q\\b-ø✓-c3f5';
const ALICE_NEW = 'CANARY-alice-new-"q\\b-é-77ab';
const canaries = forms([TOKEN, RO_TOKEN, ALICE, BOB, CAROL, ALICE_NEW]);

const accessFile = `
sshUsers:
  - username: alice
    password: { env: ALICE_PASSWORD }
  - username: bob
    password: { file: secrets/bob }
  - username: carol
    password: { env: CAROL_PASSWORD }
apikeys:
  - name: ci
`;

let emu: RunningEmulator;
let dir: string;

beforeAll(async () => {
  emu = await startEmulator({ tokens: [TOKEN], readOnlyTokens: [RO_TOKEN] });
});
afterAll(async () => {
  await emu.close();
});
beforeEach(async () => {
  emu.reset();
  emu.clearRequests();
  dir = await mkdtemp(join(tmpdir(), 'amsync-no-secrets-'));
  await mkdir(join(dir, 'secrets'));
  await writeFile(join(dir, 'access.yaml'), accessFile);
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Every password available (the apply job), or none unless given (the pull request's job). */
const allSecrets = { ALICE_PASSWORD: ALICE, CAROL_PASSWORD: CAROL };

async function amsync(args: string[], env: Record<string, string | undefined> = {}, token = TOKEN): Promise<CliRun> {
  const run = await runInProcess(args, { cwd: dir, env: { AMSYNC_URL: emu.url, AMSYNC_TOKEN: token, ...env } });
  for (const form of canaries) {
    expect(run.stdout, 'stdout').not.toContain(form);
    expect(run.stderr, 'stderr').not.toContain(form);
  }
  return run;
}

/** Everything synced once with every secret: the state file holds each password's fingerprint. */
async function syncedWithSecrets(): Promise<void> {
  await writeFile(join(dir, 'secrets', 'bob'), `${BOB}\n`);
  const run = await amsync(['sync'], allSecrets);
  expect(run.code, run.stderr).toBe(0);
  emu.clearRequests();
}

const methods = () => [...new Set(emu.requests().map((r) => r.method))];

describe('plan --secrets optional: no password variable, no secret file, a read-only token', () => {
  it('with creates pending: exit 2 under --detailed-exitcode, the passwords "not available", only GETs', async () => {
    emu.seed({ sshUsers: [{ username: 'alice', level: 'n1', password: 'x' }], apikeys: [] });
    emu.clearRequests();
    const run = await amsync(['plan', '--secrets', 'optional', '--detailed-exitcode'], {}, RO_TOKEN);
    expect(run.code, run.stderr).toBe(2);
    expect(run.stdout).toContain(
      [
        '  # sshUser "bob" will be created',
        '  + sshUser "bob" {',
        '      + username = "bob"',
        '      + level    = "n1"',
        '      + password = (sensitive, not available to this run)',
        '    }',
      ].join('\n'),
    );
    expect(run.stdout).toContain('      + password = (sensitive, not available to this run)\n    }\n\n  # apikey "ci" will be created');
    // One note naming the references (never a value); no state file: drift is not compared anyway.
    const notes = run.stdout.split('\n').filter((l) => l.startsWith('Note: '));
    expect(notes).toEqual([
      'Note: No state file: passwords are set when a user is created and are not compared afterwards; --rotate-passwords sets them all.',
      'Note: Password secrets not available to this run (--secrets optional): env ALICE_PASSWORD, env CAROL_PASSWORD, file secrets/bob. A change marked "not available to this run" sends the password when it is applied with the secret.',
    ]);
    expect(run.stdout).toContain('Plan: 3 to create, 0 to update, 0 to delete, 1 unchanged, 0 unmanaged.');
    expect(methods()).toEqual(['GET']);
    expect(emu.requests().length).toBeGreaterThan(0);
  });

  it('with nothing pending: exit 0 under --detailed-exitcode; password drift "not checked", only GETs', async () => {
    await syncedWithSecrets();
    await unlink(join(dir, 'secrets', 'bob'));
    const run = await amsync(['plan', '--secrets', 'optional', '--detailed-exitcode'], {}, RO_TOKEN);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('Password drift not checked for 3 existing SSH users.');
    expect(run.stdout).not.toContain('not available to this run)');
    expect(run.stdout).toContain('No changes.');
    expect(methods()).toEqual(['GET']);
  });

  it('sync --dry-run --secrets optional is the same plan', async () => {
    const plan = await amsync(['plan', '--secrets', 'optional', '--json'], {}, RO_TOKEN);
    const dry = await amsync(['sync', '--dry-run', '--secrets', 'optional', '--json'], {}, RO_TOKEN);
    expect(dry.code, dry.stderr).toBe(0);
    expect(JSON.parse(dry.stdout)).toEqual(JSON.parse(plan.stdout));
    expect(methods()).toEqual(['GET']);
  });

  it('--json and --format markdown carry the facts: password not available, drift not checked', async () => {
    await syncedWithSecrets();
    await unlink(join(dir, 'secrets', 'bob'));
    await writeFile(join(dir, 'access.yaml'), accessFile.replace('apikeys:', '  - username: dave\n    password: { env: DAVE_PASSWORD }\n  - username: eve\n    password: { env: EVE_PASSWORD }\napikeys:'));
    // Some secrets are here (carol's, eve's): the plan uses them, and never shows them.
    const some = { CAROL_PASSWORD: CAROL, EVE_PASSWORD: CAROL };
    const json = await amsync(['plan', '--secrets', 'optional', '--json'], some, RO_TOKEN);
    expect(json.code, json.stderr).toBe(0);
    const doc = JSON.parse(json.stdout) as { changes: { key: string; fields: Record<string, unknown>; passwordAvailable?: boolean }[]; passwordsUnavailable: unknown; notes: string[] };
    expect(doc.passwordsUnavailable).toEqual({ references: ['env ALICE_PASSWORD', 'env DAVE_PASSWORD', 'file secrets/bob'], changes: ['dave'], driftNotChecked: ['alice', 'bob'] });
    const byKey = new Map(doc.changes.map((c) => [c.key, c]));
    expect([...byKey.keys()]).toEqual(['dave', 'eve']);
    expect(byKey.get('dave')).toMatchObject({ fields: { password: { before: null, after: '(sensitive)' } }, passwordAvailable: false });
    expect(byKey.get('eve')?.fields.password).toEqual({ before: null, after: '(sensitive)' });
    expect(byKey.get('eve')).not.toHaveProperty('passwordAvailable');
    expect(doc.notes).toHaveLength(1);

    const md = await amsync(['plan', '--secrets', 'optional', '--format', 'markdown'], some, RO_TOKEN);
    expect(md.code, md.stderr).toBe(0);
    expect(md.stdout).toContain('`password: (sensitive, not available to this run)`');
    expect(md.stdout).toContain('`password: (sensitive)`');
    expect(md.stdout).toContain('> Password secrets not available to this run (--secrets optional): env ALICE\\_PASSWORD, env DAVE\\_PASSWORD, file secrets/bob. Password drift not checked for 2 existing SSH users.');
    expect(methods()).toEqual(['GET']);
  });
});

describe('without --secrets optional, and runs that write: refused as today, nothing sent', () => {
  it('plan without the flag (and with --secrets required) exits 65 before any request', async () => {
    for (const args of [['plan'], ['plan', '--secrets', 'required']]) {
      const run = await amsync(args, {}, RO_TOKEN);
      expect(run.code, args.join(' ')).toBe(65);
      expect(run.stderr).toContain('environment variable ALICE_PASSWORD is not set');
    }
    expect(emu.requests()).toEqual([]);
  });

  it('sync without the secrets exits 65; sync --secrets optional is a usage error (64); nothing is sent', async () => {
    const sync = await amsync(['sync'], {});
    expect(sync.code).toBe(65);
    const optional = await amsync(['sync', '--secrets', 'optional'], allSecrets);
    expect(optional.code).toBe(64);
    expect(optional.stderr).toContain('--secrets optional plans without the passwords it cannot read; a sync writes and needs every one of them: use it with `amsync plan` or `amsync sync --dry-run`');
    const bad = await amsync(['plan', '--secrets', 'maybe'], {});
    expect(bad.code).toBe(64);
    expect(bad.stderr).toContain("Expected `--secrets` to be `required` or `optional`, got 'maybe'");
    expect(emu.requests()).toEqual([]);
  });
});

describe('a plan saved with --secrets optional (--out)', () => {
  it('records what it was made without; apply, with the secrets, applies it when no unchecked password changed', async () => {
    emu.seed({ sshUsers: [{ username: 'alice', level: 'n1', password: 'x' }], apikeys: [] });
    const planned = await amsync(['plan', '--secrets', 'optional', '--out', 'plan.json'], {}, RO_TOKEN);
    expect(planned.code, planned.stderr).toBe(0);
    const text = await readFile(join(dir, 'plan.json'), 'utf8');
    for (const form of canaries) expect(text).not.toContain(form);
    const saved = JSON.parse(text) as { plan: { passwordsUnavailable: unknown }; passwords: unknown };
    expect(saved.plan.passwordsUnavailable).toEqual({ references: ['env ALICE_PASSWORD', 'env CAROL_PASSWORD', 'file secrets/bob'], changes: ['bob', 'carol'], driftNotChecked: [] });
    // The references apply reads the passwords from, as for any saved plan.
    expect(saved.passwords).toEqual([
      { username: 'bob', file: 'secrets/bob' },
      { username: 'carol', env: 'CAROL_PASSWORD' },
    ]);

    // The apply job has the secrets; it refuses to run without them, as before.
    const without = await amsync(['apply', 'plan.json'], {});
    expect(without.code).toBe(65);
    expect(emu.requests().filter((r) => r.method !== 'GET')).toEqual([]);

    // alice was never set by amsync (no fingerprint): nothing to compare, so nothing changed.
    await writeFile(join(dir, 'secrets', 'bob'), `${BOB}\n`);
    const applied = await amsync(['apply', 'plan.json'], allSecrets);
    expect(applied.code, applied.stderr).toBe(0);
    // It had the passwords: its report does not say otherwise.
    expect(applied.stdout).toContain('      + password = (sensitive)\n');
    expect(applied.stdout).not.toContain('not available to this run');
    expect(applied.stdout).not.toContain('Note: Password secrets not available');
    const users = emu.state().sshUsers.map((u) => u.username).sort();
    expect(users).toEqual(['alice', 'bob', 'carol']);
  });

  it('apply refuses (exit 3, nothing written) when a password whose drift the plan did not check changed', async () => {
    await syncedWithSecrets();
    await writeFile(join(dir, 'access.yaml'), `${accessFile}  - name: deploy-key\n`);
    const planned = await amsync(['plan', '--secrets', 'optional', '--out', 'plan.json'], {}, RO_TOKEN);
    expect(planned.code, planned.stderr).toBe(0);
    emu.clearRequests();
    const applied = await amsync(['apply', 'plan.json'], { ...allSecrets, ALICE_PASSWORD: ALICE_NEW });
    expect(applied.code).toBe(3);
    expect(applied.stderr).toContain(
      'plan.json was made without some passwords (--secrets optional), so it did not check their drift, and the password of SSH user "alice" differs from the one amsync last set: this plan would not update it; nothing was written; plan again with the secrets',
    );
    expect(emu.requests().filter((r) => r.method !== 'GET')).toEqual([]);
    // With the passwords amsync last set, the reviewed plan is the whole plan: applied.
    const same = await amsync(['apply', 'plan.json'], allSecrets);
    expect(same.code, same.stderr).toBe(0);
    expect(emu.state().apikeys.map((k) => k.name).sort()).toEqual(['ci', 'deploy-key']);
  });
});
