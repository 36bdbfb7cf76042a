import { closedPort as closedPortOf } from '../helpers/ports.js';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { type RunningEmulator } from '../../src/emulator/index.js';
import { emulatorPerTest } from '../helpers/emulator-per-test.js';
import { runInProcess } from '../helpers/in-process.js';

/**
 * What a person (stderr) and a program (`--json` on stdout) get when a command fails: one
 * line that says what happened, once; one JSON document, never two.
 */

const TOKEN = 'CANARY-failure-output-7c1e';
let emu: RunningEmulator;
let dir: string;
let closedPort: number;

emulatorPerTest(TOKEN, 'amsync-failure-', (e, d) => {
  emu = e;
  dir = d;
});
beforeAll(async () => {
  closedPort = await closedPortOf();
});

const declared = 'sshUsers:\n  - username: deploy\napikeys: []\n';

async function amsync(args: string[], env: Record<string, string> = {}, file: string | null = declared) {
  if (file !== null) await writeFile(join(dir, 'access.yaml'), file);
  // Two attempts keep the connect retries short in wall-clock time; the budget itself is unit-tested.
  return runInProcess(args, { cwd: dir, env: { AMSYNC_URL: emu.url, AMSYNC_TOKEN: TOKEN, AMSYNC_RETRY_MAX_ATTEMPTS: '2', ...env } });
}

const lines = (text: string) => text.split('\n').filter((line) => line !== '');

function errorDocument(stdout: string): { error: { code: string; message: string } } {
  const doc = JSON.parse(stdout) as { error: { code: string; message: string } };
  expect(Object.keys(doc)).toEqual(['error']);
  expect(doc.error).toEqual(expect.objectContaining({ code: expect.any(String), message: expect.any(String) }));
  return doc;
}

/** No -f, no AMSYNC_FILE, no ./access.yaml: missing, and what to do (issue 31). */
const noAccessYaml =
  'cannot read access.yaml: no such file, and neither -f nor AMSYNC_FILE names another desired-state file. Name it with -f FILE (or AMSYNC_FILE=FILE), or start one: `amsync export -o access.yaml` writes what the service holds now, and examples/access.yaml is a sample to copy';

describe('an error is printed once', () => {
  it('without access.yaml: one line, exit 65', async () => {
    const run = await amsync(['plan'], {}, null);
    expect(run.code).toBe(65);
    // The one line says what to do too (issue 31): the file to name, or how to start one.
    expect(run.stderr).toBe(`error: ${noAccessYaml}\n`);
    expect(run.stdout).toBe('');
  });

  it('a service that does not listen: one line naming the URL and the emulator, exit 1', async () => {
    const url = `http://127.0.0.1:${closedPort}`;
    const run = await amsync(['plan'], { AMSYNC_URL: url });
    expect(run.code).toBe(1);
    expect(lines(run.stderr)).toHaveLength(1);
    expect(run.stderr).toMatch(
      new RegExp(`^error: nothing listens at http://127\\.0\\.0\\.1:${closedPort} \\(connection refused; 2 attempts in [\\d.]+ s\\) — is the emulator running\\? \\(amsync emulator --port ${closedPort}\\)\\n$`),
    );
  });

  it('a token the service rejects: says so once, exit 1', async () => {
    const run = await amsync(['plan'], { AMSYNC_TOKEN: 'CANARY-not-the-token-42' });
    expect(run.code).toBe(1);
    expect(lines(run.stderr)).toHaveLength(1);
    expect(run.stderr).toMatch(/^error: GET \/api\/[\w/]+: token rejected \(401\): missing, expired or wrong/);
    expect(run.stderr).not.toContain('CANARY-not-the-token-42');
  });

  it('--ca-file that is not PEM: exit 64 naming the file and the flag, and nothing is sent', async () => {
    await writeFile(join(dir, 'ca.pem'), 'this is not a certificate\n');
    const run = await amsync(['plan', '--ca-file', 'ca.pem']);
    expect(run.code).toBe(64);
    expect(run.stderr).toBe('error: the CA file ca.pem (--ca-file, AMSYNC_CA_FILE, http.caFile) holds no PEM certificate (-----BEGIN CERTIFICATE-----); nothing was sent\n');
    expect(emu.requests()).toEqual([]);
  });
});

describe('--json prints an error document on stdout when a command fails', () => {
  it.each([['plan', '--json'], ['sync', '--json'], ['plan', '--format', 'json'], ['sync', '--format=json']].map((args) => [args.join(' '), args] as const))(
    '%s against a service that does not listen',
    async (_name, args) => {
      const run = await amsync([...args], { AMSYNC_URL: `http://127.0.0.1:${closedPort}` });
      expect(run.code).toBe(1);
      const doc = errorDocument(run.stdout);
      expect(doc.error.code).toBe('listing_incomplete');
      expect(doc.error.message).toMatch(/^nothing listens at http:\/\/127\.0\.0\.1:\d+ /);
      // The person reading the log still gets the line, once.
      expect(lines(run.stderr)).toEqual([`error: ${doc.error.message}`]);
    },
  );

  it('plan --json without access.yaml: the code, the message and the finding', async () => {
    const run = await amsync(['plan', '--json'], {}, null);
    expect(run.code).toBe(65);
    const doc = errorDocument(run.stdout) as { error: { code: string; message: string; diagnostics: unknown[] } };
    expect(doc.error).toMatchObject({ code: 'desired_unreadable', message: noAccessYaml });
    expect(doc.error.diagnostics).toEqual([expect.objectContaining({ code: 'file_unreadable', severity: 'error' })]);
  });

  it('apply --json of a plan file that does not exist', async () => {
    const run = await amsync(['apply', 'missing-plan.json', '--json']);
    expect(run.code).not.toBe(0);
    expect(errorDocument(run.stdout).error.message).toContain('missing-plan.json');
  });

  it('a bad command line with --json: the usage error as a document, exit 64', async () => {
    const run = await amsync(['plan', '--json', '--rate', 'fast']);
    expect(run.code).toBe(64);
    expect(errorDocument(run.stdout).error).toMatchObject({ code: 'bad_flag_value' });
  });

  it('export --json: refused, as a document', async () => {
    const run = await amsync(['export', '--json']);
    expect(run.code).toBe(64);
    expect(errorDocument(run.stdout).error.message).toContain('--json');
  });

  it('a command that already printed its document adds no second one (validate --json of an invalid file)', async () => {
    const run = await amsync(['validate', '--json'], {}, 'sshUsers:\n  - usernme: x\n');
    expect(run.code).toBe(65);
    expect(JSON.parse(run.stdout)).toMatchObject({ valid: false });
  });

  it('a refused plan: the report is the one document (exit 3)', async () => {
    emu.seed({ sshUsers: [{ username: 'stray' }] });
    const run = await amsync(['plan', '--json', '--prune', '--max-deletes', '0']);
    expect(run.code).toBe(3);
    expect(JSON.parse(run.stdout)).toHaveProperty('changes');
  });
});
