import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command, type Option } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, parseDocument } from 'yaml';
import { registerCommands } from '../../src/cli/commands.js';
import { processIo } from '../../src/cli/io.js';
import { root } from '../helpers/paths.js';
import { installFakeAmsync, runActionStep } from '../helpers/github-action.js';

/** The real command tree, as `amsync --help` shows it. */
async function program(): Promise<Command> {
  // The program options src/cli/main.ts adds (help comes with every command).
  const p = new Command('amsync').version('0.0.0', '-V, --version');
  await registerCommands(p, { setExitCode: () => undefined, io: processIo() });
  return p;
}

function load(file: string): unknown {
  const doc = parseDocument(readFileSync(join(root, file), 'utf8'));
  expect(doc.errors.map((e) => e.message), file).toEqual([]);
  expect(doc.warnings.map((e) => e.message), file).toEqual([]);
  return doc.toJS();
}

interface Invocation {
  readonly command: string;
  readonly args: readonly string[];
  readonly where: string;
}

/** Every `amsync <command> [args]` in shell text: continuations joined, comments dropped, stopped at operators. */
function invocations(script: string, where: string): Invocation[] {
  const out: Invocation[] = [];
  for (const line of script.replace(/\\\n/g, ' ').split('\n')) {
    const code = line.replace(/(^|\s)#.*$/, '');
    for (const match of code.matchAll(/(?:^|[\s;&|(`{])amsync\s+(.*)$/g)) {
      // The call ends at the first operator, redirection or closing `)` (`v="$(amsync --version)"`).
      const words = match[1]!.split(/[;|&<>)`]|\s2>/)[0]!.split(/\s+/).filter(Boolean);
      const [command = '', ...args] = words;
      out.push({ command, args, where });
    }
  }
  return out;
}

/** Checks a call against the command tree: the command exists, and so does every flag it passes. */
function check(p: Command, call: Invocation): void {
  if (call.command.startsWith('-')) {
    // A program option (`amsync --version`).
    expect(p.options.some((o: Option) => o.long === call.command || o.short === call.command), `${call.where}: amsync has no option ${call.command}`).toBe(true);
    return;
  }
  const cmd = p.commands.find((c) => c.name() === call.command);
  expect(cmd, `${call.where}: \`amsync ${call.command}\` is not a command (${p.commands.map((c) => c.name()).join(', ')})`).toBeDefined();
  const flags = new Set(cmd!.options.flatMap((o: Option) => [o.long, o.short]).filter(Boolean));
  flags.add('--help');
  for (const arg of call.args) {
    if (!arg.startsWith('-')) continue;
    const flag = arg.split('=')[0]!;
    expect(flags.has(flag), `${call.where}: \`amsync ${call.command}\` has no option ${flag}`).toBe(true);
  }
}

type Steps = { id?: string; run?: string; uses?: string; with?: Record<string, string>; env?: Record<string, string> }[];

/** The secret a job's login step puts in the integrator key file it names in AMSYNC_REFRESH_TOKEN_FILE. */
function loginKey(steps: Steps): string | undefined {
  const login = steps.find((s) => s.run?.includes('AMSYNC_REFRESH_TOKEN_FILE=') && s.run.includes('GITHUB_ENV'));
  return /^\$\{\{ secrets\.(\w+) \}\}$/.exec(login?.env?.KEY ?? '')?.[1];
}
interface Workflow {
  on: Record<string, unknown>;
  env: Record<string, string>;
  jobs: Record<string, { steps: Steps; env?: Record<string, string>; permissions?: Record<string, string> }>;
}

const action = parse(readFileSync(join(root, 'action.yml'), 'utf8')) as { inputs: Record<string, unknown>; outputs: Record<string, unknown> };
const usesAmsync = (uses: string | undefined) => uses !== undefined && /^[\w.-]+\/amsync@v\d+\.\d+\.\d+$/.test(uses);

describe('examples/ci/github-actions.yaml', () => {
  const wf = load('examples/ci/github-actions.yaml') as Workflow;
  const steps = Object.entries(wf.jobs).flatMap(([job, j]) => j.steps.map((s, i) => ({ ...s, job, where: `jobs.${job}.steps[${i}]` })));
  const actionSteps = steps.filter((s) => usesAmsync(s.uses));
  let temp = '';
  beforeAll(async () => {
    temp = await mkdtemp(join(tmpdir(), 'amsync-ci-examples-'));
  });
  afterAll(async () => {
    await rm(temp, { recursive: true, force: true });
  });

  /** The amsync calls the action makes for each of its steps, from the action's own script. */
  async function actionCalls(): Promise<(Invocation & { job: string })[]> {
    const out: (Invocation & { job: string })[] = [];
    for (const [i, s] of actionSteps.entries()) {
      const runnerTemp = join(temp, `step-${i}`);
      const fake = await installFakeAmsync(runnerTemp);
      const inputs = Object.fromEntries(Object.entries(s.with ?? {}).map(([k, v]) => [k, String(v).replace(/^\$\{\{ env\.(\w+) \}\}$/, (_m, name: string) => wf.env[name] ?? '')]));
      const run = await runActionStep('run', { runnerTemp, inputs });
      expect(run.code, s.where).toBe(0);
      for (const [command = '', ...args] of await fake.calls()) out.push({ command, args, where: s.where, job: s.job });
    }
    return out;
  }

  it('parses; the action is given inputs it has; every amsync command and flag it runs exists', async () => {
    expect(actionSteps.length).toBeGreaterThanOrEqual(3);
    for (const s of actionSteps) for (const input of Object.keys(s.with ?? {})) expect(action.inputs, `${s.where}: input ${input}`).toHaveProperty([input]);
    // Outputs the workflow reads are outputs the action has.
    const ids = new Set(actionSteps.map((s) => s.id).filter(Boolean));
    for (const [, id, name] of JSON.stringify(wf).matchAll(/steps\.([\w-]+)\.outputs\.([\w-]+)/g)) {
      if (ids.has(id)) expect(action.outputs, `steps.${id}.outputs.${name}`).toHaveProperty([name!]);
    }
    const p = await program();
    const calls = [...(await actionCalls()), ...steps.flatMap((s) => (s.run ? invocations(s.run, s.where) : []))];
    expect(calls.length).toBeGreaterThanOrEqual(3);
    for (const call of calls) check(p, call);
  });

  it('plans pull requests with a read-only token and uploads the plan; applies that plan on merge', async () => {
    expect(Object.keys(wf.on).sort()).toEqual(['pull_request', 'push', 'workflow_dispatch']);
    const calls = await actionCalls();
    const plan = calls.find((c) => c.command === 'plan')!;
    expect(plan.job).toBe('plan');
    expect(plan.args).toEqual(expect.arrayContaining(['--detailed-exitcode', '--format', 'markdown', '--out', 'plan.json']));
    // Read-only: the plan job logs in with the read-only integrator key (issue 31: no access token secret).
    expect(loginKey(wf.jobs.plan!.steps)).toBe('AMSYNC_READONLY_KEY');
    // Without the passwords: only the apply job has them.
    expect(plan.args.join(' ')).toContain('--secrets optional');
    const passwords = (env: Record<string, string> | undefined) => Object.keys(env ?? {}).filter((k) => k.endsWith('_PASSWORD'));
    expect([...passwords(wf.env), ...passwords(wf.jobs.plan!.env)]).toEqual([]);
    expect(passwords(wf.jobs.apply!.env)).not.toEqual([]);
    expect(wf.jobs.plan!.steps.some((s) => s.uses?.startsWith('actions/upload-artifact') && s.with?.path === '${{ steps.plan.outputs.plan }}')).toBe(true);
    expect(wf.jobs.apply!.steps.some((s) => s.uses?.startsWith('actions/download-artifact'))).toBe(true);
    expect(calls.filter((c) => c.command === 'apply').map((c) => [c.job, c.args[0]])).toEqual([['apply', 'plan.json']]);
    // Never installs a package that is not published.
    expect(steps.filter((s) => s.run?.includes('npm install'))).toEqual([]);
    for (const s of actionSteps) expect(s.with?.version, s.where).toBe('${{ env.AMSYNC_VERSION }}');
  });
});

describe('examples/ci/gitlab-ci.yml', () => {
  const ci = load('examples/ci/gitlab-ci.yml') as Record<string, { script?: string[]; before_script?: string[]; needs?: string[] }>;
  const reserved = new Set(['stages', 'variables', 'default', 'include', 'workflow', 'image', 'services', 'cache', 'before_script', 'after_script']);
  const jobs = Object.entries(ci).filter(([name]) => !reserved.has(name) && !name.startsWith('.'));
  const calls = jobs.flatMap(([name, job]) => [...(job.before_script ?? []), ...(job.script ?? [])].flatMap((line, i) => invocations(line, `${name}.script[${i}]`)));
  const install = (ci.default!.before_script ?? []).flatMap((line, i) => invocations(line, `default.before_script[${i}]`));

  it('parses, and every amsync command and flag it calls exists', async () => {
    expect(jobs.map(([name]) => name)).toEqual(['amsync:build', 'amsync:plan', 'amsync:apply']);
    const p = await program();
    for (const call of [...install, ...calls]) check(p, call);
    expect(calls.map((c) => c.command)).toEqual(['validate', 'sync', 'apply']);
    // The merge request's plan runs without the passwords.
    expect(calls[1]!.args.join(' ')).toMatch(/^--dry-run --secrets optional /);
  });

  it('installs the tarball the build job packs from a pinned tag of amsync, never an unpublished package', () => {
    const vars = ci.variables as unknown as Record<string, string>;
    expect(vars.AMSYNC_REF).toMatch(/^v\d+\.\d+\.\d+$/);
    expect(ci['amsync:build']!.before_script).toEqual([]);
    expect(ci['amsync:build']!.script!.join('\n')).toMatch(/git clone --depth 1 --branch "\$AMSYNC_REF" "\$AMSYNC_REPO"[\s\S]*npm pack/);
    expect(ci.default!.before_script![0]).toMatch(/^npm install --global .*\.\/amsync-\*\.tgz$/);
    expect(install.map((c) => c.command)).toEqual(['--version']);
    for (const job of ['amsync:plan', 'amsync:apply']) expect(ci[job]!.needs, job).toContain('amsync:build');
    // test/slow/install.test.ts runs these lines against the tarball of this checkout.
  });
});

describe('examples/docker-compose.yaml', () => {
  const compose = load('examples/docker-compose.yaml') as { services: Record<string, { command: string[]; healthcheck?: unknown }> };

  it('runs commands that exist, with flags that exist', async () => {
    const p = await program();
    for (const [name, service] of Object.entries(compose.services)) {
      const [command = '', ...args] = service.command;
      check(p, { command, args, where: `services.${name}.command` });
    }
    expect(compose.services.amsync!.command.slice(0, 3)).toEqual(['daemon', '--listen', '0.0.0.0:9477']);
    expect(compose.services.emulator!.healthcheck).toBeDefined();
  });
});

describe('the check itself', () => {
  it('finds a command or a flag that does not exist, and reads shell the way the examples write it', async () => {
    const p = await program();
    const found = invocations('set +e\namsync sync --dry-run \\\n  --out plan.json > plan.md || { code=$?; }\n# amsync nothing here\nx=1; amsync aply plan.json\nv="$(amsync --version)"; [ "$v" = 1 ]', 'test');
    expect(found.map((c) => [c.command, ...c.args])).toEqual([['sync', '--dry-run', '--out', 'plan.json'], ['aply', 'plan.json'], ['--version']]);
    expect(() => check(p, { command: '--versoin', args: [], where: 'test' })).toThrow(/amsync has no option --versoin/);
    expect(() => check(p, found[1]!)).toThrow(/`amsync aply` is not a command/);
    expect(() => check(p, { command: 'apply', args: ['plan.json', '--dry-run'], where: 'test' })).toThrow(/has no option --dry-run/);
  });
});
