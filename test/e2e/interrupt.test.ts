import { mkdirSync, rmSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { runInProcess } from '../helpers/in-process.js';
import { assertBuilt, spawnAmsync } from '../helpers/spawn.js';

const TOKEN = 'interrupt-token';
const USERS = 120;
let emu: RunningEmulator;
let dir: string;
const env = () => ({ AMSYNC_URL: emu.url, AMSYNC_TOKEN: TOKEN, PW: 'pw-interrupt-1', AMSYNC_STATE_KEY: 'k' });

beforeAll(async () => {
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

describe('Ctrl-C during sync: nothing already applied is lost', () => {
  it('stops starting writes, saves fingerprints, prints the results so far and the report, exits 130; the next run converges', async () => {
    // The built binary and a real SIGINT, once twenty creates have reached the service.
    assertBuilt();
    const posts = () => emu.requests().filter((r) => r.method === 'POST').length;
    const result = await spawnAmsync(['sync', '--report', 'report.json', '--concurrency', '4', '--rate', '40'], {
      cwd: dir,
      env: env(),
      poll: (child) => {
        if (posts() >= 20 && child.signalCode === null && !child.killed) child.kill('SIGINT');
      },
    });
    expect(result.signals).toEqual(['SIGINT']);
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

    const again = await runInProcess(['sync'], { cwd: dir, env: env() });
    expect(again.code).toBe(0);
    expect(emu.state().sshUsers).toHaveLength(USERS);
    const plan = await runInProcess(['plan', '--detailed-exitcode'], { cwd: dir, env: env() });
    expect(plan.code).toBe(0);
    expect(plan.stdout).not.toContain('drift cannot be detected');
  });
});

describe('the state file cannot be written after writes were applied', () => {
  it('keeps every result on stdout and in the report, and exits 1 with one clear line', async () => {
    emu.reset();
    emu.clearRequests();
    const stateDir = join(dir, 'gone');
    mkdirSync(stateDir, { recursive: true });
    let moved = false;
    const result = await runInProcess(['sync', '--state-file', join(stateDir, 'state.json'), '--report', 'report2.json'], {
      cwd: dir,
      env: env(),
      // Once the first create is reported, the state file's own path turns into a folder: every
      // save from then on fails. (Not its folder: the writer lock lives there, and a run whose
      // lock file vanished has lost its lock and stops writing — another test's subject.)
      onStdout: (chunk) => {
        if (moved || !chunk.includes('✓ created sshUser')) return;
        moved = true;
        rmSync(join(stateDir, 'state.json'), { force: true });
        mkdirSync(join(stateDir, 'state.json', 'in-the-way'), { recursive: true });
      },
    });
    expect(moved).toBe(true);
    expect(result.code).toBe(1);
    expect(emu.state().sshUsers).toHaveLength(USERS);
    expect(result.stdout.match(/✓ created sshUser/g)?.length).toBe(USERS);
    const report = JSON.parse(await readFile(join(dir, 'report2.json'), 'utf8'));
    expect(report.results.filter((r: { status: string }) => r.status === 'applied')).toHaveLength(USERS);
    const errorLines = result.stderr.split('\n').filter((l) => l.startsWith('error:'));
    expect(errorLines).toHaveLength(1);
    expect(errorLines[0]).toContain(`the state file ${join(stateDir, 'state.json')} could not be written`);
    expect(result.stderr).not.toMatch(/\n\s+at /); // no stack trace
    await rm(stateDir, { recursive: true, force: true });
  });
});

