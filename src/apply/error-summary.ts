import { AmsyncError } from '../errors.js';

/** The stable code of an error, when it has one (ApiError and every AmsyncError do). */
export function errorCode(error: unknown): string | undefined {
  if (error instanceof AmsyncError) return error.code;
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * One line for a result's `error`. ApiError messages are built without secrets (method,
 * path, status, the service's field errors); anything else is cut to its first line.
 */
export function errorSummary(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return (message.split('\n')[0] ?? '').slice(0, 500);
}
