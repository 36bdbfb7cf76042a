import { EventEmitter } from 'node:events';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { startEmulator } from '../../../src/emulator/index.js';
import { createRng } from '../../../src/emulator/rng.js';
import { waitFor } from '../../helpers/daemon-deferred.js';
import { runInProcess } from '../../helpers/in-process.js';

/**
 * The corpus of bad input: desired files, settings files, flags and environment that amsync
 * must refuse with a clear error and its exit code (64: the command line; 65: a file or the
 * environment), before sending a single request. The daemon refuses bad flags, settings and
 * environment at start; a bad desired file it survives (it waits for a fix), sending nothing.
 */

export type FileContent = string | Buffer | { readonly symlink: string } | { readonly dir: true };

export interface BadInput {
  /** In the user's words: what is wrong. */
  readonly name: string;
  readonly command: 'sync' | 'plan' | 'daemon';
  readonly args?: readonly string[];
  /** The whole command line instead of `command` and `args` (an unknown command). */
  readonly argv?: readonly string[];
  /** Files of the case, beside a valid access.yaml and settings file; a name maps to its content. */
  readonly files?: Readonly<Record<string, FileContent>>;
  /** Environment changes; undefined removes a variable of the default environment. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** 64 or 65 (1 for a local path amsync cannot write); for the daemon, 'keeps running' when it survives the input and waits for a fix. */
  readonly expect: 1 | 64 | 65 | 'keeps running';
  /** The error says what is wrong. */
  readonly message: RegExp;
}

export const VALID_ACCESS = 'sshUsers:\n  - username: deploy\n    password: { env: DEPLOY_PASSWORD }\napikeys:\n  - name: ci\n    roles: [1]\n';
export const CANARY_TOKEN = 'CANARY-bad-input-token-5c1e';
export const CANARY_PASSWORD = 'CANARY-bad-input-password-93fd';

const withUser = (fields: string) => `sshUsers:\n  - username: deploy\n    password: { env: DEPLOY_PASSWORD }\n${fields}`;

function aliasBomb(): string {
  const lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
  for (let i = 1; i < 12; i += 1) {
    const prev = String.fromCharCode(96 + i);
    const cur = String.fromCharCode(97 + i);
    lines.push(`${cur}: &${cur} [${Array.from({ length: 9 }, () => `*${prev}`).join(',')}]`);
  }
  return `${lines.join('\n')}\nsshUsers: *l\n`;
}

function binary(seed: number, size: number): Buffer {
  const rng = createRng(seed);
  return Buffer.from(Array.from({ length: size }, () => Math.floor(rng() * 256)));
}

const utf16 = (text: string) => Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
const latin1 = (text: string) => Buffer.from(text, 'latin1');
const huge = () => `# ${'x'.repeat(80)}\n`.repeat(Math.ceil((11 * 1024 * 1024) / 83)) + VALID_ACCESS;

export const badInputs: readonly BadInput[] = [
  // ---- the desired-state file ----
  { name: 'a YAML alias bomb (billion laughs)', command: 'sync', files: { 'access.yaml': aliasBomb() }, expect: 65, message: /alias/i },
  { name: 'a desired file larger than 10 MB', command: 'sync', files: { 'access.yaml': huge() }, expect: 65, message: /MB/ },
  { name: 'a binary desired file', command: 'plan', files: { 'access.yaml': binary(1, 4096) }, expect: 65, message: /not UTF-8|binary/ },
  { name: 'a desired file nested 5,000 deep in flow sequences', command: 'sync', files: { 'access.yaml': `sshUsers: ${'['.repeat(5000)}${']'.repeat(5000)}\n` }, expect: 65, message: /deep|nest/i },
  { name: 'a desired file nested 60 deep in block mappings', command: 'sync', files: { 'access.yaml': Array.from({ length: 60 }, (_, i) => `${'  '.repeat(i)}k${i}:`).join('\n') + ' 1\n' }, expect: 65, message: /deep|nest|unknown key/i },
  { name: 'a desired file saved as UTF-16', command: 'sync', files: { 'access.yaml': utf16(VALID_ACCESS) }, expect: 65, message: /UTF-16/ },
  { name: 'a desired file saved as Latin-1', command: 'plan', files: { 'access.yaml': latin1('sshUsers:\n  - username: josé\n    password: { env: DEPLOY_PASSWORD }\n') }, expect: 65, message: /not UTF-8/ },
  { name: 'sshUsers is a string', command: 'sync', files: { 'access.yaml': 'sshUsers: deploy\n' }, expect: 65, message: /sshUsers/ },
  { name: 'a username that is a number', command: 'sync', files: { 'access.yaml': 'sshUsers:\n  - username: 123\n    password: { env: DEPLOY_PASSWORD }\n' }, expect: 65, message: /username/ },
  { name: 'a password that is a number', command: 'sync', files: { 'access.yaml': 'sshUsers:\n  - username: deploy\n    password: 12345\n' }, expect: 65, message: /password/ },
  // Role names are valid (resolved against the service, DESIGN.md §3); one that no service could have is not.
  { name: 'a role name with leading spaces', command: 'sync', files: { 'access.yaml': "apikeys:\n  - name: ci\n    roles: ['  admin']\n" }, expect: 65, message: /role name/ },
  { name: 'a role that is neither an id nor a name', command: 'sync', files: { 'access.yaml': 'apikeys:\n  - name: ci\n    roles: [{ id: 1 }]\n' }, expect: 65, message: /roles/ },
  { name: 'superuser: "yes" (a string)', command: 'sync', files: { 'access.yaml': 'apikeys:\n  - name: ci\n    superuser: "yes"\n' }, expect: 65, message: /superuser/ },
  { name: 'an unknown top-level key', command: 'sync', files: { 'access.yaml': `${VALID_ACCESS}users: []\n` }, expect: 65, message: /unknown key 'users'/ },
  { name: "a typo in a user's key (levl)", command: 'plan', files: { 'access.yaml': withUser('    levl: n1\n') }, expect: 65, message: /did you mean 'level'/ },
  { name: 'a username declared twice', command: 'sync', files: { 'access.yaml': `${withUser('')}  - username: deploy\n    password: { env: DEPLOY_PASSWORD }\n` }, expect: 65, message: /declared twice/ },
  { name: 'a mapping key repeated (two sshUsers:)', command: 'sync', files: { 'access.yaml': `${VALID_ACCESS}sshUsers: []\n` }, expect: 65, message: /unique|duplicate|twice/i },
  { name: 'two YAML documents in one file', command: 'sync', files: { 'access.yaml': `${VALID_ACCESS}---\n${VALID_ACCESS}` }, expect: 65, message: /document/i },
  // A directory is a set of desired files (DESIGN.md §10); one that holds none is the error.
  { name: 'the desired file is a directory without a YAML file', command: 'sync', files: { 'access.yaml': { dir: true } }, expect: 65, message: /access\.yaml holds no \*\.yaml or \*\.yml file/ },
  { name: 'the desired file does not exist', command: 'sync', args: ['-f', 'missing.yaml'], expect: 65, message: /missing\.yaml: no such file|no such file/ },
  { name: 'an unset password variable', command: 'sync', env: { DEPLOY_PASSWORD: undefined }, expect: 65, message: /DEPLOY_PASSWORD/ },
  { name: 'a password file that does not exist', command: 'sync', files: { 'access.yaml': 'sshUsers:\n  - username: deploy\n    password: { file: secrets/deploy }\n' }, expect: 65, message: /secrets\/deploy/ },
  { name: 'a password file larger than 64 KB', command: 'sync', files: { 'access.yaml': 'sshUsers:\n  - username: deploy\n    password: { file: big }\n', big: 'x'.repeat(70 * 1024) }, expect: 65, message: /KB/ },
  { name: 'a password file that is a directory', command: 'plan', files: { 'access.yaml': 'sshUsers:\n  - username: deploy\n    password: { file: secrets }\n', secrets: { dir: true } }, expect: 65, message: /directory/ },
  { name: 'a password file that is not UTF-8', command: 'sync', files: { 'access.yaml': 'sshUsers:\n  - username: deploy\n    password: { file: pw }\n', pw: binary(2, 64) }, expect: 65, message: /UTF-8/ },
  { name: 'a negative pinned id', command: 'sync', files: { 'access.yaml': 'apikeys:\n  - name: ci\n    id: -1\n' }, expect: 65, message: /id/ },
  { name: 'a pinned id that is a string', command: 'sync', files: { 'access.yaml': 'apikeys:\n  - name: ci\n    id: abc\n' }, expect: 65, message: /id/ },
  { name: 'one id pinned by two apikeys', command: 'sync', files: { 'access.yaml': 'apikeys:\n  - name: a\n    id: 5\n  - name: b\n    id: 5\n' }, expect: 65, message: /5/ },
  { name: 'ensure: maybe', command: 'sync', files: { 'access.yaml': withUser('    ensure: maybe\n') }, expect: 65, message: /ensure/ },
  { name: 'protect globs that are numbers', command: 'sync', files: { 'access.yaml': `${VALID_ACCESS}protect:\n  sshUsers: [1, 2]\n` }, expect: 65, message: /protect/ },
  { name: 'prune: "yes" (a string)', command: 'sync', files: { 'access.yaml': `${VALID_ACCESS}prune:\n  sshUsers: "yes"\n` }, expect: 65, message: /prune|sshUsers/ },
  { name: 'a YAML syntax error (an unclosed flow sequence)', command: 'sync', files: { 'access.yaml': 'apikeys:\n  - name: ci\n    roles: [1, 2\n' }, expect: 65, message: /access\.yaml:\d+:\d+/ },
  { name: 'a YAML tag that would run code (!!js/function)', command: 'sync', files: { 'access.yaml': 'sshUsers: !!js/function "function(){}"\n' }, expect: 65, message: /tag|sshUsers/i },
  { name: 'an alias to an anchor that does not exist', command: 'sync', files: { 'access.yaml': 'sshUsers: *nowhere\n' }, expect: 65, message: /alias|anchor|nowhere/i },
  { name: 'the desired file is a symlink loop', command: 'sync', files: { 'access.yaml': { symlink: 'loop.yaml' }, 'loop.yaml': { symlink: 'access.yaml' } }, expect: 65, message: /ELOOP|loop/ },
  { name: 'a list where a mapping belongs (the whole file)', command: 'plan', files: { 'access.yaml': '- username: deploy\n' }, expect: 65, message: /mapping|object/i },
  { name: 'an empty username', command: 'sync', files: { 'access.yaml': 'sshUsers:\n  - username: ""\n    password: { env: DEPLOY_PASSWORD }\n' }, expect: 65, message: /username/ },
  { name: 'a NUL byte in the middle of the file', command: 'sync', files: { 'access.yaml': `sshUsers:\n  - username: de\u0000ploy\n` }, expect: 65, message: /access\.yaml/ },

  // ---- the settings file ----
  { name: 'an unknown key in the settings file', command: 'sync', files: { 'settings.yaml': 'concurency: 4\n' }, expect: 65, message: /concurency/ },
  { name: 'a setting of the wrong type (concurrency: "x")', command: 'sync', files: { 'settings.yaml': 'concurrency: x\n' }, expect: 65, message: /concurrency/ },
  { name: 'a YAML alias bomb in the settings file', command: 'plan', files: { 'settings.yaml': aliasBomb().replace('sshUsers: *l', 'logLevel: *l') }, expect: 65, message: /alias/i },
  { name: 'a binary settings file', command: 'sync', files: { 'settings.yaml': binary(3, 2048) }, expect: 65, message: /not UTF-8|binary/ },
  { name: 'http.timeoutMs: 0', command: 'sync', files: { 'settings.yaml': 'http:\n  timeoutMs: 0\n' }, expect: 65, message: /timeoutMs/ },
  { name: 'a settings file that does not exist', command: 'sync', args: ['--settings', 'nope.yaml'], expect: 65, message: /nope\.yaml/ },
  { name: 'a token in the settings file (never allowed in a file)', command: 'sync', files: { 'settings.yaml': `token: ${CANARY_TOKEN}\n` }, expect: 65, message: /token/ },
  { name: 'an ftp:// URL in the settings file', command: 'sync', files: { 'settings.yaml': 'url: ftp://access.example.com\n' }, expect: 65, message: /url|URL/ },
  { name: 'a settings file nested 100 deep', command: 'sync', files: { 'settings.yaml': `http: ${'['.repeat(100)}${']'.repeat(100)}\n` }, expect: 65, message: /deep|nest|http/i },
  { name: 'the settings file is a directory', command: 'plan', args: ['--settings', 'confdir'], files: { confdir: { dir: true } }, expect: 65, message: /directory/ },
  { name: 'AMSYNC_SETTINGS names a file that does not exist', command: 'sync', env: { AMSYNC_SETTINGS: 'nowhere.yaml' }, expect: 65, message: /nowhere\.yaml/ },
  { name: 'maxDeletes: -1', command: 'sync', files: { 'settings.yaml': 'maxDeletes: -1\n' }, expect: 65, message: /maxDeletes/ },

  // ---- flags ----
  { name: 'an unknown flag', command: 'sync', args: ['--bogus'], expect: 64, message: /unknown option '--bogus'/ },
  { name: 'a token on the command line (--token)', command: 'sync', args: ['--token', CANARY_TOKEN], expect: 64, message: /no --token flag/ },
  { name: '--rate abc', command: 'sync', args: ['--rate', 'abc'], expect: 64, message: /--rate/ },
  { name: '--rate 0', command: 'sync', args: ['--rate', '0'], expect: 64, message: /--rate/ },
  { name: '--concurrency 0', command: 'sync', args: ['--concurrency', '0'], expect: 64, message: /--concurrency/ },
  { name: '--concurrency 1.5', command: 'plan', args: ['--concurrency', '1.5'], expect: 64, message: /--concurrency/ },
  { name: '--page-size -1', command: 'sync', args: ['--page-size', '-1'], expect: 64, message: /--page-size/ },
  { name: '--max-deletes x', command: 'sync', args: ['--max-deletes', 'x'], expect: 64, message: /--max-deletes/ },
  { name: '--json with --format text (conflicting flags)', command: 'plan', args: ['--json', '--format', 'text'], expect: 64, message: /conflicts/ },
  { name: '--format yaml', command: 'plan', args: ['--format', 'yaml'], expect: 64, message: /--format/ },
  { name: '--log-level loud', command: 'sync', args: ['--log-level', 'loud'], expect: 64, message: /--log-level/ },
  { name: '--url ftp://host', command: 'sync', args: ['--url', 'ftp://host'], expect: 64, message: /--url/ },
  { name: '--url without a value', command: 'sync', args: ['--url'], expect: 64, message: /argument missing|--url/ },
  { name: '--out on a sync that applies (conflicting flags)', command: 'sync', args: ['--out', 'plan.json'], expect: 64, message: /--out/ },
  { name: 'an unknown command', command: 'sync', argv: ['synk'], expect: 64, message: /unknown command 'synk'/ },
  { name: 'an argument where none is expected', command: 'sync', args: ['extra'], expect: 64, message: /too many arguments/ },
  { name: 'plain http:// to a host that is not loopback', command: 'sync', args: ['--url', 'http://access.example.com'], expect: 64, message: /plain http/ },
  { name: 'a CA file that does not exist', command: 'sync', args: ['--ca-file', 'no-ca.pem'], expect: 64, message: /no-ca\.pem/ },

  // ---- the environment ----
  { name: 'AMSYNC_RATE=abc', command: 'sync', env: { AMSYNC_RATE: 'abc' }, expect: 65, message: /AMSYNC_RATE/ },
  { name: 'AMSYNC_CONCURRENCY=0', command: 'sync', env: { AMSYNC_CONCURRENCY: '0' }, expect: 65, message: /AMSYNC_CONCURRENCY/ },
  { name: 'AMSYNC_PAGE_SIZE=-5', command: 'plan', env: { AMSYNC_PAGE_SIZE: '-5' }, expect: 65, message: /AMSYNC_PAGE_SIZE/ },
  { name: 'AMSYNC_URL that is not a URL', command: 'sync', env: { AMSYNC_URL: 'not a url' }, expect: 65, message: /AMSYNC_URL/ },
  { name: 'AMSYNC_LOG_LEVEL=verbose', command: 'sync', env: { AMSYNC_LOG_LEVEL: 'verbose' }, expect: 65, message: /AMSYNC_LOG_LEVEL/ },
  { name: 'AMSYNC_HTTP_TIMEOUT_MS=abc', command: 'sync', env: { AMSYNC_HTTP_TIMEOUT_MS: 'abc' }, expect: 65, message: /AMSYNC_HTTP_TIMEOUT_MS/ },
  { name: 'AMSYNC_ALLOW_INSECURE_HTTP=maybe', command: 'sync', env: { AMSYNC_ALLOW_INSECURE_HTTP: 'maybe' }, expect: 65, message: /AMSYNC_ALLOW_INSECURE_HTTP/ },
  { name: 'AMSYNC_MAX_DELETES=-1', command: 'sync', env: { AMSYNC_MAX_DELETES: '-1' }, expect: 65, message: /AMSYNC_MAX_DELETES/ },
  { name: 'AMSYNC_RETRY_MAX_ATTEMPTS=0', command: 'sync', env: { AMSYNC_RETRY_MAX_ATTEMPTS: '0' }, expect: 65, message: /AMSYNC_RETRY_MAX_ATTEMPTS/ },
  { name: 'AMSYNC_RATE=Infinity', command: 'sync', env: { AMSYNC_RATE: 'Infinity' }, expect: 65, message: /AMSYNC_RATE/ },
  { name: 'AMSYNC_FILE names a file that does not exist', command: 'sync', env: { AMSYNC_FILE: 'gone.yaml' }, expect: 65, message: /gone\.yaml/ },
  { name: 'no bearer token at all', command: 'sync', env: { AMSYNC_TOKEN: undefined }, expect: 64, message: /no bearer token/ },
  { name: 'no service URL at all', command: 'plan', env: { AMSYNC_URL: undefined }, expect: 64, message: /amsync demo/ },
  { name: 'AMSYNC_TOKEN with white space inside', command: 'sync', env: { AMSYNC_TOKEN: `${CANARY_TOKEN} extra` }, expect: 64, message: /token/ },
  { name: 'AMSYNC_TOKEN with a character no header can carry', command: 'plan', env: { AMSYNC_TOKEN: `${CANARY_TOKEN}é` }, expect: 64, message: /token/ },
  { name: 'AMSYNC_TOKEN_FILE names a file that does not exist', command: 'sync', env: { AMSYNC_TOKEN: undefined, AMSYNC_TOKEN_FILE: 'no-token' }, expect: 64, message: /no-token/ },
  { name: 'an empty token file', command: 'sync', args: ['--token-file', 'token'], env: { AMSYNC_TOKEN: undefined }, files: { token: '\n' }, expect: 64, message: /token/ },
  { name: 'a token file that is a symlink loop', command: 'plan', args: ['--token-file', 'token'], env: { AMSYNC_TOKEN: undefined }, files: { token: { symlink: 'token2' }, token2: { symlink: 'token' } }, expect: 64, message: /token/ },
  { name: 'AMSYNC_TOKENS_DIR names a file, not a directory', command: 'sync', env: { AMSYNC_TOKENS_DIR: 'access.yaml' }, expect: 1, message: /access\.yaml/ },

  // ---- the daemon ----
  { name: 'the daemon with a schedule that is not cron', command: 'daemon', args: ['--schedule', '* * *'], expect: 64, message: /--schedule/ },
  { name: 'the daemon listening on a port out of range', command: 'daemon', args: ['--listen', '127.0.0.1:99999'], expect: 64, message: /--listen/ },
  { name: 'the daemon in a mode that does not exist', command: 'daemon', args: ['--mode', 'fast'], expect: 64, message: /--mode|fast/ },
  { name: 'the daemon with AMSYNC_DAEMON_SCHEDULE that is not cron', command: 'daemon', env: { AMSYNC_DAEMON_SCHEDULE: 'every minute' }, expect: 65, message: /AMSYNC_DAEMON_SCHEDULE/ },
  { name: 'the daemon with an invalid settings file', command: 'daemon', files: { 'settings.yaml': 'daemon:\n  debounceMs: soon\n' }, expect: 65, message: /debounceMs/ },
  { name: 'the daemon with AMSYNC_TOKEN_FILE missing', command: 'daemon', env: { AMSYNC_TOKEN: undefined, AMSYNC_TOKEN_FILE: 'no-token' }, expect: 64, message: /no-token/ },
  { name: 'the daemon watching a desired file that is a symlink loop', command: 'daemon', files: { 'access.yaml': { symlink: 'loop.yaml' }, 'loop.yaml': { symlink: 'access.yaml' } }, expect: 'keeps running', message: /ELOOP|loop/ },
  { name: 'the daemon watching a folder that is a symlink loop', command: 'daemon', args: ['-f', 'cm/access.yaml'], files: { cm: { symlink: 'cm2' }, cm2: { symlink: 'cm' } }, expect: 'keeps running', message: /ELOOP|loop|cm\/access\.yaml/ },
  { name: 'the daemon with a password file that is a symlink loop', command: 'daemon', files: { 'access.yaml': 'sshUsers:\n  - username: deploy\n    password: { file: pw }\n', pw: { symlink: 'pw2' }, pw2: { symlink: 'pw' } }, expect: 'keeps running', message: /ELOOP|loop|pw/ },
  { name: 'the daemon with a YAML alias bomb as its desired file', command: 'daemon', files: { 'access.yaml': aliasBomb() }, expect: 'keeps running', message: /alias/i },
  { name: 'the daemon with a binary desired file', command: 'daemon', files: { 'access.yaml': binary(4, 1024) }, expect: 'keeps running', message: /not UTF-8|binary/ },
];

export interface BadInputOutcome {
  /** Exit code, or 'kept running' for a daemon that survived the input. */
  readonly result: number | null | 'kept running';
  readonly stdout: string;
  readonly stderr: string;
  /** Requests the emulator received while the command ran: must be zero. */
  readonly requests: number;
}

/**
 * Runs one bad input end to end: the CLI in-process (`run(argv, io)`, as the binary runs it)
 * against its own emulator (so a request it should not have sent is counted against it
 * alone), in a folder holding the case's files.
 */
export async function runBadInput(c: BadInput): Promise<BadInputOutcome> {
  const emu = await startEmulator({ tokens: [CANARY_TOKEN] });
  const dir = await mkdtemp(join(tmpdir(), 'amsync-bad-input-'));
  try {
    const files: Record<string, FileContent> = { 'access.yaml': VALID_ACCESS, ...c.files };
    for (const [name, content] of Object.entries(files)) {
      const path = join(dir, name);
      await mkdir(dirname(path), { recursive: true });
      if (typeof content === 'string' || Buffer.isBuffer(content)) await writeFile(path, content);
      else if ('symlink' in content) await symlink(content.symlink, path);
      else await mkdir(path, { recursive: true });
    }
    const env: Record<string, string> = { NO_COLOR: '1', AMSYNC_URL: emu.url, AMSYNC_TOKEN: CANARY_TOKEN, DEPLOY_PASSWORD: CANARY_PASSWORD };
    for (const [k, v] of Object.entries(c.env ?? {})) {
      if (v === undefined) delete env[k];
      else env[k] = v;
    }
    const settings = c.files?.['settings.yaml'] !== undefined && !(c.args ?? []).includes('--settings') ? ['--settings', 'settings.yaml'] : [];
    const daemonDefaults = c.command === 'daemon' ? ['--listen', '127.0.0.1:0', '--schedule', '0 0 1 1 *'] : [];
    const argv = c.argv ?? [c.command, ...daemonDefaults, ...settings, ...(c.args ?? [])];
    // In-process (the same code as the binary): the daemon's signals come from the test.
    const signals = new EventEmitter();
    let stderr = '';
    const running = runInProcess(argv, { cwd: dir, env, signals, onStderr: (_chunk, all) => (stderr = all) });
    let result: number | null | 'kept running';
    let stdout: string;
    if (c.expect === 'keeps running') {
      // Alive, with the error logged: then asked to stop, which it must do gracefully.
      const exited = running.then((r) => r.code);
      const ended = await Promise.race([
        waitFor(() => /"msg":"daemon started"/.test(stderr) && c.message.test(stderr), `the daemon to log ${c.message}`, 20_000).then(() => 'logged' as const),
        exited.then(() => 'exited' as const),
      ]).catch(() => 'timed out' as const);
      if (ended !== 'exited') signals.emit('SIGTERM', 'SIGTERM');
      const run = await running;
      result = ended === 'timed out' ? null : ended === 'logged' && run.code === 0 ? 'kept running' : run.code;
      ({ stdout, stderr } = run);
    } else {
      const run = await running;
      ({ code: result, stdout, stderr } = run);
    }
    return { result, stdout, stderr, requests: emu.requests().length };
  } finally {
    await emu.close();
    await rm(dir, { recursive: true, force: true });
  }
}
