import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { assertBuilt, spawnAmsync } from '../helpers/spawn.js';

/**
 * The built binary, as a user runs it: a handful of smoke tests of the launcher, the exit
 * path and real stdio. Everything else drives the CLI in-process (test/helpers/in-process.ts).
 */

const TOKEN = 'CANARY-bearer-smoke-4c1e';
const PASSWORD = 'CANARY-password-smoke-9a7b';

let emu: RunningEmulator;
let dir: string;

beforeAll(async () => {
  assertBuilt();
  emu = await startEmulator({ tokens: [TOKEN] });
  dir = await mkdtemp(join(tmpdir(), 'amsync-smoke-'));
  await writeFile(join(dir, 'access.yaml'), 'sshUsers:\n  - username: deploy\n    password: { env: DEPLOY_PASSWORD }\n');
});
afterAll(async () => {
  await emu.close();
  await rm(dir, { recursive: true, force: true });
});

const env = () => ({ AMSYNC_URL: emu.url, AMSYNC_TOKEN: TOKEN, DEPLOY_PASSWORD: PASSWORD });

describe('the amsync binary', () => {
  it('prints its version and, bare, its help on stdout: exit 0', async () => {
    const run = await spawnAmsync(['--version']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
    const bare = await spawnAmsync([]);
    expect(bare.code).toBe(0);
    expect(bare.stdout).toContain('Usage: amsync [options] [command]');
    expect(bare.stderr).toBe('');
  });

  it('reports an invalid file with file:line:col (65)', async () => {
    const bad = await spawnAmsync(['validate', '-f', 'test/fixtures/desired/unknown-key.yaml']);
    expect(bad.code).toBe(65);
    expect(bad.stderr).toContain('test/fixtures/desired/unknown-key.yaml:4:5: error:');
  });

  it('plans with --detailed-exitcode (2), and applies without asking when not at a terminal (0)', async () => {
    expect((await spawnAmsync(['plan', '--detailed-exitcode'], { cwd: dir, env: env() })).code).toBe(2);
    const sync = await spawnAmsync(['sync'], { cwd: dir, env: env() });
    expect(sync.code, sync.stderr).toBe(0);
    expect(sync.stdout).toContain('✓ created sshUser "deploy"');
    expect(sync.stdout).not.toContain('Do you want to perform these actions?');
  });

  it('prints one JSON document, and never a secret', async () => {
    const run = await spawnAmsync(['sync', '--json', '--log-level', 'trace'], { cwd: dir, env: env() });
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ formatVersion: 1, dryRun: false });
    for (const canary of [TOKEN, PASSWORD]) expect(run.stdout + run.stderr).not.toContain(canary);
  });

  /** Runs amsync and answers the built-in modules it loaded (Node's own list, written at exit). */
  async function loadedModules(args: string[], extraEnv: Record<string, string> = {}): Promise<{ run: Awaited<ReturnType<typeof spawnAmsync>>; loaded: string[] }> {
    const hook = join(dir, 'loaded-modules.mjs');
    const list = join(dir, 'loaded-modules.json');
    await writeFile(hook, `import { writeFileSync } from 'node:fs';\nprocess.on('exit', () => writeFileSync(${JSON.stringify(list)}, JSON.stringify(process.moduleLoadList)));\n`);
    const run = await spawnAmsync(args, { cwd: dir, env: { ...extraEnv, NODE_OPTIONS: `--import=${pathToFileURL(hook).href}` } });
    return { run, loaded: JSON.parse(await readFile(list, 'utf8')) as string[] };
  }

  it('a cold validate loads only what it uses: no child process, HTTP, worker or v8 module (net is there for piped stdio)', async () => {
    const { run, loaded } = await loadedModules(['validate', '-f', 'access.yaml']);
    expect(run.stderr).toContain('DEPLOY_PASSWORD');
    expect(run.code).toBe(0);
    expect(loaded).toContain('NativeModule fs/promises');
    // commander requires child_process at load; the bundle hands it a stand-in (bundle-cli.mjs).
    // node:v8 bounds the heap's growth, which validate does not need (src/cli/commands.ts).
    for (const module of ['child_process', 'dgram', 'http', 'https', 'tls', 'worker_threads', 'v8']) expect(loaded).not.toContain(`NativeModule ${module}`);
  });

  it("a plan bounds the heap's growth (it loads node:v8 to set the flag)", async () => {
    const { run, loaded } = await loadedModules(['plan'], env());
    expect(run.code, run.stderr).toBe(0);
    expect(loaded).toContain('NativeModule v8');
  });

  it('a bad command line is 64', async () => {
    const run = await spawnAmsync(['plan', '--bogus']);
    expect(run.code).toBe(64);
    expect(run.stderr).toContain("unknown option '--bogus'");
  });
});
