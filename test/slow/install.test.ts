import { copyFile, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { runActionStep, type ActionRun } from '../helpers/github-action.js';
import { assertBuilt, root, spawnCollect } from '../helpers/spawn.js';

/**
 * The install steps of the CI examples, run for real: the tarball `npm pack` makes from this
 * checkout, installed into a temporary prefix by examples/ci/gitlab-ci.yml's before_script,
 * `amsync --version`, then the GitHub Action (action.yml) finding it there, and the action's
 * plan/apply against the emulator with the installed copy. Dependencies come from npm's cache
 * when it has them (--prefer-offline), else from the registry. One install takes 10-20 s on 2
 * cores, so there is one: the action installs with the same npm command
 * (test/project/github-action.test.ts holds the two to the same flags).
 */

const version = (JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { version: string }).version;
const TOKEN = 'install-test-token';

let temp = '';
let tarball = '';
let gitlab: { code: number | null; stdout: string; stderr: string; prefix: string };
let action: ActionRun;
const runnerTemp = () => join(temp, 'runner');

/** What a process that installs needs from the environment, and nothing of amsync's. */
function baseEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('AMSYNC_') && !k.startsWith('npm_') && !k.startsWith('INPUT_')) env[k] = v;
  return env;
}

/** examples/ci/gitlab-ci.yml's `default.before_script`, in a job folder holding the tarball. */
async function gitlabInstall(prefix: string): Promise<typeof gitlab> {
  const ci = parse(await readFile(join(root, 'examples/ci/gitlab-ci.yml'), 'utf8')) as { default: { before_script: string[] } };
  const job = join(temp, 'gitlab-job');
  await mkdir(job);
  await copyFile(tarball, join(job, `amsync-${version}.tgz`));
  // `npm install --global` installs under npm's prefix: here a temporary one, on PATH.
  const env = { ...baseEnv(), npm_config_prefix: prefix, PATH: `${join(prefix, 'bin')}:${process.env.PATH ?? ''}`, AMSYNC_REF: `v${version}` };
  const run = await spawnCollect('bash', ['-eo', 'pipefail', '-c', ci.default.before_script.join('\n')], { cwd: job, env });
  return { ...run, prefix };
}

beforeAll(async () => {
  assertBuilt();
  temp = await mkdtemp(join(tmpdir(), 'amsync-install-'));
  // npm test builds first; the pack takes dist/ as it is (the prepare script would rebuild it).
  const pack = await spawnCollect('npm', ['pack', '--ignore-scripts', '--pack-destination', temp], { cwd: root, env: baseEnv() });
  expect(pack.code, pack.stderr).toBe(0);
  tarball = join(temp, `amsync-${version}.tgz`);
  // Where the action installs (RUNNER_TEMP/amsync), so that it finds amsync installed.
  gitlab = await gitlabInstall(join(runnerTemp(), 'amsync'));
  action = await runActionStep('install', { runnerTemp: runnerTemp(), inputs: { tarball: join(temp, 'not-needed.tgz'), version }, env: baseEnv() });
}, 180_000);

afterAll(async () => {
  if (temp) await rm(temp, { recursive: true, force: true });
});

describe('the CI examples install amsync from the tarball npm pack makes', () => {
  it('examples/ci/gitlab-ci.yml: installs it and checks the pinned version', async () => {
    expect(gitlab.code, gitlab.stderr).toBe(0);
    const installed = await spawnCollect(join(gitlab.prefix, 'bin', 'amsync'), ['--version'], { cwd: temp, env: baseEnv() });
    expect(installed.stdout.trim()).toBe(version);
  });

  it('action.yml: finds it installed, puts it on PATH and reports its version', async () => {
    expect(action.code, action.stderr).toBe(0);
    expect(action.path).toEqual([join(runnerTemp(), 'amsync', 'bin')]);
    expect(action.outputs.version).toBe(version);
    const installed = await spawnCollect(join(runnerTemp(), 'amsync', 'bin', 'amsync'), ['--version'], { cwd: temp, env: baseEnv() });
    expect(installed.stdout.trim()).toBe(version);
  });
});

describe('the action plans and applies with the installed amsync', () => {
  let emulator: RunningEmulator;
  let work = '';
  beforeAll(async () => {
    emulator = await startEmulator({ tokens: [TOKEN] });
    work = join(temp, 'repo');
    await mkdir(work);
    await copyFile(join(root, 'examples/minimal.yaml'), join(work, 'access.yaml'));
  });
  afterAll(async () => {
    await emulator?.close();
  });

  const step = (command: string, inputs: Record<string, string> = {}) =>
    runActionStep('run', {
      runnerTemp: runnerTemp(),
      cwd: work,
      inputs: { command, ...inputs },
      env: { ...baseEnv(), AMSYNC_URL: emulator.url, AMSYNC_TOKEN: TOKEN, DEPLOY_PASSWORD: 'install-test-password', AMSYNC_LOG_LEVEL: 'warn' },
    });

  it('plan (exit 2: changes pending), apply that plan, plan again (exit 0)', async () => {
    const plan = await step('plan');
    expect(plan.code, plan.stdout + plan.stderr).toBe(0);
    expect(plan.outputs).toMatchObject({ exitcode: '2', 'has-changes': 'true', plan: 'plan.json' });
    expect(await readFile(plan.outputs.summary!, 'utf8')).toContain('2 to create');

    const apply = await step('apply', { args: '--report report.json' });
    expect(apply.code, apply.stdout + apply.stderr).toBe(0);
    expect(apply.outputs).toMatchObject({ exitcode: '0', 'has-changes': 'false' });
    expect(JSON.parse(await readFile(join(work, 'report.json'), 'utf8'))).toMatchObject({ summary: { create: 2 } });
    expect(emulator.state().sshUsers.map((u) => u.username)).toEqual(['deploy']);

    const again = await step('plan');
    expect(again.outputs).toMatchObject({ exitcode: '0', 'has-changes': 'false' });
  });

  it('fails the step on an invalid file (exit 65), and sends nothing', async () => {
    emulator.clearRequests();
    const run = await step('plan', { file: 'missing.yaml' });
    expect(run.code).toBe(65);
    expect(run.outputs.exitcode).toBe('65');
    expect(run.stdout).toContain('::error title=amsync plan::exit 65');
    expect(emulator.requests()).toEqual([]);
  });
});
