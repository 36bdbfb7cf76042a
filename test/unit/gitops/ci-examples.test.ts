import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command, type Option } from 'commander';
import { describe, expect, it } from 'vitest';
import { parseDocument } from 'yaml';
import { registerCommands } from '../../../src/cli/commands.js';
import { processIo } from '../../../src/cli/io.js';
import { root } from '../../helpers/cli.js';

/** The real command tree, as `amsync --help` shows it. */
function program(): Command {
  const p = new Command('amsync');
  registerCommands(p, { setExitCode: () => undefined, io: processIo() });
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
      const words = match[1]!.split(/\s+/).filter(Boolean);
      const end = words.findIndex((w) => /^(>|>>|\||\|\||&&|;|2>|<)/.test(w));
      const [command = '', ...args] = end === -1 ? words : words.slice(0, end);
      out.push({ command, args, where });
    }
  }
  return out;
}

/** Checks a call against the command tree: the command exists, and so does every flag it passes. */
function check(p: Command, call: Invocation): void {
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

type Steps = { run?: string; uses?: string; with?: Record<string, unknown> }[];
interface Workflow {
  on: Record<string, unknown>;
  jobs: Record<string, { steps: Steps; env?: Record<string, string>; permissions?: Record<string, string> }>;
}

describe('examples/ci/github-actions.yaml', () => {
  const wf = load('examples/ci/github-actions.yaml') as Workflow;
  const calls = Object.entries(wf.jobs).flatMap(([job, j]) => j.steps.flatMap((s, i) => (s.run ? invocations(s.run, `jobs.${job}.steps[${i}]`) : [])));

  it('parses, and every amsync command and flag it calls exists', () => {
    expect(calls.length).toBeGreaterThanOrEqual(3);
    const p = program();
    for (const call of calls) check(p, call);
  });

  it('plans pull requests with a read-only token and uploads the plan; applies that plan on merge', () => {
    expect(Object.keys(wf.on).sort()).toEqual(['pull_request', 'push', 'workflow_dispatch']);
    const plan = calls.find((c) => c.command === 'sync')!;
    expect(plan.args).toEqual(expect.arrayContaining(['--dry-run', '--detailed-exitcode', '--format', 'markdown', '--out', 'plan.json']));
    expect(wf.jobs.plan!.env?.AMSYNC_TOKEN).toContain('AMSYNC_READONLY_TOKEN');
    expect(wf.jobs.plan!.steps.find((s) => s.run?.includes('amsync sync'))!.run).toMatch(/-ne 2/); // exit 2 is not a failure
    expect(wf.jobs.plan!.steps.some((s) => s.uses?.startsWith('actions/upload-artifact') && s.with?.path === 'plan.json')).toBe(true);
    expect(wf.jobs.apply!.steps.some((s) => s.uses?.startsWith('actions/download-artifact'))).toBe(true);
    expect(calls.filter((c) => c.command === 'apply').map((c) => c.args[0])).toEqual(['plan.json']);
  });
});

describe('examples/ci/gitlab-ci.yml', () => {
  const ci = load('examples/ci/gitlab-ci.yml') as Record<string, { script?: string[]; before_script?: string[] }>;
  const reserved = new Set(['stages', 'variables', 'default', 'include', 'workflow', 'image', 'services', 'cache', 'before_script', 'after_script']);
  const jobs = Object.entries(ci).filter(([name]) => !reserved.has(name) && !name.startsWith('.'));
  const calls = jobs.flatMap(([name, job]) => [...(job.before_script ?? []), ...(job.script ?? [])].flatMap((line, i) => invocations(line, `${name}.script[${i}]`)));

  it('parses, and every amsync command and flag it calls exists', () => {
    expect(jobs.map(([name]) => name)).toEqual(['amsync:plan', 'amsync:apply']);
    const p = program();
    for (const call of calls) check(p, call);
    expect(calls.map((c) => c.command)).toEqual(['validate', 'sync', 'apply']);
  });
});

describe('examples/docker-compose.yaml', () => {
  const compose = load('examples/docker-compose.yaml') as { services: Record<string, { command: string[]; healthcheck?: unknown }> };

  it('runs commands that exist, with flags that exist', () => {
    const p = program();
    for (const [name, service] of Object.entries(compose.services)) {
      const [command = '', ...args] = service.command;
      check(p, { command, args, where: `services.${name}.command` });
    }
    expect(compose.services.amsync!.command.slice(0, 3)).toEqual(['daemon', '--listen', '0.0.0.0:9477']);
    expect(compose.services.emulator!.healthcheck).toBeDefined();
  });
});

describe('the check itself', () => {
  it('finds a command or a flag that does not exist, and reads shell the way the examples write it', () => {
    const p = program();
    const found = invocations('set +e\namsync sync --dry-run \\\n  --out plan.json > plan.md || { code=$?; }\n# amsync nothing here\nx=1; amsync aply plan.json', 'test');
    expect(found.map((c) => [c.command, ...c.args])).toEqual([['sync', '--dry-run', '--out', 'plan.json'], ['aply', 'plan.json']]);
    expect(() => check(p, found[1]!)).toThrow(/`amsync aply` is not a command/);
    expect(() => check(p, { command: 'apply', args: ['plan.json', '--dry-run'], where: 'test' })).toThrow(/has no option --dry-run/);
  });
});
