import { execFile, type ChildProcess } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { existsSync, renameSync, writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { startEmulator, type EmulatorOptions, type EmulatorStateSnapshot, type RequestLogEntry, type RunningEmulator, type SeedResult } from '../../../src/emulator/index.js';
import { runInProcess } from '../../helpers/in-process.js';
import { spawnAmsync, type AmsyncRun } from '../../helpers/spawn.js';
import {
  appliedVersusReceived,
  canariesFound,
  deletedWithoutEvidence,
  deletesOfDeclared,
  deletesOutsidePlan,
  divergence,
  endlessListingExit,
  duplicateApikeys,
  expectedDeletes,
  fingerprintsLost,
  interleavedWriters,
  LIST_ROUTES,
  listingComplete,
  reportUntruths,
  requestsOf,
  writesToProtected,
  type ReportedResult,
  type RunReport,
  seedPassword,
  type TrackedPasswords,
  withRenames,
  writesAfterIncompleteListing,
  writesAfterInterrupt,
  writesOf,
} from './invariants.js';
import { runWithReadOnlyFolder } from './read-only.js';
import { DEEP_INTERRUPT_LABEL, ENDLESS_LABEL, HOLD_LABEL, INTERRUPT_LABEL, KILL_LABEL, makeSchedule, PAUSE_LABEL, type ChaosSchedule, type Rename } from './schedule.js';

/**
 * Runs one chaos schedule end to end against an in-process emulator on 127.0.0.1: the built
 * CLI as a child process under faults (killed, interrupted, two at once, its memory sampled),
 * the runs before and after the faults in-process; then every invariant of DESIGN.md §8
 * checked from the request log and the emulator's state. Every wait is bounded in count and time.
 */

export interface Violation {
  readonly invariant: string;
  readonly detail: string;
}

/** What one schedule did and found; the figures of the final report are sums of these. */
export interface ScheduleOutcome {
  readonly seed: number;
  readonly families: readonly string[];
  readonly violations: Violation[];
  /** Invariant checks made (each check of one invariant against one run or state). */
  checks: number;
  /** CLI (or daemon) runs, with their exit codes. */
  readonly runs: { readonly name: string; readonly code: number | null; readonly killed: boolean; readonly writes: number; readonly error?: string; readonly peakMiB?: number }[];
  /** Requests the emulator answered in all. */
  requests: number;
  /** Faults that fired, by rule label. */
  readonly fired: Record<string, number>;
  /** The token file was re-read after a 401 and the new token was used. */
  tokenRotated: boolean;
}

/** The invariants, in the user's words; every check is filed under one of them. */
export const invariants = {
  dryRun: 'a dry-run plan succeeds and writes nothing',
  planned: 'the plan deletes exactly what the file and the service call for',
  deletes: "nothing is deleted outside the plan's delete set, and never a declared item",
  listing: 'zero writes (so zero deletes) after an incomplete listing',
  duplicates: 'no duplicate apikey: never two remote keys with one declared name',
  converges: 'once faults stop, a sync succeeds within two runs',
  finalPlan: 'once converged, a plan with --detailed-exitcode exits 0',
  success: 'a sync that exits 0 leaves the service as declared',
  zeroWrites: 'the run after a successful sync makes zero writes',
  exitCodes: 'every exit code is one of the contract',
  tokens: "after a successful sync, every declared key's current token is in tokensDir",
  report: 'the report tells the truth: what it says was applied is so',
  protect: 'protected items are never changed or deleted',
  canaries: 'canary secrets never appear in stdout, stderr, logs, reports or plan files, raw, JSON-escaped or URL-encoded',
  fingerprints: 'every password the service confirmed is fingerprinted in the state file when the run ends (after Ctrl-C too)',
  interrupt: 'Ctrl-C mid-apply exits 130 with a summary, and the next run converges',
  fifo: 'a FIFO in tokensDir is an error for its key, never a wait',
  bounded: 'every run ends by itself: no wait without a bound',
  memory: 'a body without end does not grow a run past 256 MiB resident',
  emulator: 'the emulator never fails inside',
  daemonStops: 'the daemon stops gracefully on SIGTERM',
  noWriteAfterInterrupt: 'no write starts after an interrupt: not a queued one, not a retry',
  oneWriter: 'never two writers: the writes of two processes sharing a state file never interleave',
  appliedReceived: 'applied equals what the service received, change by change (the report and the request log agree)',
  deletedMeansDeleted: 'never "deleted" without a DELETE or a confirmed absence',
  keyKept: 'a run that exits 0 leaves an integrator key the service accepts in its key file',
  tokensRenewed: 'access tokens are renewed before they expire: no change fails for an expired token',
  harness: 'the schedule runs to its end',
} as const;

export const T1 = 'CANARY-bearer-first-0f3a9c';
export const T2 = 'CANARY-bearer-rotated-7d21e4';
/** The second writer's tokens (two-writers, paused-writer): the request log tells the writers apart by them. */
export const T3 = 'CANARY-bearer-rival-5b80d2';
export const T4 = 'CANARY-bearer-rival-rotated-e19a47';
/** The integrator key a schedule that logs in with one starts with. */
export const KEY = 'CANARY-integrator-key-3c9e51';
/** Where that key lives, from the schedule's folder (a folder of its own: it is made read-only). */
export const KEY_FILE = 'keys/integrator-key';
/**
 * How long a paused writer stays stopped at most: longer than a lock not refreshed is called
 * stale by a lock that ages (10 s before issue 27; the pause of its finding was 14 s).
 */
export const PAUSE_MS = 12_000;
/**
 * How long one run of amsync may take before it counts as a wait without a bound (killed, the
 * `bounded` invariant broken). Above the longest legitimate run measured with margin: seed
 * 3078 (1 s tokens under 503 storms: the rate held near 1.6 requests/s, half the requests
 * renewing a token) sends ~250 requests in 43–77 s; a hang still shows.
 */
export const RUN_BOUND_MS = 120_000;
/**
 * Writes sent before SIGINT reach the service within this: milliseconds on 127.0.0.1, but the
 * test process that stamps their arrival may be busy (two schedules at once, on two cores).
 */
export const INTERRUPT_GRACE_MS = 2_000;

/** The command to replay one seed, printed with every failure. */
export function replayHint(seed: number): string {
  return `replay with: CHAOS_SEED=${seed} npm run chaos`;
}

export class Recorder {
  constructor(private readonly outcome: ScheduleOutcome) {}

  check(invariant: string, problems: readonly string[]): void {
    this.outcome.checks += 1;
    for (const detail of problems) this.outcome.violations.push({ invariant, detail });
  }
}

/** Waits until the emulator answers nothing (held and delayed requests have landed). */
export async function waitIdle(emu: RunningEmulator, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (emu.inFlight() > 0) {
    if (Date.now() > deadline) throw new Error(`the emulator still had ${emu.inFlight()} requests in flight after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

export async function checkPassword(emu: RunningEmulator, username: string, password: string): Promise<boolean> {
  const res = await fetch(`${emu.url}/_emulator/check-password`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username, password }) });
  return ((await res.json()) as { match?: boolean }).match === true;
}

/** The desired-state file of a schedule, as a person would write it. */
export function desiredYaml(schedule: ChaosSchedule, seeded: SeedResult): string {
  const q = (s: string) => JSON.stringify(s);
  const lines = ['sshUsers:'];
  for (const u of schedule.users) {
    lines.push(`  - username: ${q(u.username)}`);
    if (u.ensure === 'absent') lines.push('    ensure: absent');
    if (u.password?.kind === 'env') lines.push(`    password: { env: ${u.password.name} }`);
    if (u.password?.kind === 'file') lines.push(`    password: { file: ${q(u.password.path)} }`);
  }
  lines.push('apikeys:');
  for (const k of schedule.keys) {
    lines.push(`  - name: ${q(k.name)}`);
    if (k.pinsInitial !== undefined) lines.push(`    id: ${seeded.apikeys[k.pinsInitial]!.id}`);
    if (k.ensure === 'absent') {
      lines.push('    ensure: absent');
      continue;
    }
    lines.push(`    superuser: ${k.superuser}`, `    roles: [${k.roles.join(', ')}]`);
  }
  lines.push('prune:', `  sshUsers: ${schedule.prune.sshUsers}`, `  apikeys: ${schedule.prune.apikeys}`);
  lines.push('protect:', `  sshUsers: ${JSON.stringify(schedule.protect.sshUsers)}`, `  apikeys: ${JSON.stringify(schedule.protect.apikeys)}`);
  return `${lines.join('\n')}\n`;
}

/** Small timeouts and retry delays, so a schedule takes seconds, not minutes. */
export function settingsYaml(schedule: ChaosSchedule, extra = ''): string {
  const s = schedule.settings;
  return [
    'stateFile: state.json',
    'tokensDir: tokens',
    'http:',
    `  timeoutMs: ${s.timeoutMs}`,
    'initialRate: 400',
    `concurrency: ${s.concurrency}`,
    'retry:',
    `  maxAttempts: ${s.maxAttempts}`,
    '  baseDelayMs: 5',
    '  maxDelayMs: 80',
    '  maxElapsedMs: 15000',
    '  retryAfterCapMs: 1500',
    `pageSize: ${s.pageSize}`,
    'maxDeletes: 100',
    extra,
  ].join('\n');
}

export interface Prepared {
  readonly dir: string;
  readonly env: Record<string, string>;
  readonly seeded: SeedResult;
  readonly canaries: string[];
  readonly stateKey: string;
}

/**
 * The service before (seeded through the control API: not in the request log), the desired
 * file, its secret files, the settings, the token file, and a state file of fingerprints.
 */
export async function prepare(schedule: ChaosSchedule, emu: RunningEmulator, prefix: string, settingsExtra = ''): Promise<Prepared> {
  const declared = new Map(schedule.users.map((u) => [u.username, u]));
  const seeded = emu.seed({
    sshUsers: schedule.initial.sshUsers.map((u) => ({ username: u.username, password: seedPassword(declared.get(u.username), u.password) })),
    apikeys: schedule.initial.apikeys.map((k) => ({ name: k.name, superuser: k.superuser, roles: k.roles })),
  });
  // Faults name items by id (renames): the i-th seeded item has id i + 1.
  seeded.apikeys.forEach((k, i) => {
    if (k.id !== i + 1) throw new Error(`seed ${schedule.seed}: expected apikey ${i} to get id ${i + 1}, got ${k.id}`);
  });
  seeded.sshUsers.forEach((u, i) => {
    if (u.id !== i + 1) throw new Error(`seed ${schedule.seed}: expected SSH user ${i} to get id ${i + 1}, got ${u.id}`);
  });
  const dir = await mkdtemp(join(tmpdir(), prefix));
  const stateKey = `CANARY-state-key-${schedule.seed}`;
  // A writer waits up to 20 s for another live writer's lock (the daemon beside a CLI sync); a
  // lock a killed run left behind is taken over at once.
  const env: Record<string, string> = { AMSYNC_URL: emu.url, AMSYNC_STATE_KEY: stateKey, AMSYNC_LOCK_TIMEOUT_MS: '20000' };
  const canaries = [T1, T2, T3, T4, KEY, stateKey];
  for (const u of schedule.users) {
    if (u.password?.kind === 'env') env[u.password.name] = u.password.value;
    if (u.password?.kind === 'file') {
      await mkdir(dirname(join(dir, u.password.path)), { recursive: true });
      await writeFile(join(dir, u.password.path), `${u.password.value}\n`);
    }
    if (u.password) canaries.push(u.password.value);
    if (u.applied !== undefined) canaries.push(u.applied);
  }
  if (schedule.integratorKey) {
    await mkdir(join(dir, dirname(KEY_FILE)), { recursive: true, mode: 0o700 });
    await writeFile(join(dir, KEY_FILE), `${KEY}\n`, { mode: 0o600 });
    env.AMSYNC_REFRESH_TOKEN_FILE = KEY_FILE;
  } else if (schedule.tokenFromFile) {
    await writeFile(join(dir, 'token'), `${T1}\n`);
    if (schedule.writers) await writeFile(join(dir, 'token-rival'), `${T3}\n`);
  } else env.AMSYNC_TOKEN = T1;
  if (schedule.withStateFile) {
    const applied: Record<string, string> = {};
    for (const u of seeded.sshUsers) {
      const d = declared.get(u.username);
      if (d?.applied !== undefined) applied[String(u.id)] = createHmac('sha256', Buffer.from(stateKey, 'utf8')).update(d.applied, 'utf8').digest('hex');
    }
    await writeFile(join(dir, 'state.json'), `${JSON.stringify({ version: 1, services: { [emu.url]: { sshUserPasswords: applied } } }, null, 2)}\n`, { mode: 0o600 });
  }
  await writeFile(join(dir, 'access.yaml'), desiredYaml(schedule, seeded));
  await writeFile(join(dir, 'settings.yaml'), settingsYaml(schedule, settingsExtra));
  return { dir, env, seeded, canaries, stateKey };
}

/** Every file amsync wrote besides token files: reports, saved plans, the state file. */
export async function writtenFiles(dir: string): Promise<{ where: string; text: string }[]> {
  const out: { where: string; text: string }[] = [];
  for (const name of await readdir(dir)) {
    if (!/\.(json|tfplan)$/.test(name)) continue;
    out.push({ where: name, text: await readFile(join(dir, name), 'utf8') });
  }
  return out;
}

/** Apikey tokens to treat as canaries: every token the service holds at this moment. */
export function tokensIn(state: EmulatorStateSnapshot): string[] {
  return state.apikeys.map((k) => k.token);
}

/** Faults fired in this run, by label, added into `fired`. */
export function countFired(requests: readonly RequestLogEntry[], fired: Record<string, number>): void {
  for (const r of requests) if (r.fault !== undefined) fired[r.fault] = (fired[r.fault] ?? 0) + 1;
}

/** The token files in tokensDir, by file name, as a run left them: regular files only (a FIFO would block the reader). */
export async function readTokenFiles(dir: string): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  if (!existsSync(join(dir, 'tokens'))) return files;
  for (const entry of await readdir(join(dir, 'tokens'), { withFileTypes: true })) {
    if (!entry.name.startsWith('.') && entry.isFile()) files.set(entry.name, await readFile(join(dir, 'tokens', entry.name), 'utf8'));
  }
  return files;
}

/** fifo-token: a FIFO where amsync keeps the token of `name` (declared names are plain: the file is named as the key). */
export async function makeTokenFifo(dir: string, name: string): Promise<string> {
  const path = join(dir, 'tokens', name);
  await mkdir(dirname(path), { recursive: true });
  await rm(path, { force: true });
  await promisify(execFile)('mkfifo', ['-m', '600', path]);
  return path;
}

/** After a successful sync, each declared key's token file holds that key's current token. */
export async function tokenFileProblems(files: ReadonlyMap<string, string>, schedule: ChaosSchedule, state: EmulatorStateSnapshot): Promise<string[]> {
  const problems: string[] = [];
  for (const k of schedule.keys) {
    if (k.ensure !== 'present') continue;
    const remote = state.apikeys.filter((x) => x.name === k.name);
    if (remote.length !== 1) continue;
    // Declared names here are plain ([a-z0-9-]): the file is named as the key.
    const file = files.get(k.name);
    if (file === undefined) problems.push(`no token file for apikey "${k.name}"`);
    else if (file !== remote[0]!.token) problems.push(`the token file of apikey "${k.name}" holds ${state.apikeys.some((x) => x.token === file) ? 'another key\'s token' : 'a token of no existing key'}, not its own (id ${remote[0]!.id})`);
  }
  return problems;
}

const outputFormats = [['--json'], ['--format', 'markdown'], []] as const;

/** One run of a CLI schedule, with what the service and the files looked like after it. */
interface RunRecord extends AmsyncRun {
  readonly name: string;
  /** The requests of this process (runs made together are told apart by their tokens' labels). */
  readonly requests: RequestLogEntry[];
  /** Every request while it ran (of the other process too, for runs made together). */
  readonly window: RequestLogEntry[];
  /** When the runner sent it SIGINT (epoch ms). */
  readonly signalledAt?: number;
  /** When the runner had it stopped (SIGSTOP to SIGCONT, epoch ms). */
  readonly paused?: Pause;
  /** The integrator key in its file when the run ended is one the service refuses. */
  readonly keyLost?: boolean;
  readonly before: EmulatorStateSnapshot;
  readonly state: EmulatorStateSnapshot;
  readonly tracked: TrackedPasswords;
  readonly tokenFiles: Map<string, string>;
  /** Made together with other processes (two-writers). */
  readonly together: boolean;
}

interface RunSpec {
  readonly name: string;
  readonly args: readonly string[];
  readonly poll?: (child: ChildProcess) => void;
  /** Its own environment and credential arguments (a second writer's token), instead of the schedule's. */
  readonly env?: Record<string, string>;
  readonly credentialArgs?: readonly string[];
  /** Started once this resolves (a second writer that starts while the first is paused). */
  readonly gate?: Promise<unknown>;
  /** Called when the process has ended. */
  readonly onEnd?: () => void;
  /** This folder (absolute) is read-only for the process (rotating-key-read-only). */
  readonly readOnlyFolder?: string;
  /**
   * Run through `run(argv, io)` in this process instead of the built binary: the runs before
   * and after the faults, which no signal, kill or memory bound is about.
   */
  readonly inProcess?: boolean;
}

/** `amsync ARGS` in-process, as a run of the harness: bounded in time as a child is. */
async function runInProcessBounded(args: readonly string[], options: { cwd: string; env: Record<string, string>; timeoutMs?: number }): Promise<AmsyncRun> {
  let stdout = '';
  let stderr = '';
  const running = runInProcess(args, { cwd: options.cwd, env: options.env, onStdout: (_c, all) => (stdout = all), onStderr: (_c, all) => (stderr = all) });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const bound = new Promise<'timed out'>((resolve) => (timer = setTimeout(() => resolve('timed out'), options.timeoutMs ?? RUN_BOUND_MS)));
  try {
    const result = await Promise.race([running, bound]);
    if (result === 'timed out') return { code: null, killed: false, timedOut: true, signals: [], stdout, stderr };
    return { code: result.code, killed: false, timedOut: false, signals: [], stdout: result.stdout, stderr: result.stderr };
  } finally {
    clearTimeout(timer);
  }
}

/** Largest peak resident memory a run may reach (a sidecar's memory limit, with room). */
export const MAX_RSS_KIB = 256 * 1024;

/** The message of a writer refused by the lock (src/apply/writer-lock.ts). */
export const LOCK_REFUSAL = /another amsync run is writing to this service/;

/**
 * One CLI schedule: plan (before faults: the expected delete set), sync under faults (killed
 * or interrupted and run again, or two syncs at once), then faults stop: sync until it
 * succeeds (two runs at most), one more sync (zero writes), and `plan --detailed-exitcode`.
 */
export async function runCliSchedule(seed: number): Promise<ScheduleOutcome> {
  const schedule = makeSchedule(seed);
  const outcome: ScheduleOutcome = { seed, families: schedule.families, violations: [], checks: 0, runs: [], requests: 0, fired: {}, tokenRotated: false };
  const rec = new Recorder(outcome);
  const emu = await startEmulator({ ...emulatorOptionsFor(schedule), seed, onError: (e) => rec.check(invariants.emulator, [String(e)]) });
  // The writers of a schedule with two are told apart in the request log by their tokens.
  emu.setClientLabels({ [T1]: 'faulted', [T2]: 'faulted', [T3]: 'faulted-rival', [T4]: 'faulted-rival' });
  let prepared: Prepared | undefined;
  const outputs: { where: string; text: string }[] = [];
  const history: { run: string; requests: RequestLogEntry[] }[] = [];
  try {
    prepared = await prepare(schedule, emu, `amsync-chaos-${seed}-`);
    const { dir, env, stateKey } = prepared;
    const canaries = [...prepared.canaries, ...tokensIn(emu.state())];
    // The token from a file is named by --token-file (the file is rotated for token-expiry).
    const credentialArgs = usesTokenFile(schedule) ? ['--token-file', 'token'] : [];
    const sampleMemory = schedule.families.includes('endless-body');
    let lastState = emu.state();
    const signalled: Record<string, number> = {};
    const pauses: Record<string, Pause> = {};

    const start = (spec: RunSpec): Promise<AmsyncRun> => {
      const args = [...spec.args, '--settings', 'settings.yaml', ...(spec.credentialArgs ?? credentialArgs), '--log-level', 'trace'];
      const runEnv = { ...env, ...spec.env };
      if (spec.inProcess === true) return runInProcessBounded(args, { cwd: dir, env: runEnv });
      if (spec.readOnlyFolder !== undefined) {
        return runWithReadOnlyFolder(spec.readOnlyFolder, args, { cwd: dir, env: runEnv, timeoutMs: RUN_BOUND_MS }).then((r) => {
          if (r.run) return r.run;
          rec.check(invariants.harness, [`the read-only key file could not be played: ${r.unplayable}`]);
          return { code: null, killed: false, timedOut: false, signals: [], stdout: '', stderr: '' };
        });
      }
      return spawnAmsync(args, { cwd: dir, env: runEnv, sampleMemory, timeoutMs: RUN_BOUND_MS, ...(spec.poll ? { poll: spec.poll } : {}) });
    };
    const runAll = async (specs: readonly RunSpec[]): Promise<RunRecord[]> => {
      emu.clearRequests();
      const before = lastState;
      const results = await Promise.all(specs.map(async (spec) => (spec.gate === undefined ? start(spec) : spec.gate.then(() => start(spec))).finally(() => spec.onEnd?.())));
      await waitIdle(emu);
      const requests = emu.requests();
      history.push({ run: specs.map((x) => x.name).join(' + '), requests });
      const state = emu.state();
      lastState = state;
      // The state file as the runs left it: its fingerprints must tell the truth.
      const tracked = await readTracked(join(dir, 'state.json'), emu.url, stateKey);
      const tokenFiles = await readTokenFiles(dir);
      canaries.push(...tokensIn(state));
      const keyLost = schedule.integratorKey ? await keepKey(emu, dir, canaries) : undefined;
      outcome.requests += requests.length;
      countFired(requests, outcome.fired);
      return results.map((result, i) => {
        const name = specs[i]!.name;
        outputs.push({ where: `stdout of ${name}`, text: result.stdout }, { where: `stderr of ${name}`, text: result.stderr });
        const error = /^error: .*$/m.exec(result.stderr)?.[0];
        // Runs made together: each its own requests, by the label of the token it was given.
        const own = requestsOf(name, requests, specs.length > 1);
        const peak = result.peakRssKiB === undefined ? {} : { peakMiB: Math.round(result.peakRssKiB / 1024) };
        outcome.runs.push({ name, code: result.code, killed: result.killed, writes: writesOf(own).length, ...(error ? { error } : {}), ...peak });
        if (/token file re-read after 401","changed":true|"changed":true[^\n]*token file re-read after 401/.test(result.stderr)) outcome.tokenRotated = true;
        const signal = { ...(signalled[name] === undefined ? {} : { signalledAt: signalled[name] }), ...(pauses[name] === undefined ? {} : { paused: pauses[name] }) };
        const key = keyLost === undefined ? {} : { keyLost };
        return { ...result, name, requests: own, window: requests, before, state, tracked, tokenFiles, together: specs.length > 1, ...signal, ...key };
      });
    };
    // The runs before and after the faults go in-process; those under faults are processes.
    const run = async (name: string, args: string[]) => (await runAll([{ name, args, inProcess: true }]))[0]!;

    // 1. The plan before any fault: the delete set every later run must stay within.
    const plan = await run('plan', ['plan', '--json', '--out', 'plan.tfplan', '--report', 'plan-report.json']);
    checkPlan(rec, plan, schedule, prepared.seeded);

    // 2. The run under faults.
    const bump = (label: string) => (outcome.fired[label] = (outcome.fired[label] ?? 0) + 1);
    const exchangesBefore = emu.oauth().exchanges;
    const faulted = await runFaulted({ schedule, emu, dir, runAll, signalled, pauses, played: bump });
    emu.setFaults({ failRate: 0, rules: [], rateLimit: null });
    // Faults the runner plays rather than the emulator, counted as fired when they did.
    // Access tokens of a second, renewed during the run: more than the first exchange was made.
    if (schedule.integratorKey && schedule.integratorKey.accessTokenTtlSeconds < 5 && emu.oauth().exchanges - exchangesBefore > 1) bump('short-tokens');
    if (schedule.writers) bump(faulted.some((r) => r.code === 3) ? 'two-writers-one-refused' : 'two-writers');
    if (schedule.fifoKey !== undefined && faulted.some((r) => /FIFO/.test(`${r.stdout}\n${r.stderr}`))) bump('fifo-token');
    if (schedule.fifoKey !== undefined) await rm(join(dir, 'tokens', schedule.fifoKey), { force: true });

    // 3. Faults stopped: converge within two runs, then a run with zero writes, then a plan
    // with --detailed-exitcode that exits 0.
    const after: RunRecord[] = [];
    for (let i = 1; i <= 2; i += 1) {
      const r = await run(`converge-${i}`, ['sync', '--json', '--report', `converge-${i}.json`]);
      after.push(r);
      if (r.code === 0) break;
    }
    const converged = after.find((r) => r.code === 0);
    rec.check(invariants.converges, converged ? [] : after.map((r) => `${r.name} exited ${r.code}: ${lastLines(r.stderr)}`));
    // The run after a success: converge-1 already is one when the faulted run succeeded.
    const faultedSucceeded = faulted.every((r) => r.code === 0);
    const noop = faultedSucceeded ? after.at(-1)! : await run('no-op', ['sync', '--json', '--report', 'no-op.json']);
    const finalPlan = await run('final-plan', ['plan', '--detailed-exitcode']);
    rec.check(invariants.finalPlan, finalPlan.code === 0 ? [] : [`final plan exited ${finalPlan.code}: ${finalPlan.stdout.slice(0, 2000)} ${lastLines(finalPlan.stderr)}`]);

    const syncs = faultedSucceeded ? [...faulted, ...after] : [...faulted, ...after, noop];
    await checkRuns(rec, { schedule, prepared, emu, outcome, plan, faulted, syncs, finalPlan });
    outputs.push(...(await writtenFiles(dir)));
    rec.check(invariants.canaries, canariesFound(outputs, [...new Set(canaries)]));
    return outcome;
  } finally {
    await emu.close();
    const broken = outcome.violations.length > 0;
    // CHAOS_KEEP=1 keeps every schedule's folder, as a violation does: to look into one that passed.
    if (prepared && !broken && process.env.CHAOS_KEEP === undefined) await rm(prepared.dir, { recursive: true, force: true });
    else if (prepared) {
      // What each run printed, beside its files, for whoever looks into the violation.
      await writeFile(join(prepared.dir, 'outputs.log'), outputs.map((o) => `==== ${o.where}\n${o.text}`).join('\n'));
      await writeFile(join(prepared.dir, 'requests.jsonl'), history.flatMap((h) => h.requests.map((e) => JSON.stringify({ run: h.run, ...e }))).join('\n'));
      if (broken) outcome.violations.push({ invariant: '(kept for inspection)', detail: prepared.dir });
    }
  }
}

/** The plan before faults succeeds, writes nothing, and deletes exactly the modelled set. */
function checkPlan(rec: Recorder, plan: RunRecord, schedule: ChaosSchedule, seeded: SeedResult): void {
  rec.check(invariants.dryRun, plan.code === 0 ? [] : [`plan exited ${plan.code}: ${plan.stderr.slice(-2000)}`]);
  rec.check(invariants.dryRun, writesOf(plan.requests).map((w) => `${w.method} ${w.path}`));
  const doc = plan.code === 0 ? (JSON.parse(plan.stdout) as { changes: { kind: string; action: string; id: number | null }[] }) : { changes: [] };
  const planned = new Set(doc.changes.filter((c) => c.action === 'delete').map((c) => `${c.kind}:${c.id}`));
  const modelled = expectedDeletes(schedule, seeded);
  rec.check(invariants.planned, sameSet(planned, modelled) ? [] : [`plan deletes {${[...planned].join(', ')}}, expected {${[...modelled].join(', ')}}`]);
}

interface Pause {
  readonly from: number;
  to?: number;
}

/** What the run under faults plays with. */
interface Faulting {
  readonly schedule: ChaosSchedule;
  readonly emu: RunningEmulator;
  readonly dir: string;
  readonly runAll: (specs: readonly RunSpec[]) => Promise<RunRecord[]>;
  /** When each process was sent SIGINT, by run name. */
  readonly signalled: Record<string, number>;
  /** When each process was stopped, by run name. */
  readonly pauses: Record<string, Pause>;
  /** Counts a fault the runner played itself as fired. */
  readonly played: (label: string) => void;
}

/**
 * The sync under faults: one process (killed or interrupted at its fault's request, then run
 * again under the other faults), or two at once on the same state file (two-writers), one of
 * which waits for the writer lock or is refused; or a writer paused mid-apply while a second
 * one starts (paused-writer). A FIFO sits in tokensDir for fifo-token; the integrator key's
 * folder is read-only for rotating-key-read-only.
 */
async function runFaulted(f: Faulting): Promise<RunRecord[]> {
  const { schedule, emu, dir, runAll } = f;
  emu.setFaults({ failRate: schedule.faults.failRate, rules: [...schedule.faults.rules], rateLimit: schedule.rateLimit ?? null });
  if (schedule.fifoKey !== undefined) await makeTokenFifo(dir, schedule.fifoKey);
  const poll = faultPoll(f, 'faulted');
  const format = outputFormats[schedule.seed % outputFormats.length]!;
  if (schedule.writers?.paused) return runPausedWriter(f, poll, format);
  if (schedule.writers) {
    const lock = ['--lock-timeout', String(schedule.writers.lockTimeoutMs)];
    return runAll([
      { name: 'faulted', args: ['sync', ...format, '--report', 'faulted.json', ...lock], poll },
      { name: 'faulted-rival', args: ['sync', '--json', '--report', 'faulted-rival.json', ...lock], ...rivalCredentials(schedule) },
    ]);
  }
  const readOnly = schedule.integratorKey?.readOnlyFile ? { readOnlyFolder: join(dir, dirname(KEY_FILE)) } : {};
  const faulted = await runAll([{ name: 'faulted', args: ['sync', ...format, '--report', 'faulted.json'], poll, ...readOnly }]);
  if (schedule.integratorKey?.readOnlyFile && faulted[0]!.code !== null) f.played('rotating-key-read-only');
  if (faulted[0]!.killed || faulted[0]!.signals.includes('SIGINT')) {
    // A run killed mid-apply leaves its writer lock behind: the next run sees its holder dead
    // and takes it over at once (issue 27), so it is given no time to wait for it — a wait, or
    // "another amsync run is writing" (exit 3), is a violation.
    const signalRules = new Set([KILL_LABEL, INTERRUPT_LABEL, DEEP_INTERRUPT_LABEL]);
    emu.setFaults({ rules: schedule.faults.rules.filter((r) => !signalRules.has(r.label ?? '')) });
    faulted.push(...(await runAll([{ name: 'faulted-again', args: ['sync', '--json', '--report', 'faulted-again.json', '--lock-timeout', '0'] }])));
  }
  return faulted;
}

/** The second writer's own token: a file of its own, or the variable (the request log labels it). */
function rivalCredentials(schedule: ChaosSchedule): Pick<RunSpec, 'env' | 'credentialArgs'> {
  return usesTokenFile(schedule) ? { credentialArgs: ['--token-file', 'token-rival'] } : { env: { AMSYNC_TOKEN: T3 } };
}

/** Whether the schedule's runs read their bearer token from a file (`--token-file token`). */
function usesTokenFile(schedule: ChaosSchedule): boolean {
  return schedule.tokenFromFile && schedule.integratorKey === undefined;
}

/**
 * What the runner does while the process under faults runs: SIGKILL at the kill point, SIGINT
 * at an interrupt point (the time is kept: no write may start after it), and the token files
 * rotated while the first requests are held.
 */
function faultPoll(f: Faulting, name: string): (child: ChildProcess) => void {
  const { schedule, emu, dir } = f;
  const at = (label: string) => schedule.faults.rules.findIndex((r) => r.label === label);
  const [killAt, holdAt, interruptAt, deepAt] = [at(KILL_LABEL), at(HOLD_LABEL), at(INTERRUPT_LABEL), at(DEEP_INTERRUPT_LABEL)];
  let rotated = false;
  return (child) => {
    const stats = emu.faults().ruleStats;
    const fired = (index: number) => index >= 0 && (stats[index]?.fired ?? 0) > 0;
    if (fired(killAt) && !child.killed) child.kill('SIGKILL');
    // Ctrl-C while the write the rule holds is in flight: mid-apply (with a deep queue behind it).
    if ((fired(interruptAt) || fired(deepAt)) && !child.killed && f.signalled[name] === undefined) {
      f.signalled[name] = Date.now();
      child.kill('SIGINT');
    }
    if (fired(holdAt) && !rotated) {
      // Rotated the way a secret manager does it: a new file renamed over the old one.
      rotate(dir, 'token', T2);
      if (schedule.writers) rotate(dir, 'token-rival', T4);
      rotated = true;
    }
  };
}

function rotate(dir: string, file: string, token: string): void {
  writeFileSync(join(dir, `${file}.tmp`), `${token}\n`);
  renameSync(join(dir, `${file}.tmp`), join(dir, file));
}

/**
 * paused-writer: the first writer is stopped (SIGSTOP: a VM paused, a frozen container, a long
 * GC) while a write of its apply is held, and a second writer starts then. The first resumes
 * (SIGCONT) once the second has written, or after PAUSE_MS — past the lock's stale time.
 */
async function runPausedWriter(f: Faulting, faultPollOf: (child: ChildProcess) => void, format: readonly string[]): Promise<RunRecord[]> {
  const { schedule, emu, runAll } = f;
  const pauseAt = schedule.faults.rules.findIndex((r) => r.label === PAUSE_LABEL);
  let startRival: () => void = () => undefined;
  const rivalMayStart = new Promise<void>((resolve) => (startRival = resolve));
  let pausedAt: number | undefined;
  let resumed = false;
  const rivalWrote = () => writesOf(emu.requests()).some((e) => e.client === 'faulted-rival');
  const poll = (child: ChildProcess) => {
    faultPollOf(child);
    if (pausedAt === undefined && (emu.faults().ruleStats[pauseAt]?.fired ?? 0) > 0) {
      child.kill('SIGSTOP');
      pausedAt = Date.now();
      f.pauses.faulted = { from: pausedAt };
      f.played('paused-writer');
      startRival();
    } else if (pausedAt !== undefined && !resumed && (Date.now() - pausedAt >= PAUSE_MS || rivalWrote())) {
      child.kill('SIGCONT');
      resumed = true;
      f.pauses.faulted!.to = Date.now();
    }
  };
  const lock = ['--lock-timeout', String(schedule.writers!.lockTimeoutMs)];
  return runAll([
    // A first writer that ends without reaching the pause point lets the second start then.
    { name: 'faulted', args: ['sync', ...format, '--report', 'faulted.json', ...lock], poll, onEnd: startRival },
    { name: 'faulted-rival', args: ['sync', '--json', '--report', 'faulted-rival.json', ...lock], ...rivalCredentials(schedule), gate: rivalMayStart },
  ]);
}

/**
 * Renames by another client that were made: their rule fired, and the item is gone or carries
 * the new name (amsync never renames an SSH user, nor an apikey it does not pin).
 */
export function renamesMade(schedule: ChaosSchedule, fired: Readonly<Record<string, number>>, state: EmulatorStateSnapshot): Rename[] {
  return schedule.renames.filter((r) => {
    if ((fired[r.label] ?? 0) === 0) return false;
    const now = r.kind === 'sshUsers' ? state.sshUsers.find((u) => u.id === r.index + 1)?.username : state.apikeys.find((k) => k.id === r.index + 1)?.name;
    return now === undefined || now === r.to;
  });
}

interface ScheduleRuns {
  readonly schedule: ChaosSchedule;
  readonly prepared: Prepared;
  readonly emu: RunningEmulator;
  readonly outcome: ScheduleOutcome;
  readonly plan: RunRecord;
  readonly faulted: readonly RunRecord[];
  readonly syncs: readonly RunRecord[];
  readonly finalPlan: RunRecord;
}

/** Every invariant over every run of a CLI schedule. */
async function checkRuns(rec: Recorder, runs: ScheduleRuns): Promise<void> {
  const { schedule, prepared, emu, outcome, plan, faulted, syncs, finalPlan } = runs;
  const { seeded, dir } = prepared;
  const timeoutMs = schedule.settings.timeoutMs;
  // The service as judged after another client's renames; deletes may follow either listing.
  const model = withRenames(schedule, seeded, renamesMade(schedule, outcome.fired, finalPlan.state));
  const deleteSet = new Set([...expectedDeletes(schedule, seeded), ...expectedDeletes(model.schedule, model.seeded)]);
  const check = async (username: string, password: string) => checkPassword(emu, username, password);
  for (const r of [plan, ...syncs, finalPlan]) {
    rec.check(invariants.exitCodes, exitCodeProblems(r, r === finalPlan ? [0, 2] : [0, 1]));
    rec.check(invariants.deletes, [...deletesOutsidePlan(r.requests, deleteSet), ...deletesOfDeclared(r.requests, schedule, seeded)].map((p) => `${r.name}: ${p}`));
    rec.check(invariants.listing, writesAfterIncompleteListing(r, timeoutMs));
    rec.check(invariants.duplicates, duplicateApikeys(r.state, schedule).map((p) => `after ${r.name}: ${p}`));
    rec.check(invariants.protect, writesToProtected(r.requests, schedule, seeded).map((p) => `${r.name}: ${p}`));
    rec.check(invariants.bounded, r.timedOut ? [`${r.name} was still running after ${RUN_BOUND_MS / 1000} s: ${lastLines(r.stderr)}`] : []);
    if (r.peakRssKiB !== undefined) rec.check(invariants.memory, r.peakRssKiB > MAX_RSS_KIB ? [`${r.name} peaked at ${Math.round(r.peakRssKiB / 1024)} MiB resident`] : []);
  }
  for (const r of faulted) checkFaultedRun(rec, r, schedule, timeoutMs);
  // Two processes at once: their writes take turns (the window holds both).
  if (faulted[0]?.together) rec.check(invariants.oneWriter, interleavedWriters(faulted[0].window));
  for (const r of [plan, ...syncs, finalPlan]) if (schedule.integratorKey) rec.check(invariants.keyKept, keyProblems(r));
  for (const r of syncs) await checkReportAgainstLog(rec, r, schedule, join(dir, `${r.name}.json`));
  for (const r of syncs) {
    const report = r.killed ? undefined : await readReport(join(dir, `${r.name}.json`));
    if (report) rec.check(invariants.report, reportUntruths(report, r.state).map((p) => `${r.name}: ${p}`));
    if (!r.killed) rec.check(invariants.fingerprints, fingerprintsLost({ name: r.name, requests: unreadWhilePaused(r.requests, r.paused) }, r.before, r.state, r.tracked, schedule, timeoutMs));
  }
  for (const [i, r] of syncs.entries()) {
    if (r.code !== 0) continue;
    // A run that says it succeeded has converged, and the run after it makes zero writes.
    rec.check(invariants.success, (await divergence(model.schedule, model.seeded, r.state, r.tracked, check)).map((p) => `after ${r.name}: ${p}`));
    rec.check(invariants.tokens, (await tokenFileProblems(r.tokenFiles, schedule, r.state)).map((p) => `after ${r.name}: ${p}`));
    if (!r.together) zeroWritesAfter(rec, syncs[i + 1]);
  }
  // Runs made together (two writers) count as one success when none failed (a writer the lock
  // refused did nothing): the run after them all makes zero writes.
  const together = syncs.filter((x) => x.together);
  if (together.some((x) => x.code === 0) && together.every((x) => x.code === 0 || x.code === 3)) zeroWritesAfter(rec, syncs.find((x) => !x.together));
}

function zeroWritesAfter(rec: Recorder, next: RunRecord | undefined): void {
  if (next) rec.check(invariants.zeroWrites, writesOf(next.requests).map((w) => `${next.name}: ${w.method} ${w.path} ${w.status}`));
}

/** The exit codes of the contract: 130 after Ctrl-C, 3 for a writer the lock refused (saying so); never a crash. */
function exitCodeProblems(r: RunRecord, allowed: readonly number[]): string[] {
  if (r.code === null && (r.killed || r.timedOut)) return [];
  // An error amsync did not foresee (src/cli/report-error.ts) is a crash, whatever its exit code.
  const crash = /^error: unexpected failure: .*$/m.exec(r.stderr)?.[0];
  if (crash !== undefined) return [`${r.name} exited ${r.code} with ${crash.slice(0, 300)}`];
  if (r.signals.includes('SIGINT')) return r.code === 130 ? [] : [`${r.name} was interrupted (SIGINT) and exited ${r.code}, not 130: ${lastLines(r.stderr)}`];
  if (r.together && r.code === 3) return LOCK_REFUSAL.test(r.stderr) ? [] : [`${r.name} exited 3 without saying another run holds the lock: ${lastLines(r.stderr)}`];
  return r.code !== null && allowed.includes(r.code) ? [] : [`${r.name} exited ${r.code}: ${lastLines(r.stderr)}`];
}

/** What each new fault of the run under faults calls for, beyond the invariants of every run. */
function checkFaultedRun(rec: Recorder, r: RunRecord, schedule: ChaosSchedule, timeoutMs: number): void {
  if (r.signals.includes('SIGINT')) {
    rec.check(invariants.interrupt, r.code === 130 && /interrupted by SIGINT/.test(r.stderr) ? [] : [`${r.name} exited ${r.code} after SIGINT, without the interrupt's summary: ${lastLines(r.stderr)}`]);
  }
  // Every read of that listing is endless while faults last: the run cannot complete it.
  if (r.requests.some((e) => e.fault === ENDLESS_LABEL)) rec.check(invariants.listing, endlessListingExit(r, ENDLESS_LABEL));
  if (schedule.fifoKey !== undefined) rec.check(invariants.fifo, fifoProblems(r, schedule.fifoKey, timeoutMs));
}

/**
 * A FIFO at tokensDir/<name>: a run that listed both kinds and applied, while a key of that
 * name exists, reports an error for it (exit 1, the FIFO named), and never waits on it.
 */
function fifoProblems(r: RunRecord, name: string, timeoutMs: number): string[] {
  if (r.timedOut) return [`${r.name} hung on the FIFO at tokens/${name}`];
  if (r.killed || r.signals.length > 0 || r.code === 3) return [];
  const listed = Object.values(LIST_ROUTES).every((route) => listingComplete(r.requests, route, timeoutMs));
  if (!listed || !r.state.apikeys.some((k) => k.name === name)) return [];
  if (r.code === 0) return [`${r.name} exited 0 with a FIFO where the token of apikey "${name}" goes`];
  return /FIFO/.test(`${r.stdout}\n${r.stderr}`) ? [] : [`${r.name} did not report the FIFO at tokens/${name}: ${lastLines(r.stderr)}`];
}

/**
 * What a sync reported, against what the service received: applied equals received, nothing
 * "deleted" without a DELETE or a confirmed absence, no write after SIGINT, and with access
 * tokens shorter than the run no change failing for an expired one.
 */
async function checkReportAgainstLog(rec: Recorder, r: RunRecord, schedule: ChaosSchedule, reportFile: string): Promise<void> {
  const timeoutMs = schedule.settings.timeoutMs;
  if (r.signalledAt !== undefined) rec.check(invariants.noWriteAfterInterrupt, writesAfterInterrupt(r.name, r.requests, r.signalledAt, INTERRUPT_GRACE_MS));
  const report = r.killed ? undefined : await readRunReport(reportFile);
  if (report === undefined) return;
  rec.check(invariants.appliedReceived, appliedVersusReceived(r.name, report, unreadWhilePaused(r.requests, r.paused), timeoutMs));
  rec.check(invariants.deletedMeansDeleted, deletedWithoutEvidence(r.name, report, r.requests, r.window, r.state));
  if (schedule.integratorKey && schedule.integratorKey.accessTokenTtlSeconds < 5) {
    const expired = report.results.filter((x) => x.status === 'failed' && /\b401\b|expired|token rejected|credential/i.test(x.error ?? ''));
    const runError = /^error: .*(401|token rejected|expired).*$/m.exec(r.stderr)?.[0];
    rec.check(invariants.tokensRenewed, [
      ...expired.map((x) => `${r.name}: ${x.kind} "${x.key}" ${x.action} failed: ${x.error}`),
      ...(runError === undefined ? [] : [`${r.name}: ${runError.slice(0, 300)}`]),
    ]);
  }
}

/**
 * Answers the service sent while the process was stopped count as undelivered: on waking, its
 * timers (the request's timeout among them) may fire before it reads them.
 */
function unreadWhilePaused(requests: RequestLogEntry[], paused: Pause | undefined): RequestLogEntry[] {
  if (paused === undefined) return requests;
  const to = paused.to ?? Number.POSITIVE_INFINITY;
  return requests.map((e) => {
    const answeredAt = Date.parse(e.time) + e.durationMs;
    return answeredAt >= paused.from && answeredAt <= to ? { ...e, undelivered: true as const } : e;
  });
}

/**
 * A run that lost the integrator key (the file holds one the service refuses) exits non-zero
 * and says so in its error output, naming the file — a log line among others is not enough.
 */
function keyProblems(r: RunRecord): string[] {
  if (r.keyLost !== true) return [];
  if (r.code === 0) return [`${r.name} exited 0, and the integrator key left in ${KEY_FILE} is one the service no longer accepts`];
  const said = r.stderr.split('\n').some((line) => !line.startsWith('{') && line.includes('integrator-key'));
  return said ? [] : [`${r.name} exited ${r.code} without an error naming ${KEY_FILE}, and the key left in it no longer works: ${lastLines(r.stderr, 3)}`];
}

/**
 * After each run of a schedule with an integrator key: the key in its file is kept among the
 * canaries, and if the service no longer accepts it (lost), a new one is put there (as
 * someone would make in the service's UI) so that the schedule goes on. True when it was lost.
 */
async function keepKey(emu: RunningEmulator, dir: string, canaries: string[]): Promise<boolean> {
  const key = (await readFile(join(dir, KEY_FILE), 'utf8').catch(() => '')).trim();
  if (key !== '') canaries.push(key);
  if (key !== '' && emu.refreshTokenAccepted(key)) return false;
  const fresh = `CANARY-integrator-key-remade-${canaries.length}`;
  emu.addRefreshToken(fresh);
  canaries.push(fresh);
  await writeFile(join(dir, KEY_FILE), `${fresh}\n`, { mode: 0o600 });
  return true;
}

/** The tokens, integrator key and token endpoint of a schedule's emulator. */
export function emulatorOptionsFor(schedule: ChaosSchedule): EmulatorOptions & { tenants?: undefined } {
  const expiry = schedule.families.includes('token-expiry');
  const tokens = [T1, ...(expiry ? [T2] : []), ...(schedule.writers ? [T3, ...(expiry ? [T4] : [])] : [])];
  const key = schedule.integratorKey;
  if (key === undefined) return { tokens };
  return { tokens, refreshTokens: [KEY], rotateRefreshTokens: key.rotate, refreshTokenGraceSeconds: key.graceSeconds, accessTokenTtlSeconds: key.accessTokenTtlSeconds };
}

/** The plan's changes and the results of a --report file, or undefined when the run wrote none. */
export async function readRunReport(path: string): Promise<RunReport | undefined> {
  if (!existsSync(path)) return undefined;
  const doc = JSON.parse(await readFile(path, 'utf8')) as Partial<RunReport>;
  return { changes: doc.changes ?? [], results: doc.results ?? [] };
}

/** The per-item results of a --report file, or undefined when the run wrote none. */
export async function readReport(path: string): Promise<ReportedResult[] | undefined> {
  if (!existsSync(path)) return undefined;
  return ((JSON.parse(await readFile(path, 'utf8')) as { results?: ReportedResult[] }).results ?? []) as ReportedResult[];
}

/** The fingerprints of the state file (none when there is no state file). */
export async function readTracked(path: string, url: string, stateKey: string): Promise<TrackedPasswords> {
  const fingerprint = (password: string) => createHmac('sha256', Buffer.from(stateKey, 'utf8')).update(password, 'utf8').digest('hex');
  if (!existsSync(path)) return { applied: new Map(), fingerprint };
  const doc = JSON.parse(await readFile(path, 'utf8')) as { services: Record<string, { sshUserPasswords: Record<string, string> }> };
  return { applied: new Map(Object.entries(doc.services[url]?.sshUserPasswords ?? {})), fingerprint };
}

export function sameSet<T>(a: ReadonlySet<T>, b: ReadonlySet<T>): boolean {
  return a.size === b.size && [...a].every((x) => b.has(x));
}

export function lastLines(text: string, n = 6): string {
  return text.trim().split('\n').slice(-n).join('\n').slice(-3000);
}

/** A one-line account of a schedule, for the log of a chaos run. */
export function describeOutcome(o: ScheduleOutcome): string {
  const runs = o.runs.map((r) => `${r.name}=${r.killed ? 'killed' : r.code}${r.writes ? `/${r.writes}w` : ''}${r.peakMiB === undefined ? '' : ` ${r.peakMiB}MiB`}${r.error ? ` (${r.error.slice(0, 160)})` : ''}`).join(' ');
  const fired = Object.entries(o.fired).map(([label, n]) => `${label}×${n}`).join(' ');
  return `seed ${o.seed} [${o.families.join(', ')}] ${o.checks} checks, ${o.requests} requests${o.tokenRotated ? ', token rotated' : ''}; ${runs}; fired: ${fired || 'none'}`;
}

/** Fails with every violation and the command that replays the seed. */
export function explain(o: ScheduleOutcome): string {
  return [`seed ${o.seed} [${o.families.join(', ')}] broke ${o.violations.length} invariant(s); ${replayHint(o.seed)}`, ...o.violations.map((v) => `  - ${v.invariant}: ${v.detail}`), `  runs: ${describeOutcome(o)}`].join('\n');
}
