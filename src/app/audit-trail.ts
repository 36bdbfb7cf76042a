import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import { AuditLog, processIdentity, revisionFromEnv, type AuditControlEntry, type AuditTrigger } from '../audit/index.js';
import type { Change, ChangeResult, Plan } from '../model/index.js';
import type { Logger } from '../obs/index.js';
import { expiredReason, keyRotationReason, rotatedReason } from '../plan/index.js';

type Env = Readonly<Record<string, string | undefined>>;

/** The hooks one apply gives the audit log: a line before each write request, one per result. */
export interface AuditHooks {
  onAttempt(change: Change): void;
  onResult(result: ChangeResult): void;
}

/**
 * `--audit-log FILE` for the commands that write (sync, apply, daemon): opened on the first
 * apply, kept open for the process's life. An attempt line that cannot be written fails its
 * change before the request is sent (nothing is written unaudited); a result line that cannot
 * be written is logged and fails the run (exit 1), since the write itself already happened.
 */
export class AuditTrail {
  readonly #path: string;
  readonly #env: Env;
  readonly #log: Logger;
  readonly #target: string | null;
  #file: AuditLog | undefined;
  #failure: Error | undefined;

  constructor(path: string, env: Env, log: Logger, target: string | null = null) {
    this.#path = resolve(path);
    this.#env = env;
    this.#log = log.child({ component: 'audit' });
    this.#target = target;
  }

  /** The fleet target whose writes this log records (null: a single service). */
  get target(): string | null {
    return this.#target;
  }

  /** The hooks for one plan's apply; `trigger` says what started the run. */
  hooks(plan: Plan, trigger: AuditTrigger): AuditHooks {
    const file = this.#open();
    const planHash = planHashOf(plan);
    const changeOf = new Map(plan.changes.map((c) => [changeKey(c, c.id), c]));
    // An attempt carries its change (a drift re-write too); a result is matched to its change by
    // kind, action, name and id, since apikeys that share a name differ by id.
    const base = (c: Pick<Change, 'kind' | 'key' | 'action'>, id: number | null, known?: Change) => {
      const change = known ?? changeOf.get(changeKey(c, id));
      const fields = change === undefined ? [] : Object.keys(change.fields);
      // Values of what is not secret only: the audit log also drops any field named like a secret.
      const values = change === undefined ? {} : Object.fromEntries(Object.entries(change.fields).map(([name, f]) => [name, f.after]));
      // The delete of an expired item says so (issue 30); other reasons are the plan's prose, not kept.
      // So do an apikey rotation's two writes: the successor's create (`rotation`) and the predecessor's delete (`rotated`).
      const reason = keptReason(change?.reason);
      return { target: this.#target, kind: c.kind, key: c.key, id, action: c.action, fields, values, planHash, trigger, ...reason };
    };
    return {
      onAttempt: (change) => {
        file.record({ ...base(change, change.id, change), phase: 'attempt' });
      },
      onResult: (result) => {
        try {
          file.record({ ...base(result, result.id ?? null), phase: 'result', status: result.status, error: result.status === 'applied' ? null : result.status === 'failed' ? 'write_failed' : 'not_started' });
        } catch (error) {
          this.#failure ??= error instanceof Error ? error : new Error(String(error));
          this.#log.error({ code: (error as { code?: string }).code }, 'an audit line could not be written');
        }
      },
    };
  }

  /**
   * A daemon's control line: suspended, resumed, a sync window closing or opening, an override.
   * Throws AuditLogError when it cannot be written (the daemon logs it: the control happened).
   */
  recordControl(entry: AuditControlEntry): void {
    this.#open().recordControl(entry, this.#target);
  }

  /** A result line that could not be written this run, if any. */
  takeFailure(): Error | undefined {
    const failure = this.#failure;
    this.#failure = undefined;
    return failure;
  }

  close(): void {
    this.#file?.close();
    this.#file = undefined;
  }

  #open(): AuditLog {
    if (this.#file) return this.#file;
    this.#file = AuditLog.open(this.#path, { revision: revisionFromEnv(this.#env), identity: processIdentity() });
    for (const notice of this.#file.notices) this.#log.warn({ notice: notice.code }, notice.code === 'mode_tightened' ? 'the audit log was readable by others; its mode is now 0600' : 'the audit log ended in a partial line; it was closed');
    return this.#file;
  }
}

/** A create is known by its name (it has no id yet); an update or delete by its id too. */
const changeKey = (c: Pick<Change, 'kind' | 'key' | 'action'>, id: number | null): string => `${c.kind}\u0000${c.action}\u0000${c.key}\u0000${c.action === 'create' ? '' : String(id)}`;

/** Names the plan an apply ran (16 hex of SHA-256 over its changes); never a secret: values are markers. */
export function planHashOf(plan: Plan): string {
  return createHash('sha256').update(JSON.stringify(plan.changes)).digest('hex').slice(0, 16);
}


/** The audit line's reason of a change: the few the log keeps (expiry, key rotation), else none. */
function keptReason(reason: string | undefined): { reason?: string } {
  if (reason === expiredReason) return { reason: expiredReason };
  if (reason === rotatedReason || reason?.startsWith(`${rotatedReason}:`) === true) return { reason: rotatedReason };
  if (reason?.startsWith(keyRotationReason) === true) return { reason: 'rotation' };
  return {};
}
