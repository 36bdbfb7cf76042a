import { rmSync, utimesSync, writeFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { runInProcess } from '../helpers/in-process.js';
import { startLockHolder } from '../helpers/spawn.js';
import { createServiceContext } from '../../src/cli/service-context.js';
import { LockLostError } from '../../src/errors.js';
import { createLogger } from '../../src/obs/logger.js';

/**
 * Two runs at once on one state file, in-process: both go through the writer lock (a file
 * created by an atomic link, naming its holder); two runs of one process see the holder as
 * running, as they would another process; runs in one working directory overlap
 * (test/helpers/in-process.ts). The holders that die or are paused are real processes
 * (startLockHolder, test/helpers/spawn.ts).
 */

const TOKEN = 'one-writer-token';
let emu: RunningEmulator;
let dir: string;

// Eight new keys: the adversarial finding was 16 live keys after two concurrent syncs.
const file = `apikeys:\n${Array.from({ length: 8 }, (_, i) => `  - name: key-${i}\n`).join('')}`;

beforeAll(async () => {
  // Latency makes the two runs overlap for certain: each listing and create takes a while.
  emu = await startEmulator({ tokens: [TOKEN], latencyMs: 150 });
  dir = await mkdtemp(join(tmpdir(), 'amsync-one-writer-'));
  await writeFile(join(dir, 'access.yaml'), file);
});
afterAll(async () => {
  await emu.close();
  await rm(dir, { recursive: true, force: true });
});

const sync = (extra: string[] = []) => runInProcess(['sync', ...extra], { cwd: dir, env: { AMSYNC_URL: emu.url, AMSYNC_TOKEN: TOKEN } });

describe('two writers sharing a state file never duplicate apikeys', () => {
  it('run at once, one writes and the other is refused (exit 3, nothing written); or waits with --lock-timeout', async () => {
    emu.reset();
    const [a, b] = await Promise.all([sync(), sync()]);
    // Overlapping, the second is refused (3); if the first was done before the second took the
    // lock, the second found nothing to do (0). Never two writers: never 16 keys.
    expect([a.code, b.code].sort()).toContainEqual(0);
    for (const run of [a, b]) {
      expect([0, 3]).toContain(run.code);
      if (run.code === 3) expect(run.stderr).toContain('another amsync run is writing to this service');
    }
    expect(emu.state().apikeys).toHaveLength(8);

    emu.reset();
    const [c, d] = await Promise.all([sync(['--lock-timeout', '60000']), sync(['--lock-timeout', '60000'])]);
    expect([c.code, d.code]).toEqual([0, 0]);
    expect(emu.state().apikeys).toHaveLength(8);
    // The second run listed after the first had finished: it had nothing left to create.
    expect([c.stdout, d.stdout].some((out) => out.includes('No changes.'))).toBe(true);
  });

  it('a dry-run takes no lock: plans run beside a writer', async () => {
    emu.reset();
    const [w, p] = await Promise.all([sync(), runInProcess(['plan'], { cwd: dir, env: { AMSYNC_URL: emu.url, AMSYNC_TOKEN: TOKEN } })]);
    expect(w.code).toBe(0);
    expect(p.code).toBe(0);
  });
});

describe('the second writer reads the state file once it holds the lock', () => {
  it("keeps the first writer's fingerprints and key: the next plan has nothing to do and can detect drift for every user", async () => {
    emu.reset();
    const users = Array.from({ length: 6 }, (_, i) => `  - username: user-${i}\n    password: { env: PW }\n`).join('');
    const stateDir = await mkdtemp(join(tmpdir(), 'amsync-one-writer-state-'));
    await writeFile(join(stateDir, 'access.yaml'), `sshUsers:\n${users}`);
    const env = { AMSYNC_URL: emu.url, AMSYNC_TOKEN: TOKEN, PW: 'pw-one-writer-1' };
    // The first writer's first create fails, so the second (which waited) has one to make.
    emu.setFaults({ rules: [{ method: 'POST', path: '^/api/sshusers$', times: 1, status: 400 }] });
    const wait = ['sync', '--lock-timeout', '60000'];
    const [a, b] = await Promise.all([runInProcess(wait, { cwd: stateDir, env }), runInProcess(wait, { cwd: stateDir, env })]);
    emu.setFaults({ rules: [] });
    expect([a.code, b.code].sort()).toEqual([0, 1]);
    expect(emu.state().sshUsers).toHaveLength(6);
    const state = JSON.parse(await readFile(join(stateDir, '.amsync', 'state.json'), 'utf8')) as { services: Record<string, { sshUserPasswords: Record<string, string> }> };
    expect(Object.keys(Object.values(state.services)[0]!.sshUserPasswords).sort()).toEqual(emu.state().sshUsers.map((u) => String(u.id)).sort());
    const plan = await runInProcess(['plan', '--detailed-exitcode'], { cwd: stateDir, env });
    expect(plan.stdout).not.toContain('drift cannot be detected');
    expect(plan.code).toBe(0);
    await rm(stateDir, { recursive: true, force: true });
  });
});

describe('a writer that died or is paused: what the lock says is true (issue 27)', () => {
  /** A folder of its own with `keys` apikeys declared; its lock is `.amsync/state.json.lock`. */
  async function workDir(keys: number): Promise<{ dir: string; lock: string; run: (extra?: string[], onStdout?: (chunk: string) => void) => ReturnType<typeof runInProcess> }> {
    const work = await mkdtemp(join(tmpdir(), 'amsync-one-writer-lock-'));
    await writeFile(join(work, 'access.yaml'), `apikeys:\n${Array.from({ length: keys }, (_, i) => `  - name: held-${i}\n`).join('')}`);
    return {
      dir: work,
      lock: join(work, '.amsync', 'state.json.lock'),
      run: (extra = [], onStdout) => runInProcess(['sync', ...extra], { cwd: work, env: { AMSYNC_URL: emu.url, AMSYNC_TOKEN: TOKEN }, ...(onStdout ? { onStdout } : {}) }),
    };
  }
  const posts = () => emu.requests().filter((r) => r.method === 'POST').length;

  it('a holder killed with kill -9 (an OOM kill): the next run takes the lock over at once, naming the dead pid, and writes', async () => {
    emu.reset();
    const work = await workDir(2);
    const holder = await startLockHolder(work.lock, work.dir);
    await holder.kill();
    const result = await work.run();
    expect(result.stderr).not.toContain('another amsync run is writing');
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(`pid ${holder.pid}`);
    expect(result.stderr).toMatch(/no longer running/);
    expect(emu.state().apikeys).toHaveLength(2);
    await rm(work.dir, { recursive: true, force: true });
  });

  it('a paused holder (SIGSTOP) is never taken over, however long ago it refreshed its lock: the second run is refused (exit 3, naming its pid), nothing is written', async () => {
    emu.reset();
    emu.clearRequests();
    const work = await workDir(2);
    const holder = await startLockHolder(work.lock, work.dir);
    try {
      await holder.pause();
      // As if the pause had lasted ten minutes: far past any stale time.
      const old = new Date(Date.now() - 10 * 60_000);
      utimesSync(work.lock, old, old);
      const result = await work.run();
      expect(result.code).toBe(3);
      expect(result.stderr).toContain('another amsync run is writing to this service');
      expect(result.stderr).toContain(`pid ${holder.pid}`);
      expect(result.stderr).toContain('stopped');
      expect(posts()).toBe(0);
      expect(emu.state().apikeys).toHaveLength(0);
      // It still holds the lock when it resumes: never two writers.
      holder.resume();
      expect(await readFile(work.lock, 'utf8')).toContain(`"pid":${holder.pid}`);
    } finally {
      holder.resume();
      await holder.kill();
      await rm(work.dir, { recursive: true, force: true });
    }
  });

  it('a run whose lock was taken over sends no more writes: exit 1, saying the lock was lost and who holds it; applied is what the service received', async () => {
    emu.reset();
    emu.clearRequests();
    const work = await workDir(6);
    let taken = false;
    // One write at a time: when the first result is printed, the next write is not yet sent.
    const result = await work.run(['--concurrency', '1'], (chunk) => {
      if (taken || !chunk.includes('✓ created apikey')) return;
      taken = true;
      // Another writer took the lock over (as one would after a pause longer than the stale time on another host).
      rmSync(work.lock, { recursive: true, force: true });
      writeFileSync(work.lock, `${JSON.stringify({ host: hostname(), pid: process.pid, start: 'another', nonce: 'another-writer', acquiredAt: new Date().toISOString() })}\n`);
    });
    expect(taken).toBe(true);
    const applied = result.stdout.match(/✓ created apikey/g)?.length ?? 0;
    expect(posts()).toBe(1);
    expect(applied).toBe(posts());
    expect(emu.state().apikeys).toHaveLength(1);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`the writer lock ${work.lock} was lost`);
    expect(result.stderr).toContain(`pid ${process.pid}`);
    await rm(work.dir, { recursive: true, force: true });
  });
});

describe("a daemon leader's sync under a Lease", () => {
  it('a write its Lease fences (writeFence: the renew deadline missed) is never sent: the service receives what was applied before, nothing after', async () => {
    emu.reset();
    emu.clearRequests();
    const work = await mkdtemp(join(tmpdir(), 'amsync-one-writer-lease-'));
    await writeFile(join(work, 'access.yaml'), `apikeys:\n${Array.from({ length: 4 }, (_, i) => `  - name: leased-${i}\n`).join('')}`);
    const context = await createServiceContext(
      { file: join(work, 'access.yaml'), stateFile: join(work, 'state.json'), concurrency: 1 },
      { env: { AMSYNC_URL: emu.url, AMSYNC_TOKEN: TOKEN }, stderr: process.stderr },
      { logger: createLogger({ level: 'silent' }) },
    );
    try {
      const loaded = await context.loadDesired();
      // As LeaseElector.fence does once the leader has not renewed within its renew deadline: after the first write.
      let checks = 0;
      const fence = () => {
        checks += 1;
        if (checks > 1) throw new LockLostError('leadership lost: could not renew lease:amsync/test for 50 s');
      };
      const outcome = await context.sync(loaded.desired, { dryRun: false, writeFence: fence });
      const applied = outcome.results!.filter((r) => r.status === 'applied').length;
      const posts = emu.requests().filter((r) => r.method === 'POST').length;
      expect(applied).toBe(1);
      expect(posts).toBe(applied);
      // Held back by the fence before the wire: not started (never sent), and the report says why.
      expect(outcome.results!.filter((r) => r.status === 'failed')).toEqual([]);
      expect(outcome.results!.filter((r) => r.notStarted)).toHaveLength(3);
      expect(outcome.results!.find((r) => r.notStarted)?.error).toContain('leadership lost');
      // The fence belonged to that sync: the client's next writes are not fenced by it.
      await context.client().createApikey({ name: 'after-the-run' });
      expect(emu.requests().filter((r) => r.method === 'POST')).toHaveLength(2);
    } finally {
      context.close();
      await rm(work, { recursive: true, force: true });
    }
  });
});
