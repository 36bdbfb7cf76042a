import { appendFileSync, readFileSync } from 'node:fs';
import type { ScheduleOutcome } from './run.js';

/**
 * The figures of a chaos run: each file adds what it did, the chaos config's global setup
 * sums them up at the end (schedules, invariant checks, bad inputs, fuzz requests).
 */

export interface Figures {
  schedules: number;
  daemonSchedules: number;
  invariantChecks: number;
  violations: number;
  runs: number;
  kills: number;
  tokenRotations: number;
  requests: number;
  badInputs: number;
  fuzzRequests: number;
  faultsFired: Record<string, number>;
  statuses: Record<string, number>;
}

export function emptyFigures(): Figures {
  return { schedules: 0, daemonSchedules: 0, invariantChecks: 0, violations: 0, runs: 0, kills: 0, tokenRotations: 0, requests: 0, badInputs: 0, fuzzRequests: 0, faultsFired: {}, statuses: {} };
}

export function addSchedule(f: Figures, o: ScheduleOutcome, daemon = false): void {
  if (daemon) f.daemonSchedules += 1;
  else f.schedules += 1;
  f.invariantChecks += o.checks;
  f.violations += o.violations.filter((v) => v.invariant !== '(kept for inspection)').length;
  f.runs += o.runs.length;
  f.kills += o.runs.filter((r) => r.killed).length;
  f.tokenRotations += o.tokenRotated ? 1 : 0;
  f.requests += o.requests;
  for (const [label, n] of Object.entries(o.fired)) f.faultsFired[label] = (f.faultsFired[label] ?? 0) + n;
}

function add(into: Record<string, number>, from: Record<string, number>): void {
  for (const [k, n] of Object.entries(from)) into[k] = (into[k] ?? 0) + n;
}

export function merge(all: readonly Figures[]): Figures {
  const total = emptyFigures();
  for (const f of all) {
    for (const key of ['schedules', 'daemonSchedules', 'invariantChecks', 'violations', 'runs', 'kills', 'tokenRotations', 'requests', 'badInputs', 'fuzzRequests'] as const) total[key] += f[key];
    add(total.faultsFired, f.faultsFired);
    add(total.statuses, f.statuses);
  }
  return total;
}

/** One line per file into the run's figures file (when the chaos config's global setup made one). */
export function publishFigures(file: string | undefined, name: string, f: Figures): void {
  console.info(`chaos figures of ${name}: ${describeFigures(f)}`);
  if (file) appendFileSync(file, `${JSON.stringify(f)}\n`);
}

export function readFigures(file: string): Figures {
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return emptyFigures();
  }
  return merge(text.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as Figures));
}

export function describeFigures(f: Figures): string {
  const fired = Object.entries(f.faultsFired).sort(([, a], [, b]) => b - a).map(([k, n]) => `${k} ${n}`).join(', ');
  return [
    `${f.schedules} CLI schedules and ${f.daemonSchedules} daemon schedules (${f.runs} runs, ${f.kills} killed, ${f.tokenRotations} with a rotated token)`,
    `${f.invariantChecks} invariant checks, ${f.violations} violations`,
    `${f.requests} requests to the emulator; faults fired: ${fired || 'none'}`,
    `${f.badInputs} bad inputs tried`,
    `${f.fuzzRequests} fuzz requests${Object.keys(f.statuses).length > 0 ? ` (statuses ${Object.entries(f.statuses).map(([s, n]) => `${s}:${n}`).join(' ')})` : ''}`,
  ].join('; ');
}
