import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import {
  addConnectionOptions,
  addDeleteOptions,
  addFileOption,
  addLocalStateOptions,
  addOutputOptions,
  addPlanOutputOptions,
  resolveFormat,
  type ServiceOptions,
} from '../../../src/cli/shared-options.js';
import { resolveDesiredFile, resolveSettings, settingsFromFlags } from '../../../src/settings/index.js';
import { exitCodeFor, UsageError } from '../../../src/errors.js';

/** Every shared option group, as `amsync plan` registers them. */
function addServiceOptions(cmd: Command): Command {
  return addPlanOutputOptions(addDeleteOptions(addOutputOptions(addLocalStateOptions(addConnectionOptions(addFileOption(cmd))))));
}

/** Parses argv with a throwaway command carrying the shared options; returns its options. */
async function parseArgs(args: string[]): Promise<ServiceOptions> {
  let seen: ServiceOptions | undefined;
  const program = new Command('amsync').exitOverride().configureOutput({ writeErr: () => {}, writeOut: () => {} });
  const cmd = program.command('plan').exitOverride();
  addServiceOptions(cmd).action((opts: ServiceOptions) => {
    seen = opts;
  });
  await program.parseAsync(['node', 'amsync', 'plan', ...args]);
  return seen!;
}

async function usageError(args: string[]): Promise<UsageError> {
  const error = await parseArgs(args).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(UsageError);
  expect(exitCodeFor(error)).toBe(64);
  return error as UsageError;
}

describe('the options shared by commands that talk to the service', () => {
  it('parses every flag to a checked value', async () => {
    const opts = await parseArgs([
      '-f', 'team.yaml', '--url', 'https://access.example.com', '--token-file', 'tok', '--settings', 's.yaml', '--format', 'markdown',
      '--out', 'plan.json', '--detailed-exitcode', '--max-deletes', '0', '--prune', '--rate', '2.5', '--concurrency', '4', '--page-size', '50',
      '--tokens-dir', 'tokens', '--state-file', 'st.json', '--log-level', 'debug', '--allow-insecure-http', '--ca-file', 'ca.pem',
    ]);
    expect(opts).toMatchObject({
      file: ['team.yaml'], url: 'https://access.example.com', tokenFile: 'tok', settings: 's.yaml', format: 'markdown', out: 'plan.json',
      detailedExitcode: true, maxDeletes: 0, prune: true, rate: 2.5, concurrency: 4, pageSize: 50, tokensDir: 'tokens', stateFile: 'st.json',
      logLevel: 'debug', allowInsecureHttp: true, caFile: 'ca.pem',
    });
  });

  it.each([
    [['--rate', 'abc'], "Expected `--rate` to be a number greater than 0, got 'abc'"],
    [['--rate', '0'], "Expected `--rate` to be a number greater than 0, got '0'"],
    [['--concurrency', '0'], "Expected `--concurrency` to be a whole number from 1 upwards, got '0'"],
    [['--concurrency', '2.5'], "Expected `--concurrency` to be a whole number from 1 upwards, got '2.5'"],
    [['--page-size', '-1'], "Expected `--page-size` to be a whole number from 1 upwards, got '-1'"],
    [['--max-deletes', 'ten'], "Expected `--max-deletes` to be a whole number from 0 upwards, got 'ten'"],
    [['--url', 'access.example.com'], "Expected `--url` to be an http:// or https:// URL, got 'access.example.com'"],
    [['--log-level', 'verbose'], "Expected `--log-level` to be one of trace, debug, info, warn, error, fatal, silent, got 'verbose'"],
    [['--format', 'xml'], "Expected `--format` to be one of text, json, markdown, got 'xml'"],
  ])('%j is a usage error: %s', async (args, message) => {
    expect((await usageError(args)).message).toBe(message);
  });

  it('there is no --token flag: the error points at AMSYNC_TOKEN and --token-file, and never echoes the token', async () => {
    for (const args of [['--token', 'tok-canary'], ['--token=tok-canary'], ['--token']]) {
      const error = await usageError(args);
      expect(error.message).toContain('AMSYNC_TOKEN');
      expect(error.message).toContain('--token-file');
      expect(error.message).not.toContain('tok-canary');
    }
  });

  it('there is no --refresh-token flag either: the integrator key comes from AMSYNC_REFRESH_TOKEN or --refresh-token-file', async () => {
    for (const args of [['--refresh-token', 'ik-canary'], ['--refresh-token=ik-canary'], ['--refresh-token']]) {
      const error = await usageError(args);
      expect(error.message).toContain('AMSYNC_REFRESH_TOKEN');
      expect(error.message).toContain('--refresh-token-file');
      expect(error.message).not.toContain('ik-canary');
    }
    expect(() => settingsFromFlags({ refreshToken: 'ik-canary' })).toThrow(UsageError);
    const opts = await parseArgs(['--refresh-token-file', 'keys/integrator']);
    expect(settingsFromFlags(opts)).toEqual({ refreshTokenFile: 'keys/integrator' });
    const help = addServiceOptions(new Command('plan')).helpInformation();
    expect(help).toContain('--refresh-token-file');
    expect(help).not.toMatch(/--refresh-token\b(?!-)/);
  });

  it('--token is hidden from help', () => {
    const cmd = addServiceOptions(new Command('plan'));
    expect(cmd.helpInformation()).not.toMatch(/--token\b(?!-)/);
    expect(cmd.helpInformation()).toContain('--token-file');
  });
});

describe('resolveFormat', () => {
  it('text by default; --json is json; --format picks', () => {
    expect(resolveFormat({})).toBe('text');
    expect(resolveFormat({ json: true })).toBe('json');
    expect(resolveFormat({ format: 'markdown' })).toBe('markdown');
    expect(resolveFormat({ json: true, format: 'json' })).toBe('json');
  });

  it('--json with --format text is a contradiction (64)', () => {
    expect(() => resolveFormat({ json: true, format: 'text' })).toThrow(UsageError);
    expect(() => resolveFormat({ json: true, format: 'text' })).toThrow('--json conflicts with --format text');
  });
});

describe('resolveDesiredFile', () => {
  it('-f, else AMSYNC_FILE, else access.yaml', () => {
    expect(resolveDesiredFile({ file: 'a.yaml' }, { AMSYNC_FILE: 'b.yaml' })).toBe('a.yaml');
    expect(resolveDesiredFile({}, { AMSYNC_FILE: 'b.yaml' })).toBe('b.yaml');
    expect(resolveDesiredFile({}, {})).toBe('access.yaml');
  });
});

describe('resolveSettings applies the flags on top of the environment', () => {
  it('flags win over AMSYNC_* variables', async () => {
    const opts = await parseArgs(['--rate', '3', '--url', 'https://flag.example', '--allow-insecure-http']);
    const settings = await resolveSettings(opts, { AMSYNC_RATE: '9', AMSYNC_URL: 'https://env.example', AMSYNC_CONCURRENCY: '2' });
    expect(settings).toMatchObject({ rate: 3, url: 'https://flag.example', concurrency: 2, http: { allowInsecureHttp: true } });
  });

  it('daemon flags registered elsewhere (--listen, --schedule, --mode) are checked here too', () => {
    expect(settingsFromFlags({ listen: '0.0.0.0:80', schedule: '* * * * *', mode: 'observe' })).toEqual({ daemon: { listen: '0.0.0.0:80', schedule: '* * * * *', mode: 'observe' } });
    expect(() => settingsFromFlags({ listen: 'nowhere' })).toThrow("Expected `--listen` to be HOST:PORT such as 127.0.0.1:9477, got 'nowhere'");
    expect(() => settingsFromFlags({ mode: 'watch' as never })).toThrow(UsageError);
  });

  it('the bounds on waits: --max-response-bytes, --list-deadline-ms, and the daemon --run-deadline-ms, with their variables', async () => {
    const opts = await parseArgs(['--max-response-bytes', '1048576', '--list-deadline-ms', '60000']);
    const settings = await resolveSettings({ ...opts, runDeadlineMs: '90000' as never }, { AMSYNC_HTTP_MAX_RESPONSE_BYTES: '5', AMSYNC_LIST_DEADLINE_MS: '7', AMSYNC_DAEMON_RUN_DEADLINE_MS: '8' });
    expect(settings).toMatchObject({ http: { maxResponseBytes: 1048576 }, listDeadlineMs: 60000, daemon: { runDeadlineMs: 90000 } });
    const fromEnv = await resolveSettings({}, { AMSYNC_HTTP_MAX_RESPONSE_BYTES: '5', AMSYNC_LIST_DEADLINE_MS: '7', AMSYNC_DAEMON_RUN_DEADLINE_MS: '8' });
    expect(fromEnv).toMatchObject({ http: { maxResponseBytes: 5 }, listDeadlineMs: 7, daemon: { runDeadlineMs: 8 } });
    expect((await usageError(['--max-response-bytes', '0'])).message).toBe("Expected `--max-response-bytes` to be a whole number from 1 upwards, got '0'");
    expect(() => settingsFromFlags({ runDeadlineMs: 'soon' as never })).toThrow("Expected `--run-deadline-ms` to be a whole number from 1 upwards, got 'soon'");
  });

  it('a bad value that reaches it without commander is still a usage error naming the flag', () => {
    expect(() => settingsFromFlags({ rate: 'fast' as never })).toThrow("Expected `--rate` to be a number greater than 0, got 'fast'");
    expect(() => settingsFromFlags({ token: 'x' })).toThrow(UsageError);
  });
});
