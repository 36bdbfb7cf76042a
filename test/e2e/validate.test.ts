import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess, type InProcessRun } from '../helpers/in-process.js';

/** Runs the CLI in-process from the repository root, with only the environment given (no AMSYNC_* leaks in). */
function amsync(args: string[], env: Record<string, string> = {}): Promise<InProcessRun> {
  return runInProcess(args, { env });
}

const exampleEnv = { DEPLOY_PASSWORD: 'demo-deploy' };
const fixture = (name: string) => `test/fixtures/desired/${name}`;
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'amsync-validate-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('amsync validate: a valid file exits 0 with a one-line summary', () => {
  it('examples/access.yaml', async () => {
    const run = await amsync(['validate', '-f', 'examples/access.yaml'], exampleEnv);
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe('examples/access.yaml: valid — 5 SSH users, 4 apikeys (1 absent), no warnings\n');
    expect(run.code).toBe(0);
  });

  it('without the secrets at hand (a CI job) it still passes, warning where each is referenced', async () => {
    const run = await amsync(['validate', '-f', 'examples/access.yaml']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('1 warning');
    expect(run.stderr).toContain('examples/access.yaml:13:15: warning: environment variable DEPLOY_PASSWORD is not set');
  });

  it('--require-secrets makes a missing secret an error (65), as plan and sync do', async () => {
    const run = await amsync(['validate', '-f', fixture('unset-secret.yaml'), '--require-secrets']);
    expect(run.code).toBe(65);
    expect(run.stderr).toContain(`${fixture('unset-secret.yaml')}:3:15: error: environment variable AMSYNC_TEST_NEVER_SET is not set`);
  });

  it.each(['examples/minimal.yaml', 'examples/all-fields.yaml'])('%s', async (file) => {
    const run = await amsync(['validate', '-f', file], exampleEnv);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/: valid — \d+ SSH users?, \d+ apikeys?/);
  });

  it('-f defaults to AMSYNC_FILE', async () => {
    const run = await amsync(['validate'], { ...exampleEnv, AMSYNC_FILE: 'examples/minimal.yaml' });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('examples/minimal.yaml: valid');
  });

  it('an empty file is a valid, empty desired state', async () => {
    const empty = join(dir, 'empty.yaml');
    writeFileSync(empty, '');
    const run = await amsync(['validate', '-f', empty]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('valid — 0 SSH users, 0 apikeys, no warnings');
  });

  it('--json prints {valid, file, counts, warnings, errors}', async () => {
    const run = await amsync(['validate', '-f', 'examples/all-fields.yaml', '--json'], exampleEnv);
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(report).toMatchObject({ valid: true, file: 'examples/all-fields.yaml', counts: { sshUsers: 5, apikeys: 2, absent: 2 }, errors: [] });
    expect(report.warnings).toEqual([expect.objectContaining({ code: 'plaintext_password', position: { file: 'examples/all-fields.yaml', line: 15, col: 15 } })]);
  });
});

describe('amsync validate: an invalid file exits 65 with file:line:col on stderr', () => {
  it.each([
    ['unknown-key.yaml', "4:5: error: unknown key 'levl' — did you mean 'level'? (sshUsers[0].levl)"],
    ['duplicate-username.yaml', "4:15: error: SSH user 'deploy' is declared twice"],
    ['apikey-password.yaml', '3:5: error: unknown key \'password\' — an apikey has no password'],
    ['bad-types.yaml', '2:15: error: expected a string, got the number 1234'],
    ['two-documents.yaml', '3:1: error: the file holds 2 YAML documents'],
    ['alias-bomb.yaml', '2:8: error: aliases expand to too much data'],
  ])('%s', async (name, expected) => {
    const run = await amsync(['validate', '-f', fixture(name)]);
    expect(run.code).toBe(65);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(`${fixture(name)}:${expected}`);
    expect(run.stderr).toContain('nothing was sent');
  });

  it('every error of a file is listed, not only the first', async () => {
    const run = await amsync(['validate', '-f', fixture('bad-types.yaml')]);
    expect(run.code).toBe(65);
    for (const at of ['2:15', '3:9', '6:16', '7:12']) expect(run.stderr).toContain(`${fixture('bad-types.yaml')}:${at}: error:`);
  });

  it('binary and non-UTF-8 files', async () => {
    const binary = join(dir, 'binary.yaml');
    writeFileSync(binary, Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00]));
    const latin1 = join(dir, 'latin1.yaml');
    writeFileSync(latin1, Buffer.from('sshUsers:\n  - username: j\xf6rg\n', 'latin1'));
    const nul = join(dir, 'nul.yaml');
    writeFileSync(nul, 'sshUsers:\n  - username: a\u0000\n');
    expect((await amsync(['validate', '-f', binary])).stderr).toContain(`${binary}:1:1: error: the file is not UTF-8 text`);
    expect((await amsync(['validate', '-f', latin1])).stderr).toContain(`${latin1}:2:16: error: the file is not UTF-8 text`);
    const run = await amsync(['validate', '-f', nul]);
    expect(run.code).toBe(65);
    expect(run.stderr).toContain(`${nul}:2:16: error: control character U+0000`);
  });

  it('a missing file', async () => {
    const run = await amsync(['validate', '-f', 'no-such-file.yaml']);
    expect(run.code).toBe(65);
    expect(run.stderr).toContain('cannot read no-such-file.yaml: no such file');
  });

  it('--json still prints the report on stdout', async () => {
    const run = await amsync(['validate', '-f', fixture('unknown-key.yaml'), '--json']);
    expect(run.code).toBe(65);
    const report = JSON.parse(run.stdout) as { valid: boolean; errors: { code: string }[] };
    expect(report.valid).toBe(false);
    expect(report.errors.map((e) => e.code)).toEqual(['unknown_key']);
  });

  it('a bad settings file is 65 with its position', async () => {
    const run = await amsync(['validate', '-f', 'examples/minimal.yaml', '--settings', fixture('bad-settings.yaml')], exampleEnv);
    expect(run.code).toBe(65);
    expect(run.stderr).toContain(`${fixture('bad-settings.yaml')}:2:1: error: unknown key 'concurency' — did you mean 'concurrency'?`);
  });

  it('a bad AMSYNC_* value is 65 naming the variable', async () => {
    const run = await amsync(['validate', '-f', 'examples/minimal.yaml'], { ...exampleEnv, AMSYNC_RATE: 'fast' });
    expect(run.code).toBe(65);
    expect(run.stderr).toContain("AMSYNC_RATE must be a number greater than 0, got 'fast'");
  });
});

describe('amsync validate: a bad command line exits 64', () => {
  it.each([[['validate', '--bogus']], [['validate', '-f']], [['validate', '--token', 'x']]])('%j', async (args) => {
    const run = await amsync(args);
    expect(run.code).toBe(64);
    expect(run.stderr).toMatch(/error: /);
  });
});

describe('amsync validate sends no request, ever', () => {
  let server: Server;
  let connections = 0;
  let port = 0;

  beforeAll(async () => {
    server = createServer((socket) => {
      connections += 1;
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    port = typeof address === 'object' && address ? address.port : 0;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('even with a service URL and a token configured', async () => {
    const env = { ...exampleEnv, AMSYNC_URL: `http://127.0.0.1:${port}`, AMSYNC_TOKEN: 'tok' };
    expect((await amsync(['validate', '-f', 'examples/access.yaml'], env)).code).toBe(0);
    expect((await amsync(['validate', '-f', fixture('unknown-key.yaml')], env)).code).toBe(65);
    expect(connections).toBe(0);
  });
});
