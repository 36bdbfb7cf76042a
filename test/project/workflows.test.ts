import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { root } from '../helpers/spawn.js';

const run = promisify(execFile);
const validator = join(root, 'node_modules', '@action-validator', 'cli', 'cli.mjs');

/** action-validator's verdict on one workflow or action file: exit 0, or its errors. */
async function validate(file: string): Promise<{ ok: true } | { ok: false; output: string }> {
  try {
    await run(process.execPath, [validator, file], { cwd: root });
    return { ok: true };
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string };
    return { ok: false, output: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

describe('the GitHub workflows and the action are valid (action-validator)', () => {
  it('every workflow under .github/workflows and action.yml pass', async () => {
    const workflows = (await readdir(join(root, '.github', 'workflows'))).filter((f) => /\.ya?ml$/.test(f)).map((f) => join('.github', 'workflows', f));
    expect(workflows).toContain(join('.github', 'workflows', 'ci.yml'));
    for (const file of [...workflows, 'action.yml']) expect(await validate(file), file).toEqual({ ok: true });
  });

  it('a workflow with a misspelt key is refused (the check can fail)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'amsync-workflow-'));
    try {
      const bad = join(dir, 'bad.yml');
      await writeFile(bad, 'name: bad\non: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n    stepz: []\n');
      const verdict = await validate(bad);
      expect(verdict.ok).toBe(false);
      expect(verdict.ok ? '' : verdict.output).toContain("Additional property 'stepz' is not allowed");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('ci.yml runs .ci/run, the command that decides whether a change lands, on every push and pull request', async () => {
    const workflow = parse(await readFile(join(root, '.github', 'workflows', 'ci.yml'), 'utf8')) as {
      on: Record<string, unknown>;
      jobs: Record<string, { steps: { run?: string }[]; 'timeout-minutes'?: number }>;
    };
    expect(Object.keys(workflow.on).sort()).toEqual(['pull_request', 'push']);
    const steps = Object.values(workflow.jobs).flatMap((job) => job.steps);
    expect(steps.some((step) => step.run === 'bash .ci/run')).toBe(true);
    for (const job of Object.values(workflow.jobs)) expect(job['timeout-minutes']).toBeLessThanOrEqual(90);
  });
});
