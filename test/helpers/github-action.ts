import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { root } from './paths.js';
import { spawnCollect } from './spawn.js';

/**
 * Runs the steps of the amsync GitHub Action (scripts/github-action.sh, which action.yml calls)
 * outside GitHub: a runner temp folder, GITHUB_OUTPUT and GITHUB_PATH files of its own, and
 * the inputs as the INPUT_* variables action.yml maps them to.
 */

export const actionScript = join(root, 'scripts', 'github-action.sh');

export interface ActionRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** What the step wrote to GITHUB_OUTPUT (the last value of each name). */
  readonly outputs: Readonly<Record<string, string>>;
  /** What the step added to GITHUB_PATH. */
  readonly path: readonly string[];
}

export interface ActionStep {
  /** RUNNER_TEMP: amsync is installed under it (`amsync/bin/amsync`). */
  readonly runnerTemp: string;
  readonly inputs?: Readonly<Record<string, string>>;
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly cwd?: string;
}

/** `INPUT_FILE` for input `file`, `INPUT_HAS_X` for `has-x`: the names action.yml passes. */
export const inputVariable = (input: string): string => `INPUT_${input.toUpperCase().replace(/-/g, '_')}`;

export async function runActionStep(subcommand: 'install' | 'run', step: ActionStep): Promise<ActionRun> {
  const outputFile = join(step.runnerTemp, `output-${process.hrtime.bigint()}`);
  const pathFile = join(step.runnerTemp, `path-${process.hrtime.bigint()}`);
  await mkdir(step.runnerTemp, { recursive: true });
  await writeFile(outputFile, '');
  await writeFile(pathFile, '');
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', NO_COLOR: '1' };
  for (const [k, v] of Object.entries(step.env ?? {})) if (v !== undefined) env[k] = v;
  for (const [k, v] of Object.entries(step.inputs ?? {})) env[inputVariable(k)] = v;
  Object.assign(env, { RUNNER_TEMP: step.runnerTemp, GITHUB_OUTPUT: outputFile, GITHUB_PATH: pathFile, GITHUB_ACTION_PATH: root });
  const { code, stdout, stderr } = await spawnCollect('bash', [actionScript, subcommand], { cwd: step.cwd ?? step.runnerTemp, env });
  const outputs: Record<string, string> = {};
  for (const line of (await readFile(outputFile, 'utf8')).split('\n')) {
    const at = line.indexOf('=');
    if (at > 0) outputs[line.slice(0, at)] = line.slice(at + 1);
  }
  const path = (await readFile(pathFile, 'utf8')).split('\n').filter(Boolean);
  return { code, stdout, stderr, outputs, path };
}

/**
 * A stand-in for an installed amsync at `RUNNER_TEMP/amsync/bin/amsync`: it appends its
 * arguments as a JSON line to `calls`, prints `--version`'s answer, and exits with FAKE_EXIT.
 */
export async function installFakeAmsync(runnerTemp: string, version = '0.1.0'): Promise<{ calls: () => Promise<string[][]> }> {
  const bin = join(runnerTemp, 'amsync', 'bin');
  await mkdir(bin, { recursive: true });
  const log = join(runnerTemp, 'fake-calls.jsonl');
  await writeFile(log, '');
  const script = [
    '#!/usr/bin/env node',
    "const { appendFileSync } = require('node:fs');",
    `appendFileSync(${JSON.stringify(log)}, JSON.stringify(process.argv.slice(2)) + '\\n');`,
    `if (process.argv[2] === '--version') console.log(${JSON.stringify(version)});`,
    "else console.log('fake amsync output');",
    "process.exit(Number(process.env.FAKE_EXIT ?? '0'));",
  ].join('\n');
  await writeFile(join(bin, 'amsync'), `${script}\n`);
  await chmod(join(bin, 'amsync'), 0o755);
  return {
    calls: async () =>
      (await readFile(log, 'utf8'))
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as string[]),
  };
}
