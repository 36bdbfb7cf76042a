import type { Action } from '../model/index.js';
import { isControlLine, type AuditRecord } from './audit-line.js';

/** Which lines `amsync audit` shows; every given condition must hold. */
export interface AuditFilter {
  /** Username or apikey name, exactly. */
  readonly key?: string;
  readonly action?: Action;
  /** Epoch milliseconds, inclusive. */
  readonly since?: number;
  /** Epoch milliseconds, inclusive. */
  readonly until?: number;
}

/**
 * The lines that match, in their order. Pure. A control line (suspend, window) has no key nor
 * action: `--key` and `--action` leave it out, a time bound alone does not.
 */
export function filterAuditLines<L extends AuditRecord>(lines: readonly L[], filter: AuditFilter): L[] {
  return lines.filter((line) => {
    if ((filter.key !== undefined || filter.action !== undefined) && isControlLine(line)) return false;
    if (filter.key !== undefined && !isControlLine(line) && line.key !== filter.key) return false;
    if (filter.action !== undefined && !isControlLine(line) && line.action !== filter.action) return false;
    if (filter.since === undefined && filter.until === undefined) return true;
    const time = Date.parse(line.time);
    if (filter.since !== undefined && !(time >= filter.since)) return false;
    if (filter.until !== undefined && !(time <= filter.until)) return false;
    return true;
  });
}

const units: Readonly<Record<string, number>> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };
const isoDate = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/i;

/**
 * `--since` / `--until`: an ISO-8601 time (`2025-01-31`, `2025-01-31T12:00:00Z`; without an
 * offset, local time) or an age before `nowMs` (`90s`, `30m`, `24h`, `7d`, `2w`). Epoch
 * milliseconds, or undefined when the text is neither. Pure: the clock is passed in.
 */
export function parseTimeBound(text: string, nowMs: number): number | undefined {
  const trimmed = text.trim();
  const age = /^(\d{1,9})([smhdw])$/.exec(trimmed);
  if (age) return nowMs - Number(age[1]) * units[age[2]!]!;
  if (!isoDate.test(trimmed)) return undefined;
  const ms = Date.parse(trimmed);
  return Number.isNaN(ms) ? undefined : ms;
}
