import { existsSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { root } from '../helpers/paths.js';
import { actionScript, inputVariable, installFakeAmsync, runActionStep } from '../helpers/github-action.js';

/**
 * action.yml at the repository root: a composite action that installs amsync and runs one
 * command with the README's exit-code contract. Its shell lives in scripts/github-action.sh,
 * run here with a stand-in amsync; test/slow/install.test.ts runs it with the real one.
 */

interface Step {
  id: string;
  shell: string;
  run: string;
  env?: Record<string, string>;
}
interface Action {
  inputs: Record<string, { description: string; default?: string }>;
  outputs: Record<string, { description: string; value: string }>;
  runs: { using: string; steps: Step[] };
}

const action = parse(readFileSync(join(root, 'action.yml'), 'utf8')) as Action;
const script = readFileSync(actionScript, 'utf8');

/** The body of one shell function of the script. */
const body = (name: string): string => {
  const start = script.indexOf(`\n${name}() {\n`);
  expect(start, name).toBeGreaterThan(-1);
  return script.slice(start, script.indexOf('\n}\n', start));
};

// The shape GitHub requires of a composite action, and what amsync's promises.
const schema = {
  type: 'object',
  required: ['name', 'description', 'inputs', 'outputs', 'runs'],
  properties: {
    name: { type: 'string', minLength: 1 },
    description: { type: 'string', minLength: 1 },
    inputs: {
      type: 'object',
      required: ['command', 'file', 'plan', 'args', 'version', 'tarball'],
      additionalProperties: {
        type: 'object',
        required: ['description'],
        properties: { description: { type: 'string', minLength: 1 }, required: { type: 'boolean' }, default: { type: 'string' } },
        additionalProperties: false,
      },
    },
    outputs: {
      type: 'object',
      required: ['exitcode', 'has-changes', 'plan', 'summary', 'version'],
      additionalProperties: {
        type: 'object',
        required: ['description', 'value'],
        properties: { description: { type: 'string', minLength: 1 }, value: { type: 'string', pattern: '^\\$\\{\\{ steps\\.[a-z-]+\\.outputs\\.[a-z-]+ \\}\\}$' } },
        additionalProperties: false,
      },
    },
    runs: {
      type: 'object',
      required: ['using', 'steps'],
      properties: {
        using: { const: 'composite' },
        steps: {
          type: 'array',
          minItems: 1,
          items: {
            type: 'object',
            required: ['id', 'name', 'shell', 'run'],
            properties: {
              id: { type: 'string', pattern: '^[a-z][a-z-]*$' },
              shell: { const: 'bash' },
              run: { type: 'string', pattern: '^"\\$GITHUB_ACTION_PATH/scripts/github-action\\.sh" (install|run)$' },
              env: { type: 'object', additionalProperties: { type: 'string' } },
            },
          },
        },
      },
    },
  },
};

describe('action.yml', () => {
  it('is a composite action of the expected shape', () => {
    const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);
    expect(validate(action), JSON.stringify(validate.errors)).toBe(true);
    expect(statSync(actionScript).mode & 0o111, 'the script is executable').not.toBe(0);
  });

  it('passes every input to the script as INPUT_*, spliced into no shell text', () => {
    const passed = new Set<string>();
    for (const step of action.runs.steps) {
      const sub = step.run.split(' ').pop()!;
      for (const [name, value] of Object.entries(step.env ?? {})) {
        const input = /^\$\{\{ inputs\.([a-z-]+) \}\}$/.exec(value)?.[1];
        expect(input, `${step.id}: ${name}`).toBeDefined();
        expect(action.inputs[input!], input).toBeDefined();
        expect(name).toBe(inputVariable(input!));
        passed.add(input!);
      }
      // Each INPUT_* the script reads in that step is one the step passes.
      for (const used of new Set(body(sub).match(/INPUT_[A-Z_]+/g))) expect(step.env ?? {}, `${step.id} reads ${used}`).toHaveProperty(used);
    }
    expect([...passed].sort()).toEqual(Object.keys(action.inputs).sort());
    expect(JSON.stringify(action.runs.steps.map((s) => s.run))).not.toContain('inputs.');
  });

  it('declares as outputs what the script writes, from the step that writes it', () => {
    for (const [name, output] of Object.entries(action.outputs)) {
      const [, id, written] = /steps\.([a-z-]+)\.outputs\.([a-z-]+)/.exec(output.value)!;
      expect(written).toBe(name);
      const step = action.runs.steps.find((s) => s.id === id);
      expect(step, `output ${name}: no step ${id}`).toBeDefined();
      expect(body(step!.run.split(' ').pop()!), `output ${name}`).toMatch(new RegExp(`\\boutput ${name} `));
    }
  });
});

describe('the action runs amsync with the exit-code contract', () => {
  let temp = '';
  beforeAll(async () => {
    temp = await mkdtemp(join(tmpdir(), 'amsync-action-'));
  });
  afterAll(async () => {
    await rm(temp, { recursive: true, force: true });
  });

  const setup = async (name: string) => {
    const runnerTemp = join(temp, name);
    const fake = await installFakeAmsync(runnerTemp);
    return { runnerTemp, fake };
  };

  it('plan: saves the plan, exit 2 is changes pending and does not fail the step', async () => {
    const { runnerTemp, fake } = await setup('plan');
    await writeFile(join(runnerTemp, 'plan.json'), '{}');
    const run = await runActionStep('run', { runnerTemp, cwd: runnerTemp, inputs: { command: 'plan' }, env: { FAKE_EXIT: '2' } });
    expect(run.code).toBe(0);
    expect(await fake.calls()).toEqual([['plan', '-f', 'access.yaml', '--detailed-exitcode', '--format', 'markdown', '--out', 'plan.json']]);
    expect(run.outputs).toMatchObject({ exitcode: '2', 'has-changes': 'true', plan: 'plan.json' });
    expect(await readFile(run.outputs.summary!, 'utf8')).toBe('fake amsync output\n');
    expect(run.stdout).toContain('fake amsync output');
  });

  it('plan: exit 0 is no changes', async () => {
    const { runnerTemp } = await setup('no-changes');
    const run = await runActionStep('run', { runnerTemp, inputs: { command: 'plan', file: 'team/access.yaml', plan: 'out/p.json' }, env: { FAKE_EXIT: '0' } });
    expect(run.code).toBe(0);
    expect(run.outputs).toMatchObject({ exitcode: '0', 'has-changes': 'false' });
    expect(run.outputs.plan, 'no plan file was written').toBeUndefined();
  });

  it.each([1, 3, 64, 65])('fails the step with exit %i, and says what it means', async (code) => {
    const { runnerTemp } = await setup(`exit-${code}`);
    const run = await runActionStep('run', { runnerTemp, inputs: { command: 'plan' }, env: { FAKE_EXIT: String(code) } });
    expect(run.code).toBe(code);
    expect(run.outputs).toMatchObject({ exitcode: String(code), 'has-changes': 'false' });
    expect(run.stdout).toMatch(new RegExp(`^::error title=amsync plan::exit ${code} \\(`, 'm'));
  });

  it('apply, sync and validate: the saved plan, the file and extra arguments, taken literally', async () => {
    const { runnerTemp, fake } = await setup('commands');
    const inputs = { file: 'a.yaml', plan: 'p.json', args: '--report r.json  --max-deletes 5 $(touch pwned) ;' };
    for (const command of ['apply', 'sync', 'validate', 'setup']) {
      const run = await runActionStep('run', { runnerTemp, cwd: runnerTemp, inputs: { ...inputs, command } });
      expect(run.code, command).toBe(0);
    }
    const extra = ['--report', 'r.json', '--max-deletes', '5', '$(touch', 'pwned)', ';'];
    expect(await fake.calls()).toEqual([
      ['apply', 'p.json', '-f', 'a.yaml', '--format', 'markdown', ...extra],
      ['sync', '-f', 'a.yaml', '--format', 'markdown', ...extra],
      ['validate', '-f', 'a.yaml', ...extra],
    ]);
    expect(existsSync(join(runnerTemp, 'pwned'))).toBe(false);
  });

  it('refuses an unknown command', async () => {
    const { runnerTemp, fake } = await setup('unknown');
    const run = await runActionStep('run', { runnerTemp, inputs: { command: 'destroy' } });
    expect(run.code).toBe(1);
    expect(run.stdout).toContain("::error title=amsync::command must be setup, validate, plan, sync or apply, not 'destroy'");
    expect(await fake.calls()).toEqual([]);
  });

  it('installs with the npm command of the GitLab example (the one test/slow/install.test.ts runs)', () => {
    const flags = (line: string) => line.split(/\s+/).filter((w) => w.startsWith('--') && w !== '--prefix').sort();
    const ours = /npm install (--global[^\n]*\\\n[^\n]*)/.exec(body('install'))![1]!.replace(/\\\n/, ' ');
    const gitlab = (parse(readFileSync(join(root, 'examples/ci/gitlab-ci.yml'), 'utf8')) as { default: { before_script: string[] } }).default.before_script[0]!;
    expect(flags(ours)).toEqual(flags(gitlab));
    expect(flags(ours)).toEqual(['--global', '--ignore-scripts', '--no-audit', '--no-fund', '--omit=dev', '--prefer-offline']);
  });

  it('installs once per job, puts amsync on PATH, and fails when the version is not the one pinned', async () => {
    const { runnerTemp } = await setup('install');
    // Installed already (the stand-in): the step only checks it.
    const ok = await runActionStep('install', { runnerTemp, inputs: { version: 'v0.1.0', tarball: join(temp, 'no-such.tgz') } });
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.path).toEqual([join(runnerTemp, 'amsync', 'bin')]);
    expect(ok.outputs.version).toBe('0.1.0');
    const pinned = await runActionStep('install', { runnerTemp, inputs: { version: '0.2.0', tarball: '' } });
    expect(pinned.code).toBe(1);
    expect(pinned.stdout).toContain('::error title=amsync::amsync 0.1.0 is installed, but version: 0.2.0 was asked for');
    expect(pinned.path).toEqual([]);
  });
});
