import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/index.js';
import { emulatorPerTest } from '../helpers/emulator-per-test.js';
import { runInProcess, type InProcessRun as CliRun } from '../helpers/in-process.js';
import { forms } from '../helpers/encodings.js';
import { passwordMatches as checkPassword } from '../helpers/emulator-client.js';

// issue 30, items 2 and 3 (SSH passwords): `password: {generate}` and `rotate: {every}`,
// against the emulator's own log and password check, on a moved clock.

const TOKEN = 'CANARY-bearer-genpw-5b1f';

let emu: RunningEmulator;
let dir: string;

emulatorPerTest(TOKEN, 'amsync-genpw-', (e, d) => {
  emu = e;
  dir = d;
});
beforeEach(async () => {
  await writeFile(join(dir, 'access.yaml'), accessFile);
});
afterEach(() => {
  vi.useRealTimers();
});

const accessFile = `
sshUsers:
  - username: alice
    password: { generate: { length: 32, classes: [lower, upper, digit, symbol] } }
    rotate: { every: 30d }
  - username: bob
    password: { generate: { length: 20 } }
`;

/** Every output of a run, and every file it may write besides the sink, for the secret scan. */
const outputs: string[] = [];

async function amsync(args: string[]): Promise<CliRun> {
  const run = await runInProcess(args, { cwd: dir, env: { AMSYNC_URL: emu.url, AMSYNC_TOKEN: TOKEN, AMSYNC_LOG_LEVEL: 'debug' } });
  outputs.push(run.stdout, run.stderr);
  return run;
}

const sinkFile = (username: string) => join(dir, 'tokens', 'passwords~', username);
const writes = () => emu.requests().filter((r) => r.method !== 'GET');
const userId = (name: string) => emu.state().sshUsers.find((u) => u.username === name)!.id;

const passwordMatches = (username: string, password: string): Promise<boolean> => checkPassword(emu.url, username, password);

/** No output, log, report, plan file, audit log or state file holds any form of these passwords. */
async function expectNowhere(passwords: readonly string[], files: readonly string[]): Promise<void> {
  const texts = [...outputs, ...(await Promise.all(files.map((f) => readFile(join(dir, f), 'utf8'))))];
  for (const form of forms(passwords)) for (const text of texts) expect(text.includes(form), 'a generated password leaked').toBe(false);
}

describe('password: {generate}', () => {
  it('is set on create, lands in the sink only, and the next sync makes zero writes', async () => {
    outputs.length = 0;
    const planned = await amsync(['plan', '--tokens-dir', 'tokens', '--out', 'plan.json']);
    expect(planned.code, planned.stderr).toBe(0);
    expect(planned.stdout).toContain('+ password = (generated)');

    emu.clearRequests();
    const run = await amsync(['sync', '--tokens-dir', 'tokens', '--audit-log', 'audit.jsonl', '--auto-approve', '--json']);
    expect(run.code, run.stderr).toBe(0);
    expect(writes().map((r) => `${r.method} ${r.path}`)).toEqual(['POST /api/sshusers', 'POST /api/sshusers']);
    const alice = await readFile(sinkFile('alice'), 'utf8');
    const bob = await readFile(sinkFile('bob'), 'utf8');
    expect(alice).toHaveLength(32);
    expect(alice).toMatch(/[a-z]/);
    expect(alice).toMatch(/[A-Z]/);
    expect(alice).toMatch(/[0-9]/);
    expect(alice).toMatch(/[^a-zA-Z0-9]/);
    expect(bob).toHaveLength(20);
    expect((await stat(sinkFile('alice'))).mode & 0o777).toBe(0o600);
    expect(await passwordMatches('alice', alice)).toBe(true);
    expect(await passwordMatches('bob', bob)).toBe(true);
    const doc = JSON.parse(run.stdout) as { changes: { key: string; fields: { password: unknown } }[] };
    expect(doc.changes.map((c) => c.fields.password)).toEqual([
      { before: null, after: '(generated)' },
      { before: null, after: '(generated)' },
    ]);

    emu.clearRequests();
    const again = await amsync(['sync', '--tokens-dir', 'tokens', '--json']);
    expect(again.code, again.stderr).toBe(0);
    expect(writes()).toEqual([]);
    expect(await readFile(sinkFile('alice'), 'utf8')).toBe(alice);
    await expectNowhere([alice, bob], ['plan.json', 'audit.jsonl', '.amsync/state.json']);
  });

  it('a saved plan generates when it is applied (amsync apply), not when it is made', async () => {
    outputs.length = 0;
    const planned = await amsync(['plan', '--tokens-dir', 'tokens', '--out', 'plan.json']);
    expect(planned.code, planned.stderr).toBe(0);
    expect(await readFile(join(dir, 'plan.json'), 'utf8')).toContain('"after": "(generated)"');
    emu.clearRequests();
    const applied = await amsync(['apply', 'plan.json', '--tokens-dir', 'tokens']);
    expect(applied.code, applied.stderr).toBe(0);
    expect(writes().map((r) => `${r.method} ${r.path}`)).toEqual(['POST /api/sshusers', 'POST /api/sshusers']);
    const alice = await readFile(sinkFile('alice'), 'utf8');
    expect(await passwordMatches('alice', alice)).toBe(true);
    await expectNowhere([alice, await readFile(sinkFile('bob'), 'utf8')], ['plan.json', '.amsync/state.json']);
  });

  it('rotates on a moved clock: one PUT with a new password, the sink updated, the old one gone', async () => {
    outputs.length = 0;
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-01-01T00:00:00Z'));
    expect((await amsync(['sync', '--tokens-dir', 'tokens'])).code).toBe(0);
    const first = await readFile(sinkFile('alice'), 'utf8');
    const bob = await readFile(sinkFile('bob'), 'utf8');

    // 29 days on: not due yet.
    vi.setSystemTime(new Date('2026-01-30T00:00:00Z'));
    emu.clearRequests();
    expect((await amsync(['sync', '--tokens-dir', 'tokens'])).code).toBe(0);
    expect(writes()).toEqual([]);

    // 30 days on: due.
    vi.setSystemTime(new Date('2026-01-31T00:00:01Z'));
    const plan = await amsync(['plan', '--tokens-dir', 'tokens']);
    expect(plan.stdout).toContain('password rotation: set 30d ago, rotated every 30d');
    expect(plan.stdout).toContain('~ password = (sensitive) -> (generated)');
    emu.clearRequests();
    const run = await amsync(['sync', '--tokens-dir', 'tokens', '--audit-log', 'audit.jsonl', '--auto-approve']);
    expect(run.code, run.stderr).toBe(0);
    expect(writes().map((r) => `${r.method} ${r.path}`)).toEqual([`PUT /api/sshusers/${userId('alice')}`]);
    const second = await readFile(sinkFile('alice'), 'utf8');
    expect(second).not.toBe(first);
    expect(await passwordMatches('alice', second)).toBe(true);
    expect(await passwordMatches('alice', first)).toBe(false);
    // bob has no rotate: untouched.
    expect(await passwordMatches('bob', bob)).toBe(true);
    const audit = await readFile(join(dir, 'audit.jsonl'), 'utf8');
    expect(audit).toContain('"key":"alice"');

    // The clock restarts from the rotation: the next run makes no write.
    emu.clearRequests();
    expect((await amsync(['sync', '--tokens-dir', 'tokens'])).code).toBe(0);
    expect(writes()).toEqual([]);
    await expectNowhere([first, second, bob], ['audit.jsonl', '.amsync/state.json']);
  });

  it('a sink file that went missing is a note; --replace sshUser:NAME rotates now', async () => {
    outputs.length = 0;
    expect((await amsync(['sync', '--tokens-dir', 'tokens'])).code).toBe(0);
    const before = await readFile(sinkFile('bob'), 'utf8');
    // A sink file someone deleted: kept as it is on the service, with a note; nothing written.
    await rm(sinkFile('bob'));
    emu.clearRequests();
    const noted = await amsync(['sync', '--tokens-dir', 'tokens']);
    expect(noted.stdout).toContain('Generated password missing from the password sink (or changed there), kept as it is on the service: SSH user "bob"');
    expect(writes()).toEqual([]);
    expect(await passwordMatches('bob', before)).toBe(true);
    emu.clearRequests();
    const run = await amsync(['sync', '--tokens-dir', 'tokens', '--replace', 'sshUser:bob']);
    expect(run.code, run.stderr).toBe(0);
    expect(writes().map((r) => `${r.method} ${r.path}`)).toEqual([`PUT /api/sshusers/${userId('bob')}`]);
    const after = await readFile(sinkFile('bob'), 'utf8');
    expect(after).not.toBe(before);
    expect(await passwordMatches('bob', after)).toBe(true);
    await expectNowhere([before, after], ['.amsync/state.json']);
  });

  it('a sink that cannot be written fails the change (exit 1); the next run sets a new password and sinks it', async () => {
    outputs.length = 0;
    // A folder where alice's file goes: the sink refuses to write over it.
    await mkdir(sinkFile('alice'), { recursive: true });
    const failed = await amsync(['sync', '--tokens-dir', 'tokens']);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toContain('could not be written to the password sink');
    expect(failed.stdout).toContain('that password is lost; the next run generates a new one and sets it (an update)');
    const id = userId('alice');
    const state = JSON.parse(await readFile(join(dir, '.amsync', 'state.json'), 'utf8')) as { services: Record<string, { generatedPasswords: Record<string, { lost?: true }> }> };
    expect(Object.values(state.services)[0]!.generatedPasswords[String(id)]!.lost).toBe(true);

    await rm(sinkFile('alice'), { recursive: true });
    const plan = await amsync(['plan', '--tokens-dir', 'tokens']);
    expect(plan.stdout).toContain('the generated password was not written to the sink: a new one is generated');
    emu.clearRequests();
    const recovered = await amsync(['sync', '--tokens-dir', 'tokens']);
    expect(recovered.code, recovered.stderr).toBe(0);
    expect(writes().map((r) => `${r.method} ${r.path}`)).toEqual([`PUT /api/sshusers/${id}`]);
    const alice = await readFile(sinkFile('alice'), 'utf8');
    expect(await passwordMatches('alice', alice)).toBe(true);
    emu.clearRequests();
    expect((await amsync(['sync', '--tokens-dir', 'tokens'])).code).toBe(0);
    expect(writes()).toEqual([]);
    await expectNowhere([alice], ['.amsync/state.json']);
  });

  it('an existing user amsync never set a password for keeps it, with a note; a sync without tokensDir is exit 64 before any request', async () => {
    emu.seed({ sshUsers: [{ username: 'alice', level: 'n1', password: 'CANARY-old-alice-1' }] });
    emu.clearRequests();
    const refused = await amsync(['sync']);
    expect(refused.code).toBe(64);
    expect(refused.stderr).toContain('access.yaml:3:5: SSH user "alice" has a generated password');
    expect(refused.stderr).toContain('--tokens-dir');
    expect(emu.requests()).toEqual([]);

    const run = await amsync(['sync', '--tokens-dir', 'tokens']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('Generated password not set by amsync, kept as it is: SSH user "alice"; --replace sshUser:NAME generates and sets one.');
    expect(await passwordMatches('alice', 'CANARY-old-alice-1')).toBe(true);
  });

  it('a user or apikey whose file name in tokensDir would pass 255 bytes is refused before any request (exit 65); validate says so too', async () => {
    // 152 characters, 76 of them escaped (%20, %2F): a 304-byte file name.
    const long = 'x y/'.repeat(38);
    await writeFile(join(dir, 'access.yaml'), `sshUsers:\n  - username: alice\n    password: { generate: { length: 20 } }\n  - username: "${long}"\n    password: { generate: { length: 20 } }\napikeys:\n  - name: "${long}"\n`);
    for (const args of [['sync', '--tokens-dir', 'tokens'], ['plan', '--tokens-dir', 'tokens']]) {
      const run = await amsync(args);
      expect(run.code, run.stderr).toBe(65);
      expect(run.stderr).toContain(`error: the secret of 2 declared items cannot be stored in tokensDir ${join(dir, 'tokens')} under its name; nothing was sent\n`);
      expect(run.stderr).toContain(
        `access.yaml:4:5: error: SSH user "${long}": its generated password cannot be stored in the password sink, tokensDir ${join(dir, 'tokens', 'passwords~')}: its file name would be 304 bytes, past the 255 a file name may have (NAME_MAX; each byte of the name other than a letter, a digit, ., - or _ takes three, %XX); shorten the username (sshUsers[1].username)`,
      );
      expect(run.stderr).toContain(`access.yaml:7:5: error: apikey "${long}": its token cannot be stored in the token sink, tokensDir ${join(dir, 'tokens')}: its file name would be 304 bytes`);
    }
    // Bad input comes before a tokensDir that cannot be made (under a file: exit 1 otherwise).
    const first = await amsync(['sync', '--tokens-dir', 'access.yaml/tokens']);
    expect(first.code, first.stderr).toBe(65);
    expect(first.stderr).toContain(`access.yaml:4:5: error: SSH user "${long}": its generated password cannot be stored`);
    // Not one request: alice, whose name is fine, is not created either.
    expect(emu.requests()).toEqual([]);
    const validated = await runInProcess(['validate'], { cwd: dir, env: { AMSYNC_TOKENS_DIR: 'tokens' } });
    expect(validated.code).toBe(65);
    expect(validated.stderr).toContain(`access.yaml:4:5: error: SSH user "${long}": its generated password cannot be stored in the password sink`);
  });
});
