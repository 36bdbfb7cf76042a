import { Readable } from 'node:stream';
import type { Command, Option } from 'commander';
import { describe, expect, it } from 'vitest';
import { systemTimers } from '../../../src/time/timers.js';
import type { CliIo } from '../../../src/cli/io.js';
import { buildProgram } from '../../../src/cli/main.js';
import { version } from '../../../src/cli/version.js';
import { CaptureStream, runInProcess } from '../../helpers/in-process.js';

function io(): CliIo {
  return { stdout: new CaptureStream(false), stderr: new CaptureStream(false), stdin: Readable.from([]), env: {}, timers: systemTimers };
}

/** A value each option with an argument accepts; a new option without one here fails the test. */
const sample: Record<string, string> = {
  '--file': 'access.yaml',
  '--url': 'http://127.0.0.1:1',
  '--token-file': 'token',
  '--settings': 'settings.yaml',
  '--rate': '5',
  '--concurrency': '2',
  '--page-size': '50',
  '--log-level': 'info',
  '--ca-file': 'ca.pem',
  '--tokens-dir': 'tokens',
  '--kubernetes-secret': 'amsync/amsync-tokens',
  '--state-file': 'state.json',
  '--socket': 'ctl.sock',
  '--format': 'text',
  '--max-deletes': '3',
  '--refresh-token-file': 'integrator-key',
  '--refresh-token': 'ik',
  '--access-token-ttl': '900',
  '--refresh-token-grace': '60',
  '--list-deadline-ms': '60000',
  '--max-response-bytes': '1048576',
  '--lock-timeout': '1000',
  '--audit-log': 'audit.jsonl',
  '--leader-elect': 'lease:amsync/amsync-leader',
  '--run-deadline-ms': '60000',
  '--out': 'plan.json',
  '--only': 'apikey:ci-*',
  '--exclude': 'sshUser#3',
  '--replace': 'sshUser:alice',
  '--report': 'report.json',
  '--listen': '127.0.0.1:9477',
  '--schedule': '*/5 * * * *',
  '--mode': 'observe',
  '--output': 'out.yaml',
  '--schema': 'access.schema.json',
  '--host': '127.0.0.1',
  '--port': '0',
  '--token': 'x',
  '--read-only-token': 'ro',
  '--expired-token': 'old',
  '--data': 'data.json',
  '--roles': 'roles.yaml',
  '--page-size-default': '10',
  '--page-size-max': '100',
  '--rate-limit': '10',
  '--latency-ms': '5',
  '--fail-rate': '0.1',
  '--seed': '7',
  '--tenants': '3',
  '--tenant': 'blue',
  '--key': 'deploy',
  '--action': 'create',
  '--since': '24h',
  '--until': '2025-01-31T12:00:00Z',
  '--approve': '3f9c0a1be27d4410',
  '--approvals': 'approvals.yaml',
  '--targets': 'targets.yaml',
  '--target': 'sp-1',
  '--selector': 'site=sp',
  '--target-concurrency': '4',
  '--shards': '3',
  '--shard': '0/3',
  '--secrets': 'optional',
};

const positional: Record<string, string[]> = { apply: ['plan.json'], rotate: ['apikey:ci'] };

function argsFor(option: Option): string[] {
  const flag = option.long ?? option.short!;
  if (!option.required && !option.optional) return [flag];
  const value = sample[option.long ?? ''];
  if (value === undefined) throw new Error(`no sample value for ${flag}: add one to the table`);
  return [flag, value];
}

/** Whether `amsync NAME [positional] OPTION` parses: every action replaced by one that does nothing. */
async function accepts(name: string, option: Option): Promise<boolean> {
  const program = await buildProgram(io(), { setExitCode: () => undefined });
  for (const cmd of program.commands) cmd.action(() => undefined);
  try {
    await program.parseAsync(['node', 'amsync', name, ...(positional[name] ?? []), ...argsFor(option)]);
    return true;
  } catch {
    return false;
  }
}

async function commands(): Promise<readonly Command[]> {
  return (await buildProgram(io(), { setExitCode: () => undefined })).commands;
}

const commandNames = (await commands()).map((c) => [c.name()]);

describe('every command\'s --help tells the truth', () => {
  it.each(commandNames)('amsync %s: every option in its help is accepted, and every option it accepts is in its help', async (name) => {
    const cmd = (await commands()).find((c) => c.name() === name)!;
    const shown = new Set(cmd.createHelp().visibleOptions(cmd).filter((o) => o.long !== '--help').map((o) => o.flags));
    const accepted = new Set<string>();
    for (const option of cmd.options) if (await accepts(name, option)) accepted.add(option.flags);
    expect([...accepted].sort()).toEqual([...shown].sort());
  });

  it.each([
    ['export', ['-f, --file', '--prune', '--out', '--json', '--format']],
    ['apply', ['--prune', '--max-deletes', '--out', '--detailed-exitcode']],
    ['daemon', ['--json', '--format', '--out', '--detailed-exitcode']],
    ['validate', ['--url', '--prune']],
  ])('amsync %s --help does not show %j', async (name, flags) => {
    const run = await runInProcess([name, '--help']);
    expect(run.code).toBe(0);
    for (const flag of flags) expect(run.stdout).not.toMatch(new RegExp(`^\\s+${flag.replace(/[-]/g, '\\-')}\\b`, 'm'));
  });

  it('a refused flag says why (64) rather than being silently ignored', async () => {
    const apply = await runInProcess(['apply', 'plan.json', '--prune']);
    expect(apply.code).toBe(64);
    expect(apply.stderr).toContain('--prune shapes a new plan');
    const daemon = await runInProcess(['daemon', '--json']);
    expect(daemon.code).toBe(64);
    expect(daemon.stderr).toContain("unknown option '--json'");
  });
});

describe('version and bare amsync', () => {
  it.each([['-V'], ['-v'], ['--version'], ['version']])('amsync %s prints the version and exits 0', async (flag) => {
    const run = await runInProcess([flag]);
    expect(run).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
  });

  it('a bare amsync prints its help on stdout and exits 0', async () => {
    const run = await runInProcess([]);
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    expect(run.stdout).toContain('Usage: amsync [options] [command]');
    for (const command of ['validate', 'plan', 'sync', 'apply', 'export', 'schema', 'daemon', 'emulator', 'demo', 'version']) expect(run.stdout).toMatch(new RegExp(`^  ${command}\\b`, 'm'));
  });

  it('amsync schema prints the desired-state JSON Schema, --settings the settings one', async () => {
    const access = JSON.parse((await runInProcess(['schema'])).stdout) as { properties: Record<string, unknown> };
    expect(Object.keys(access.properties)).toEqual(expect.arrayContaining(['sshUsers', 'apikeys', 'prune', 'protect']));
    const settings = JSON.parse((await runInProcess(['schema', '--settings'])).stdout) as { properties: Record<string, unknown> };
    expect(Object.keys(settings.properties)).toEqual(expect.arrayContaining(['url', 'rate', 'daemon']));
  });
});

describe('a run loads the command it names, and only that one', () => {
  const names = (program: Command) => program.commands.map((c) => c.name());

  it('amsync validate ... builds a tree holding validate alone; its help and its errors are the same', async () => {
    expect(names(await buildProgram(io(), { setExitCode: () => undefined }, 'validate'))).toEqual(['validate']);
    const run = await runInProcess(['validate', '--bogus']);
    expect(run.code).toBe(64);
    expect(run.stderr).toContain("unknown option '--bogus'");
  });

  it('anything else gets every command, in the order of amsync --help: help, an option, a misspelt command', async () => {
    const all = names(await buildProgram(io(), { setExitCode: () => undefined }));
    expect(all).toEqual(['validate', 'plan', 'sync', 'apply', 'rotate', 'export', 'schema', 'daemon', 'ctl', 'emulator', 'demo', 'audit', 'version']);
    for (const word of ['help', '--help', 'valdate']) expect(names(await buildProgram(io(), { setExitCode: () => undefined }, word))).toEqual(all);
    const typo = await runInProcess(['valdate']);
    expect(typo.code).toBe(64);
    expect(typo.stderr).toContain('(Did you mean validate?)');
  });
});
