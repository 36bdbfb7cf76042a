import type { LoggedRequest } from './emulator-process.js';

export const listRoutes = { sshUsers: '/api/sshusers', apikeys: '/api/3rdparty/apikeys' } as const;

/** What the emulator's request log says about one run. */
export interface RequestStats {
  /** Every API call the service answered (control API excluded), retries and 503s included. */
  readonly calls: number;
  readonly listCalls: { readonly sshUsers: number; readonly apikeys: number };
  /** Fetches of one item (`GET /api/.../{id}`). */
  readonly itemGets: number;
  /** POST, PUT and DELETE calls, whatever their answer. */
  readonly writeCalls: number;
  /** Writes answered 2xx. */
  readonly writesDone: number;
  readonly throttled: number;
  /** Status -> count. */
  readonly statuses: Readonly<Record<string, number>>;
  /** From the arrival of the first successful write to the end of the last one; 0 without writes. */
  readonly writeSpanMs: number;
  /**
   * The calls of the apply the server served (not refused with 503/429): the writes and the
   * GET that verifies each delete. They share the server's rate, so their rate is the limiter's.
   */
  readonly applyCallsServed: number;
  /** From the arrival of the first of those to the end of the last one. */
  readonly applySpanMs: number;
  /** From the arrival of the first list call to the end of the last one. */
  readonly listSpanMs: number;
  /** Longest time between two successive successful writes' arrivals: a stall of the client (or the machine). */
  readonly maxWriteGapMs: number;
  /** `size` sent on list calls (distinct values). */
  readonly pageSizes: readonly string[];
}

const isWrite = (r: LoggedRequest): boolean => r.method === 'POST' || r.method === 'PUT' || r.method === 'DELETE';

function span(entries: readonly LoggedRequest[]): number {
  if (entries.length === 0) return 0;
  let first = Number.POSITIVE_INFINITY;
  let last = Number.NEGATIVE_INFINITY;
  for (const e of entries) {
    const at = Date.parse(e.time);
    first = Math.min(first, at);
    last = Math.max(last, at + e.durationMs);
  }
  return last - first;
}

function maxGap(entries: readonly LoggedRequest[]): number {
  const times = entries.map((e) => Date.parse(e.time)).sort((a, b) => a - b);
  let gap = 0;
  for (let i = 1; i < times.length; i += 1) gap = Math.max(gap, times[i]! - times[i - 1]!);
  return gap;
}

export function requestStats(log: readonly LoggedRequest[]): RequestStats {
  const api = log.filter((r) => r.path.startsWith('/api/'));
  const isList = (r: LoggedRequest): boolean => r.method === 'GET' && (r.path === listRoutes.sshUsers || r.path === listRoutes.apikeys);
  const lists = api.filter(isList);
  const writes = api.filter(isWrite);
  const done = writes.filter((r) => r.status >= 200 && r.status < 300);
  const applyServed = api.filter((r) => !isList(r) && r.status !== 503 && r.status !== 429);
  const statuses: Record<string, number> = {};
  for (const r of api) statuses[r.status] = (statuses[r.status] ?? 0) + 1;
  return {
    calls: api.length,
    listCalls: {
      sshUsers: lists.filter((r) => r.path === listRoutes.sshUsers).length,
      apikeys: lists.filter((r) => r.path === listRoutes.apikeys).length,
    },
    itemGets: api.filter((r) => r.method === 'GET' && !isList(r)).length,
    writeCalls: writes.length,
    writesDone: done.length,
    throttled: api.filter((r) => r.status === 503 || r.status === 429).length,
    statuses,
    writeSpanMs: span(done),
    applyCallsServed: applyServed.length,
    applySpanMs: span(applyServed),
    listSpanMs: span(lists),
    maxWriteGapMs: maxGap(done),
    pageSizes: [...new Set(lists.map((r) => r.query.size ?? '(none)'))],
  };
}

/**
 * What the server's rate R bought during an apply. Since verified deletes (a GET before each
 * DELETE), writes alone cannot reach R: with 500 deletes among 2,000 changes, 2,501 calls
 * share it and writes/s ÷ R is at most 2000 ÷ 2501 = 0.80. So the target is on the calls the
 * apply sent (writes and their verifying reads) ÷ R; writes/s ÷ R is shown beside it, with
 * its ceiling.
 */
export function applyThroughput(stats: RequestStats): { callsPerSecond: number; writesPerSecond: number; writeCeiling: number } {
  return {
    callsPerSecond: (stats.applyCallsServed * 1000) / stats.applySpanMs,
    writesPerSecond: (stats.writesDone * 1000) / stats.writeSpanMs,
    writeCeiling: stats.writesDone / stats.applyCallsServed,
  };
}
