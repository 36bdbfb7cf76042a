import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { assertBuilt, bin, runCli } from '../helpers/cli.js';
import { waitFor } from '../helpers/daemon-deferred.js';

const TOKEN = 'interrupt-token';
const USERS = 120;
let emu: RunningEmulator;
let dir: string;
const env = () => ({ PATH: process.env.PATH ?? '', NO_COLOR: '1', AMSYNC_URL: emu.url, AMSYNC_TOKEN: TOKEN, PW: 'pw-interrupt-1', AMSYNC_STATE_KEY: 'k' });

beforeAll(async () => {
  assertBuilt();
  // Slow writes, so the signal lands mid-apply.
  emu = await startEmulator({ tokens: [TOKEN], latencyMs: 20 });
  dir = await mkdtemp(join(tmpdir(), 'amsync-interrupt-'));
  const users = Array.from({ length: USERS }, (_, i) => `  - username: user-${String(i).padStart(3, '0')}\n    password: { env: PW }\n`).join('');
  await writeFile(join(dir, 'access.yaml'), `sshUsers:\n${users}`);
});
afterAll(async () => {
  await emu.close();
  await rm(dir, { recursive: true, force: true });
});

function startSync(args: string[]) {
  const child = spawn(process.execPath, [bin, 'sync', ...args], { cwd: dir, env: env(), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
  return { child, done };
}

describe('Ctrl-C during sync: nothing already applied is lost', () => {
  it('stops starting writes, saves fingerprints, prints the results so far and the report, exits 130; the next run converges', async () => {
    const posts = () => emu.requests().filter((r) => r.method === 'POST').length;
    const run = startSync(['--report', 'report.json', '--concurrency', '4', '--rate', '40']);
    await waitFor(() => posts() >= 20, 'twenty creates to reach the service', 30_000);
    run.child.kill('SIGINT');
    const result = await run.done;
    expect(result.code).toBe(130);
    const created = emu.state().sshUsers.length;
    expect(created).toBeGreaterThanOrEqual(20);
    expect(created).toBeLessThan(USERS);
    // The plan, every result so far, and a summary line.
    expect(result.stdout).toContain('will be created');
    expect(result.stdout.match(/✓ created sshUser/g)?.length).toBe(created);
    expect(result.stdout).toContain('not started: interrupted (SIGINT)');
    expect(result.stderr).toContain('interrupted by SIGINT');
    // Fingerprints of every user it created are on disk.
    const state = JSON.parse(await readFile(join(dir, '.amsync', 'state.json'), 'utf8'));
    expect(Object.keys(Object.values<{ sshUserPasswords: object }>(state.services)[0]!.sshUserPasswords)).toHaveLength(created);
    const report = JSON.parse(await readFile(join(dir, 'report.json'), 'utf8'));
    expect(report.results.filter((r: { status: string }) => r.status === 'applied')).toHaveLength(created);

    const again = await runCli(['sync'], { cwd: dir, env: env() });
    expect(again.code).toBe(0);
    expect(emu.state().sshUsers).toHaveLength(USERS);
    const plan = await runCli(['plan', '--detailed-exitcode'], { cwd: dir, env: env() });
    expect(plan.code).toBe(0);
    expect(plan.stdout).not.toContain('drift cannot be detected');
  });
});

describe('the state file cannot be written after writes were applied', () => {
  it('keeps every result on stdout and in the report, and exits 1 with one clear line', async () => {
    emu.reset();
    emu.clearRequests();
    const stateDir = join(dir, 'gone');
    await mkdir(stateDir, { recursive: true });
    const run = startSync(['--state-file', join(stateDir, 'state.json'), '--report', 'report2.json', '--rate', '40']);
    await waitFor(() => emu.requests().some((r) => r.method === 'POST'), 'the first create', 30_000);
    // The folder of the state file turns into a file: every save from now on fails.
    await rename(stateDir, `${stateDir}-moved`);
    await writeFile(stateDir, 'not a folder');
    const result = await run.done;
    expect(result.code).toBe(1);
    expect(emu.state().sshUsers).toHaveLength(USERS);
    expect(result.stdout.match(/✓ created sshUser/g)?.length).toBe(USERS);
    const report = JSON.parse(await readFile(join(dir, 'report2.json'), 'utf8'));
    expect(report.results.filter((r: { status: string }) => r.status === 'applied')).toHaveLength(USERS);
    const errorLines = result.stderr.split('\n').filter((l) => l.startsWith('error:'));
    expect(errorLines).toHaveLength(1);
    expect(errorLines[0]).toContain(`the state file ${join(stateDir, 'state.json')} could not be written`);
    expect(result.stderr).not.toMatch(/\n\s+at /); // no stack trace
    await rm(stateDir, { force: true });
    await rm(`${stateDir}-moved`, { recursive: true, force: true });
  });
});

