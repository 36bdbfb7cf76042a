import { renameSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { startEmulator, type RequestLogEntry } from '../../../src/emulator/index.js';
import { waitFor } from '../../helpers/daemon-deferred.js';
import { peakRssKiB, spawnAmsync, startDaemonProcess, type DaemonProcess, type LogLine } from '../../helpers/spawn.js';
import {
  canariesFound,
  deletesOfDeclared,
  deletesOutsidePlan,
  divergence,
  duplicateApikeys,
  expectedDeletes,
  fingerprintsLost,
  withRenames,
  writesAfterIncompleteListing,
  writesOf,
  writesToProtected,
} from './invariants.js';
import {
  checkPassword,
  countFired,
  invariants,
  lastLines,
  LOCK_REFUSAL,
  makeTokenFifo,
  MAX_RSS_KIB,
  prepare,
  readTokenFiles,
  readTracked,
  Recorder,
  renamesMade,
  T1,
  T2,
  tokenFileProblems,
  tokensIn,
  waitIdle,
  writtenFiles,
  type Prepared,
  type ScheduleOutcome,
  RUN_BOUND_MS,
} from './run.js';
import { HOLD_LABEL, INTERRUPT_LABEL, KILL_LABEL, makeSchedule } from './schedule.js';

/**
 * A chaos schedule for the sidecar: `amsync daemon` syncing every second under faults (killed,
 * or interrupted, and restarted; or beside a CLI sync on the same state file), then faults
 * stop and it must converge by itself, make zero writes in the run after its first success,
 * and stop gracefully on SIGTERM.
 */

interface DaemonRun {
  readonly process: number;
  readonly started: number;
  readonly ended: number;
  readonly outcome: string;
  readonly requests: RequestLogEntry[];
}

/** The runs of a daemon from its log lines: `sync started` to `sync finished` (or `sync failed`). */
function runsOf(logs: readonly LogLine[], processIndex: number, until: number): { process: number; started: number; ended: number; outcome: string }[] {
  const runs: { process: number; started: number; ended: number; outcome: string }[] = [];
  let open: number | undefined;
  for (const l of logs) {
    const time = Number(l.time);
    if (l.msg === 'sync started') open = time;
    else if (open !== undefined && (l.msg === 'sync finished' || l.msg === 'sync failed; nothing more was changed')) {
      runs.push({ process: processIndex, started: open, ended: time, outcome: l.msg === 'sync finished' ? String(l.outcome) : 'failure' });
      open = undefined;
    }
  }
  // A run cut short by SIGKILL: it ends when the process died.
  if (open !== undefined) runs.push({ process: processIndex, started: open, ended: until, outcome: 'killed' });
  return runs;
}

const arrival = (e: RequestLogEntry): number => Date.parse(e.time);

export async function runDaemonSchedule(seed: number): Promise<ScheduleOutcome> {
  const schedule = makeSchedule(seed);
  const outcome: ScheduleOutcome = { seed, families: schedule.families, violations: [], checks: 0, runs: [], requests: 0, fired: {}, tokenRotated: false };
  const rec = new Recorder(outcome);
  const emu = await startEmulator({ tokens: schedule.families.includes('token-expiry') ? [T1, T2] : [T1], seed, onError: (e) => rec.check(invariants.emulator, [String(e)]) });
  const daemons: DaemonProcess[] = [];
  const exitedAt: number[] = [];
  let prepared: Prepared | undefined;
  try {
    prepared = await prepare(schedule, emu, `amsync-chaos-daemon-${seed}-`, 'daemon:\n  debounceMs: 200\n  shutdownGraceMs: 5000\n');
    const { dir, env, seeded } = prepared;
    const canaries = [...prepared.canaries, ...tokensIn(emu.state())];
    const outputs: { where: string; text: string }[] = [];
    const timeoutMs = schedule.settings.timeoutMs;
    const tokenArgs = schedule.tokenFromFile ? ['--token-file', 'token'] : [];

    // The plan before faults, as for the CLI: the delete set the daemon must stay within.
    const plan = await spawnAmsync(['plan', '--json', '--settings', 'settings.yaml', ...tokenArgs], { cwd: dir, env });
    rec.check(invariants.dryRun, plan.code === 0 ? [] : [`plan exited ${plan.code}: ${lastLines(plan.stderr)}`]);
    if (plan.code === 0) {
      const planned = new Set((JSON.parse(plan.stdout) as { changes: { kind: string; action: string; id: number | null }[] }).changes.filter((c) => c.action === 'delete').map((c) => `${c.kind}:${c.id}`));
      const modelled = expectedDeletes(schedule, seeded);
      rec.check(invariants.planned, [...planned].filter((d) => !modelled.has(d)).map((d) => `plan deletes ${d}, not expected`));
    }
    outputs.push({ where: 'stdout of plan', text: plan.stdout }, { where: 'stderr of plan', text: plan.stderr });

    const initialState = emu.state();
    emu.clearRequests();
    emu.setFaults({ failRate: schedule.faults.failRate, rules: [...schedule.faults.rules] });
    if (schedule.fifoKey !== undefined) await makeTokenFifo(dir, schedule.fifoKey);
    const args = ['--settings', 'settings.yaml', ...tokenArgs, '--listen', '127.0.0.1:0', '--schedule', '*/1 * * * * *', '--log-level', 'trace'];
    const start = async () => {
      const d = await startDaemonProcess(args, { ...env, NO_COLOR: '1' }, dir);
      const index = daemons.push(d) - 1;
      void d.exit.then(() => (exitedAt[index] = Date.now()));
      return d;
    };
    const finishedRuns = (d: DaemonProcess) => d.logs.filter((l) => l.msg === 'sync finished' || l.msg === 'sync failed; nothing more was changed').length;

    // Under faults: a few runs (the kill family: SIGKILL at the kill point, then a restart;
    // interrupt: SIGINT mid-apply, then a restart; two-writers: a CLI sync at the same time).
    const at = (label: string) => schedule.faults.rules.findIndex((r) => r.label === label);
    const [killAt, holdAt, interruptAt] = [at(KILL_LABEL), at(HOLD_LABEL), at(INTERRUPT_LABEL)];
    let rotated = false;
    let killedAt: number | undefined;
    let interruptedAt: number | undefined;
    let current = await start();
    const rivalWindow = { from: Date.now(), to: Number.POSITIVE_INFINITY };
    const rival = schedule.writers
      ? spawnAmsync(['sync', '--json', '--settings', 'settings.yaml', ...tokenArgs, '--lock-timeout', String(schedule.writers.lockTimeoutMs)], { cwd: dir, env, timeoutMs: RUN_BOUND_MS }).then((r) => {
          rivalWindow.to = Date.now();
          return r;
        })
      : undefined;
    await waitFor(
      () => {
        const stats = emu.faults().ruleStats;
        const fired = (index: number) => index >= 0 && (stats[index]?.fired ?? 0) > 0;
        if (fired(holdAt) && !rotated) {
          writeFileSync(join(dir, 'token.tmp'), `${T2}\n`);
          renameSync(join(dir, 'token.tmp'), join(dir, 'token'));
          rotated = true;
        }
        if (fired(killAt) && killedAt === undefined) {
          current.child.kill('SIGKILL');
          killedAt = Date.now();
          return true;
        }
        if (fired(interruptAt) && interruptedAt === undefined) {
          current.child.kill('SIGINT');
          interruptedAt = Date.now();
          return true;
        }
        return finishedRuns(current) >= 3;
      },
      'three runs under faults',
      60_000,
      4,
    );
    if (killedAt !== undefined || interruptedAt !== undefined) {
      const exit = await current.exit;
      if (interruptedAt !== undefined) {
        // A graceful stop: 0, or 1 when the run in progress outlasted the grace period.
        rec.check(invariants.interrupt, exit.code === 0 || exit.code === 1 ? [] : [`the daemon exited ${exit.code} ${exit.signal ?? ''} after SIGINT`]);
        outcome.runs.push({ name: 'daemon (interrupted)', code: exit.code, killed: false, writes: 0 });
      } else outcome.runs.push({ name: 'daemon (killed)', code: null, killed: true, writes: 0 });
      // A restart takes a while (Kubernetes waits seconds): the request held at the kill point
      // lands first. A request still in flight at the service when its client died is beyond
      // any client's reach: a new process cannot see it until it has landed.
      await waitIdle(emu);
      // The dead daemon's writer lock is left as it was: the restart sees its holder dead and
      // takes it over at once (issue 27).
      emu.setFaults({ rules: schedule.faults.rules.filter((r) => r.label !== KILL_LABEL && r.label !== INTERRUPT_LABEL) });
      current = await start();
      await waitFor(() => finishedRuns(current) >= 2, 'two runs after the restart', 60_000);
    }
    if (rival) {
      const r = await rival;
      outcome.fired['two-writers'] = (outcome.fired['two-writers'] ?? 0) + 1;
      outputs.push({ where: 'stdout of the CLI sync beside the daemon', text: r.stdout }, { where: 'stderr of the CLI sync beside the daemon', text: r.stderr });
      outcome.runs.push({ name: 'sync beside the daemon', code: r.code, killed: false, writes: 0 });
      const refused = r.code === 3 && LOCK_REFUSAL.test(r.stderr);
      rec.check(invariants.exitCodes, r.code === 0 || r.code === 1 || refused ? [] : [`the CLI sync beside the daemon exited ${r.code}: ${lastLines(r.stderr)}`]);
      rec.check(invariants.bounded, r.timedOut ? [`the CLI sync beside the daemon was still running after ${RUN_BOUND_MS / 1000} s`] : []);
    }

    // Faults stop: the daemon must converge by itself within two runs, then idle.
    emu.setFaults({ failRate: 0, rules: [] });
    if (schedule.fifoKey !== undefined) await rm(join(dir, 'tokens', schedule.fifoKey), { force: true });
    await waitIdle(emu);
    const stoppedAt = Date.now();
    const startedAfter = () => runsOf(current.logs, daemons.length - 1, Date.now()).filter((r) => r.started >= stoppedAt);
    await waitFor(() => startedAfter().length >= 3, 'three runs after the faults stopped', 60_000);
    const after = startedAfter();
    const firstSuccess = after.findIndex((r) => r.outcome === 'success');
    rec.check(invariants.converges, firstSuccess >= 0 && firstSuccess <= 1 ? [] : [`outcomes after the faults stopped: ${after.map((r) => r.outcome).join(', ')}`]);

    const peak = schedule.families.includes('endless-body') ? peakRssKiB(current.child.pid) : undefined;
    if (peak !== undefined) rec.check(invariants.memory, peak > MAX_RSS_KIB ? [`the daemon peaked at ${Math.round(peak / 1024)} MiB resident`] : []);
    const metrics = await current.get('/metrics');
    outputs.push({ where: '/metrics', text: metrics.text });
    current.child.kill('SIGTERM');
    const exit = await current.exit;
    rec.check(invariants.daemonStops, exit.code === 0 ? [] : [`exit ${exit.code} ${exit.signal ?? ''}`]);
    await waitIdle(emu);

    // The history: every request of the daemon phase, cut into runs by the daemon's own logs.
    const requests = emu.requests();
    outcome.requests += requests.length;
    countFired(requests, outcome.fired);
    const state = emu.state();
    const model = withRenames(schedule, seeded, renamesMade(schedule, outcome.fired, state));
    const deleteSet = new Set([...expectedDeletes(schedule, seeded), ...expectedDeletes(model.schedule, model.seeded)]);
    const runs: DaemonRun[] = daemons
      .flatMap((d, i) => runsOf(d.logs, i, exitedAt[i] ?? Date.now()))
      .map((r) => ({ ...r, requests: requests.filter((e) => arrival(e) >= r.started && arrival(e) <= r.ended) }));
    // A run cut short by the kill is reported once, as the kill above.
    for (const r of runs) outcome.runs.push({ name: `daemon run ${r.outcome === 'killed' ? 'cut by the kill' : r.outcome}`, code: r.outcome === 'success' ? 0 : 1, killed: false, writes: writesOf(r.requests).length });
    rec.check(invariants.deletes, [...deletesOutsidePlan(requests, deleteSet), ...deletesOfDeclared(requests, schedule, seeded)]);
    for (const [i, r] of runs.entries()) {
      // A CLI sync beside the daemon: its requests cannot be told from the daemon's by time.
      if (r.ended >= rivalWindow.from && r.started <= rivalWindow.to) continue;
      rec.check(invariants.listing, writesAfterIncompleteListing({ name: `daemon run ${i}`, requests: r.requests }, timeoutMs));
    }
    const success = firstSuccess >= 0 ? after[firstSuccess] : undefined;
    const next = firstSuccess >= 0 ? after[firstSuccess + 1] : undefined;
    if (success && next) {
      const between = requests.filter((e) => arrival(e) > success.ended && arrival(e) <= next.ended);
      rec.check(invariants.zeroWrites, writesOf(between).map((w) => `${w.method} ${w.path} ${w.status}`));
    }
    canaries.push(...tokensIn(state));
    rec.check(invariants.duplicates, duplicateApikeys(state, schedule));
    const tracked = await readTracked(join(dir, 'state.json'), emu.url, prepared.stateKey);
    rec.check(invariants.success, await divergence(model.schedule, model.seeded, state, tracked, (u, p) => checkPassword(emu, u, p)));
    rec.check(invariants.tokens, await tokenFileProblems(await readTokenFiles(dir), schedule, state));
    rec.check(invariants.protect, writesToProtected(requests, schedule, seeded));
    // A SIGKILL may cut a save short; every other way of ending keeps what was confirmed.
    if (killedAt === undefined) rec.check(invariants.fingerprints, fingerprintsLost({ name: 'the daemon', requests }, initialState, state, tracked, schedule, timeoutMs));
    for (const [i, d] of daemons.entries()) outputs.push({ where: `output of daemon ${i}`, text: d.output() });
    if (schedule.fifoKey !== undefined && daemons.some((d) => /FIFO/.test(d.output()))) outcome.fired['fifo-token'] = (outcome.fired['fifo-token'] ?? 0) + 1;
    outputs.push(...(await writtenFiles(dir)));
    outcome.tokenRotated = daemons.some((d) => d.logs.some((l) => l.msg === 'token file re-read after 401' && l.changed === true));
    rec.check(invariants.canaries, canariesFound(outputs, [...new Set(canaries)]));
    return outcome;
  } finally {
    for (const d of daemons) await d.kill();
    await emu.close();
    if (prepared && outcome.violations.length === 0) await rm(prepared.dir, { recursive: true, force: true });
    else if (prepared) outcome.violations.push({ invariant: '(kept for inspection)', detail: prepared.dir });
  }
}
