/**
 * The protocol of `amsync ctl` and the daemon's control socket: one JSON line asked, one JSON
 * line answered, then the connection closes. Hand-written over node:net: four verbs with one
 * answer each need no framing beyond a newline, and a JSON-RPC or gRPC library would add a
 * dependency, a schema step and a surface larger than the whole protocol.
 */
export const ctlOps = ['status', 'sync', 'suspend', 'resume'] as const;
export type CtlOp = (typeof ctlOps)[number];

export interface CtlRequest {
  readonly op: CtlOp;
  /** `suspend --reason TEXT`. */
  readonly reason?: string;
  /** `sync --override-window`: the run this asks for writes even while a window holds writes. */
  readonly overrideWindow?: boolean;
  /**
   * The uid of the ctl process, as it reports it: node:net cannot read the peer's credentials
   * (SO_PEERCRED), so this is what the caller says; the socket's 0600 mode is what limits who
   * can connect at all (its owner, and root).
   */
  readonly uid?: number | null;
}

/** What `ctl status` prints, and every answer carries: the daemon's state after the request. */
export interface CtlStatus {
  readonly mode: 'apply' | 'observe';
  /** Whether the next run may write: not while suspended or a window holds writes. */
  readonly writes: boolean;
  readonly suspended: { readonly reason: string; readonly since: string; readonly by: string | null } | null;
  readonly window: { readonly open: boolean; readonly reason: string; readonly windows: number };
  readonly lastRun: CtlLastRun;
  readonly ready: { readonly ready: boolean; readonly reason: string };
  /** A fleet's daemon (a targets file): the last run of each target, in the targets file's order. */
  readonly targets?: readonly CtlTargetRun[];
}

/** A run as `ctl status` shows it. */
export interface CtlLastRun {
  readonly outcome: string | null;
  readonly lastSuccessAt: string | null;
  readonly lastError: string | null;
  readonly running: boolean;
}

/** One target's last run in a fleet's `ctl status`. */
export interface CtlTargetRun extends CtlLastRun {
  readonly name: string;
}

export type CtlResponse = { readonly ok: true; readonly message: string; readonly status: CtlStatus } | { readonly ok: false; readonly error: string };

/** The longest request line read; anything longer is refused (the socket is local, but a reason is a sentence). */
export const maxCtlLineBytes = 16 * 1024;
/** The longest `--reason` kept. */
export const maxReasonChars = 500;

/** A request line -> a request, or why it is not one. */
export function parseCtlRequest(line: string): CtlRequest | { readonly error: string } {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { error: 'not a JSON line' };
  }
  if (typeof value !== 'object' || value === null) return { error: 'not a JSON object' };
  const o = value as Record<string, unknown>;
  if (typeof o.op !== 'string' || !(ctlOps as readonly string[]).includes(o.op)) return { error: `unknown op: expected one of ${ctlOps.join(', ')}` };
  if (o.reason !== undefined && typeof o.reason !== 'string') return { error: 'reason must be a string' };
  if (o.overrideWindow !== undefined && typeof o.overrideWindow !== 'boolean') return { error: 'overrideWindow must be true or false' };
  const uid = typeof o.uid === 'number' && Number.isInteger(o.uid) ? o.uid : null;
  return {
    op: o.op as CtlOp,
    ...(typeof o.reason === 'string' ? { reason: o.reason.slice(0, maxReasonChars) } : {}),
    ...(o.overrideWindow === true ? { overrideWindow: true } : {}),
    uid,
  };
}
