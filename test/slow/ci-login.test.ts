import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { chmod, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { buildProgram } from '../../src/cli/main.js';
import { processIo } from '../../src/cli/io.js';
import { root } from '../helpers/paths.js';
import { spawnCollect } from '../helpers/spawn.js';

/**
 * Issue 31, deliverable 4: the CI examples log in as the real service needs — with an
 * integrator key (access tokens last 15 minutes), never an access token kept as a secret; plan
 * pull/merge requests with a read-only key and none of the passwords (`--secrets optional`);
 * apply on the default branch only; keep a key the service rotated (the apply job writes it
 * back where the next job reads it; a pull request's job, which must hold no token that writes
 * secrets, fails and says so); and GitLab plans read a cache the apply job writes although
 * GitLab keeps the caches of protected and unprotected branches apart. The login and write-back
 * shell is run here (bash, a fake `gh`, a stand-in GitLab API on 127.0.0.1).
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Obj = any;

const github = parse(readFileSyncText('examples/ci/github-actions.yaml')) as Obj;
const gitlab = parse(readFileSyncText('examples/ci/gitlab-ci.yml')) as Obj;

function readFileSyncText(file: string): string {
  return readFileSync(join(root, file), 'utf8');
}

/** Every `amsync …` call in shell text (as test/project/ci-examples.test.ts reads them). */
function amsyncCalls(script: string): string[][] {
  const out: string[][] = [];
  for (const line of script.replace(/\\\n/g, ' ').split('\n')) {
    const code = line.replace(/(^|\s)#.*$/, '');
    for (const match of code.matchAll(/(?:^|[\s;&|(`{])amsync\s+(.*)$/g)) out.push(match[1]!.split(/[;|&<>)`]|\s2>/)[0]!.split(/\s+/).filter(Boolean));
  }
  return out;
}

/** The amsync calls the action makes for a step (scripts/github-action.sh, by its command input). */
function actionCall(w: Record<string, string>): string[] {
  const file = w.file ?? 'access.yaml';
  const plan = w.plan ?? 'plan.json';
  const extra = (w.args ?? '').split(/\s+/).filter(Boolean);
  const base: Record<string, string[]> = {
    validate: ['validate', '-f', file],
    plan: ['plan', '-f', file, '--detailed-exitcode', '--format', 'markdown', '--out', plan],
    sync: ['sync', '-f', file, '--format', 'markdown'],
    apply: ['apply', plan, '-f', file, '--format', 'markdown'],
  };
  return w.command === 'setup' ? [] : [...base[w.command ?? 'plan']!, ...extra];
}

/** Parses a call with the real command line parser (no action runs): throws what amsync would say. */
async function parseWithCli(args: string[]): Promise<void> {
  const errors: string[] = [];
  const program = await buildProgram(processIo(), { setExitCode: () => undefined }, undefined, (text) => errors.push(text));
  const quiet = (c: Command) => {
    c.exitOverride().configureOutput({ writeOut: () => undefined, writeErr: (t) => errors.push(t), outputError: (t) => errors.push(t) });
    c.action(() => undefined);
    c.commands.forEach(quiet);
  };
  program.commands.forEach(quiet);
  program.configureOutput({ writeOut: () => undefined, writeErr: (t) => errors.push(t), outputError: (t) => errors.push(t) });
  try {
    await program.parseAsync(['node', 'amsync', ...args]);
  } catch (error) {
    // `--version` ends the parse with its own code: not a mistake.
    if ((error as { code?: string }).code === 'commander.version') return;
    throw new Error(`amsync ${args.join(' ')}: ${errors.join('') || (error as Error).message}`);
  }
}

const secretsIn = (value: unknown): string[] => [...JSON.stringify(value).matchAll(/secrets\.(\w+)/g)].map((m) => m[1]!);
const passwordNames = (names: string[]) => names.filter((n) => /PASSWORD/.test(n));

let temp = '';
beforeAll(async () => {
  temp = await mkdtemp(join(tmpdir(), 'amsync-ci-login-'));
});
afterAll(async () => {
  await rm(temp, { recursive: true, force: true });
});

function bash(script: string, env: Record<string, string>, cwd = temp): { code: number | null; out: string } {
  const run = spawnSync('bash', ['-e', '-c', script], { cwd, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env }, encoding: 'utf8' });
  return { code: run.status, out: `${run.stdout}${run.stderr}` };
}

/** bash, without blocking this process (the stand-in API answers from it). */
async function bashAsync(script: string, env: Record<string, string>, cwd: string): Promise<{ code: number | null; out: string }> {
  const run = await spawnCollect('bash', ['-e', '-c', script], { cwd, env: { HOME: process.env.HOME ?? '', ...env } });
  return { code: run.code, out: `${run.stdout}${run.stderr}` };
}

describe('examples/ci/github-actions.yaml', () => {
  const jobs = github.jobs as Record<string, { steps: Obj[]; env?: Record<string, string>; if?: string; environment?: string }>;
  const stepIndex = (job: string, pred: (s: Obj) => boolean) => jobs[job]!.steps.findIndex(pred);
  const login = (job: string) => jobs[job]!.steps.find((s) => s.name?.startsWith('Log in'));

  it('uses no access token secret: each job that talks to the service logs in with an integrator key first', async () => {
    expect(readFileSyncText('examples/ci/github-actions.yaml')).not.toMatch(/AMSYNC_TOKEN|READONLY_TOKEN/);
    for (const [name, key] of [['plan', 'AMSYNC_READONLY_KEY'], ['apply', 'AMSYNC_INTEGRATOR_KEY']] as const) {
      const at = stepIndex(name, (s) => s.name?.startsWith('Log in'));
      expect(login(name)?.env?.KEY, name).toBe(`\${{ secrets.${key} }}`);
      // Before the first step that reaches the service (plan, apply: not install or validate).
      const first = stepIndex(name, (s) => ['plan', 'apply', 'sync'].includes(s.with?.command));
      expect(at, name).toBeGreaterThanOrEqual(0);
      expect(at, name).toBeLessThan(first);
    }
  });

  it('the amsync calls are valid command lines for the real parser; the pull request plan has --secrets optional and no password', async () => {
    const calls = Object.entries(jobs).flatMap(([job, j]) => j.steps.flatMap((s: Obj) => (s.uses?.includes('/amsync@') ? [{ job, args: actionCall(s.with ?? {}) }] : s.run ? amsyncCalls(s.run).map((args) => ({ job, args })) : [])));
    expect(calls.filter((c) => c.args.length > 0).map((c) => `${c.job}: ${c.args[0]}`)).toEqual(['plan: validate', 'plan: plan', 'apply: apply']);
    for (const c of calls) if (c.args.length > 0) await parseWithCli(c.args);
    const plan = calls.find((c) => c.args[0] === 'plan')!;
    expect(plan.args.join(' ')).toContain('--secrets optional');
    // The plan job holds no password, no read-write key, and no token that writes secrets.
    const planSecrets = [...secretsIn(jobs.plan), ...secretsIn(github.env)];
    expect(passwordNames(planSecrets)).toEqual([]);
    expect(planSecrets.sort()).toEqual(['AMSYNC_READONLY_KEY', 'AMSYNC_STATE_KEY']);
  });

  it('applies on the default branch only, in the protected environment, one job at a time', () => {
    expect(jobs.apply!.if).toContain("github.ref == 'refs/heads/main'");
    expect(jobs.apply!.if).toContain("github.event_name != 'pull_request'");
    expect(jobs.apply!.environment).toBe('access');
    expect(jobs.apply).toMatchObject({ concurrency: { group: 'amsync-apply', 'cancel-in-progress': false } });
  });

  it('the login step writes the key to a 0600 file in RUNNER_TEMP and names it in GITHUB_ENV, printing nothing of it', async () => {
    const runnerTemp = join(temp, 'gh-login');
    await mkdir(runnerTemp, { recursive: true });
    const githubEnv = join(runnerTemp, 'github-env');
    const run = bash(login('apply').run, { KEY: 'CANARY-ci-login-key-1', RUNNER_TEMP: runnerTemp, GITHUB_ENV: githubEnv });
    expect(run.code, run.out).toBe(0);
    expect(run.out).not.toContain('CANARY');
    const keyFile = join(runnerTemp, 'amsync-key', 'integrator-key');
    expect(await readFile(githubEnv, 'utf8')).toBe(`AMSYNC_REFRESH_TOKEN_FILE=${keyFile}\n`);
    expect(await readFile(keyFile, 'utf8')).toBe('CANARY-ci-login-key-1\n');
    expect((await stat(keyFile)).mode & 0o777).toBe(0o600);
  });

  it('a rotated key is stored back into the environment secret by the apply job (from stdin); the plan job fails and says why', async () => {
    const runnerTemp = join(temp, 'gh-rotate');
    await mkdir(join(runnerTemp, 'bin'), { recursive: true });
    const calls = join(runnerTemp, 'gh-calls');
    // A stand-in gh: records its arguments and what it read.
    await writeFile(join(runnerTemp, 'bin', 'gh'), `#!/usr/bin/env bash\nprintf '%s\\n' "$*" >> "${calls}"\ncat >> "${calls}"\n`);
    await chmod(join(runnerTemp, 'bin', 'gh'), 0o755);
    const env = { KEY: 'CANARY-ci-old-key', RUNNER_TEMP: runnerTemp, GITHUB_ENV: join(runnerTemp, 'env'), GITHUB_REPOSITORY: 'acme/access', GH_TOKEN: 'x', PATH: `${join(runnerTemp, 'bin')}:${process.env.PATH}` };
    const keep = jobs.apply!.steps.find((s) => s.name === 'Keep the rotated integrator key');
    expect(keep.if).toBe('always()');
    expect(keep.env.GH_TOKEN).toBe('${{ secrets.AMSYNC_SECRETS_WRITER }}');
    expect(bash(login('apply').run, env).code).toBe(0);
    // Not rotated: nothing stored.
    const same = bash(keep.run, env);
    expect([same.code, same.out]).toEqual([0, 'the integrator key was not rotated\n']);
    await expect(readFile(calls, 'utf8')).rejects.toThrow(/ENOENT/);
    // amsync wrote a rotated key back to its file.
    await writeFile(join(runnerTemp, 'amsync-key', 'integrator-key'), 'CANARY-ci-new-key\n');
    const rotated = bash(keep.run, env);
    expect(rotated.code, rotated.out).toBe(0);
    expect(rotated.out).not.toContain('CANARY');
    expect(await readFile(calls, 'utf8')).toBe('secret set AMSYNC_INTEGRATOR_KEY --env access --repo acme/access\nCANARY-ci-new-key\n');
    // The plan job: no write-back, a failure that says what to do.
    const check = jobs.plan!.steps.find((s) => s.name === 'Check that the read-only key was not rotated');
    expect(check.if).toBe('always()');
    const failed = bash(check.run, env);
    expect(failed.code).toBe(1);
    expect(failed.out).toMatch(/^::error::the service rotated the read-only integrator key: AMSYNC_READONLY_KEY is retired now/);
    expect(failed.out).not.toContain('CANARY');
  });
});

describe('examples/ci/gitlab-ci.yml', () => {
  const job = (name: string) => gitlab[name] as { script: string[]; cache?: Obj; rules?: Obj[]; extends?: string; resource_group?: string };
  const cachesOf = (name: string): Obj[] => {
    const j = job(name);
    const c = j.cache ?? (j.extends ? gitlab[j.extends].cache : undefined);
    return c === undefined ? [] : Array.isArray(c) ? c : [c];
  };

  it('uses no access token variable: plan and apply log in with an integrator key before amsync talks to the service', () => {
    expect(readFileSyncText('examples/ci/gitlab-ci.yml')).not.toMatch(/AMSYNC_TOKEN|READONLY_TOKEN/);
    for (const [name, key, command] of [['amsync:plan', 'AMSYNC_READONLY_KEY', 'sync'], ['amsync:apply', 'AMSYNC_INTEGRATOR_KEY', 'apply']] as const) {
      const script = job(name).script;
      const exportAt = script.findIndex((l) => l.startsWith('export AMSYNC_REFRESH_TOKEN_FILE='));
      const keyAt = script.findIndex((l) => l.includes(`"$${key}" > "$AMSYNC_REFRESH_TOKEN_FILE"`));
      const callAt = script.findIndex((l) => amsyncCalls(l).some((c) => c[0] === command));
      expect([exportAt >= 0, keyAt > exportAt, callAt > keyAt], name).toEqual([true, true, true]);
    }
  });

  it('the amsync calls are valid command lines for the real parser; the merge request plan has --secrets optional and no password or writer token', async () => {
    const names = Object.keys(gitlab).filter((k) => k.startsWith('amsync:'));
    const calls = names.flatMap((n) => [...(gitlab[n].before_script ?? gitlab.default.before_script), ...job(n).script].flatMap((l: string) => amsyncCalls(l)));
    expect(calls.length).toBeGreaterThanOrEqual(3);
    for (const c of calls) await parseWithCli(c);
    const plan = job('amsync:plan').script.join('\n');
    expect(plan).toContain('sync --dry-run --secrets optional');
    expect(plan).not.toMatch(/PASSWORD|AMSYNC_INTEGRATOR_KEY|AMSYNC_VARIABLES_TOKEN/);
    expect(job('amsync:plan').rules!.map((r) => r.if)).toContain('$CI_PIPELINE_SOURCE == "merge_request_event"');
    // Applies on the default branch only, one at a time.
    expect(job('amsync:apply').rules!.map((r) => r.if)).toEqual(['$CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH']);
    expect(job('amsync:apply').resource_group).toBe('amsync-apply');
  });

  it('plans read the password state the apply job writes, in a cache shared by protected and unprotected pipelines; the apply keeps its own protected one', () => {
    const [planCache] = cachesOf('amsync:plan');
    expect(planCache).toMatchObject({ policy: 'pull', unprotect: true });
    const apply = cachesOf('amsync:apply');
    const copy = apply.find((c) => c.key === planCache.key);
    expect(copy).toMatchObject({ policy: 'push', unprotect: true, paths: planCache.paths });
    const own = apply.find((c) => c.key !== planCache.key);
    expect(own).toMatchObject({ policy: 'pull-push', paths: planCache.paths });
    expect(own.unprotect).toBeUndefined();
  });

  describe('the apply job, run with a stand-in amsync and a stand-in GitLab API', () => {
    let server: Server;
    let api = '';
    const puts: { url: string; token: string; body: string }[] = [];
    beforeAll(async () => {
      server = createServer((req: IncomingMessage, res) => {
        let body = '';
        req.on('data', (c: Buffer) => (body += c.toString()));
        req.on('end', () => {
          puts.push({ url: `${req.method} ${req.url}`, token: String(req.headers['private-token']), body });
          res.writeHead(req.url?.includes('/projects/7/') ? 200 : 404, { connection: 'close' }).end('{}');
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      api = `http://127.0.0.1:${(server.address() as { port: number }).port}/api/v4`;
    });
    afterAll(async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    });

    /** The job's script lines as GitLab runs them: one shell, stopping at the first failing line. */
    async function runApply(rotate: boolean, exit: number, project = '7'): Promise<{ code: number | null; out: string }> {
      const dir = await mkdtemp(join(temp, 'gl-'));
      await mkdir(join(dir, 'bin'));
      // amsync: rotates the key in its file (as the client does after an exchange), then exits.
      await writeFile(join(dir, 'bin', 'amsync'), `#!/usr/bin/env bash\n${rotate ? 'printf "CANARY-gl-new-key\\n" > "$AMSYNC_REFRESH_TOKEN_FILE"\n' : ''}exit ${exit}\n`);
      await chmod(join(dir, 'bin', 'amsync'), 0o755);
      const script = job('amsync:apply').script.join('\n');
      return bashAsync(script, { PATH: `${join(dir, 'bin')}:${process.env.PATH}`, TMPDIR: dir, AMSYNC_INTEGRATOR_KEY: 'CANARY-gl-old-key', AMSYNC_VARIABLES_TOKEN: 'glpat-test', CI_API_V4_URL: api, CI_PROJECT_ID: project }, dir);
    }

    it('a rotated key is stored back through the API (PUT, the project token), and the exit code is amsync’s', async () => {
      puts.length = 0;
      const run = await runApply(true, 1);
      expect(run.code).toBe(1);
      expect(run.out).not.toContain('CANARY');
      expect(puts).toEqual([{ url: 'PUT /api/v4/projects/7/variables/AMSYNC_INTEGRATOR_KEY', token: 'glpat-test', body: 'value=CANARY-gl-new-key' }]);
    });

    it('a key not rotated is not written; a write-back that fails fails the job and says what to do', async () => {
      puts.length = 0;
      expect((await runApply(false, 0)).code).toBe(0);
      expect(puts).toEqual([]);
      const failed = await runApply(true, 0, '8');
      expect(failed.code).toBe(1);
      expect(failed.out).toContain('the rotated integrator key could not be stored in AMSYNC_INTEGRATOR_KEY (HTTP 404): make a new key in the service UI and store it there');
      expect(failed.out).not.toContain('CANARY');
    });
  });
});
