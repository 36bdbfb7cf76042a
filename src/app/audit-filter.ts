import { parseTimeBound, type AuditFilter } from '../audit/index.js';
import { UsageError } from '../errors.js';
import type { Action } from '../model/index.js';
import { badFlag } from '../settings/index.js';

/** `amsync audit`'s filter flags, as typed. */
export interface AuditFilterFlags {
  readonly key?: string;
  readonly action?: string;
  readonly since?: string;
  readonly until?: string;
}

const actions: readonly Action[] = ['create', 'update', 'delete'];

/** `--action`: one of create, update, delete; anything else is exit 64 naming the flag. */
export function parseAuditAction(value: string): Action {
  const action = actions.find((a) => a === value);
  if (action === undefined) throw badFlag('--action', 'one of create, update, delete', value);
  return action;
}

/** The flags -> a filter; a bad value is exit 64 naming the flag. */
export function auditFilter(opts: AuditFilterFlags, nowMs: number): AuditFilter {
  const bound = (flag: string, text: string | undefined): number | undefined => {
    if (text === undefined) return undefined;
    const ms = parseTimeBound(text, nowMs);
    if (ms === undefined) throw badFlag(flag, 'an ISO-8601 time (2025-01-31T12:00:00Z) or an age such as 24h, 30m or 7d', text);
    return ms;
  };
  const since = bound('--since', opts.since);
  const until = bound('--until', opts.until);
  if (since !== undefined && until !== undefined && since > until) throw new UsageError(`--since (${opts.since}) is after --until (${opts.until}): no line could match`, 'bad_flag_value');
  if (opts.action !== undefined) parseAuditAction(opts.action);
  return {
    ...(opts.key !== undefined ? { key: opts.key } : {}),
    ...(opts.action !== undefined ? { action: opts.action as Action } : {}),
    ...(since !== undefined ? { since } : {}),
    ...(until !== undefined ? { until } : {}),
  };
}
