import { AmsyncError } from '../errors.js';
import { scrub } from '../secrets/index.js';

/** The stable code of an error, when it has one (ApiError and every AmsyncError do). */
export function errorCode(error: unknown): string | undefined {
  if (error instanceof AmsyncError) return error.code;
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * One line for a result's `error`. ApiError messages are built scrubbed (method, path,
 * status, the service's field errors); any message is scrubbed again before its first line
 * is cut to length, so a secret straddling the cut cannot leave a prefix behind.
 */
export function errorSummary(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return (scrub(message).split('\n')[0] ?? '').slice(0, 500);
}
