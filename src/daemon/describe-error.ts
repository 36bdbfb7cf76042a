import { AmsyncError, InvalidInputError } from '../errors.js';

/**
 * A stable, label-safe code for an error: the AmsyncError code, else an errno-like code,
 * else `unexpected`. /readyz shows only this, never the message (which may name items).
 */
export function errorCode(error: unknown): string {
  if (error instanceof AmsyncError) return error.code;
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[A-Za-z][\w.-]{0,63}$/.test(code) ? code : 'unexpected';
}

/**
 * What a log line may carry about an error: code and message (amsync's messages are
 * redacted where they are made), never the raw object, whose fields (a request body, an
 * options bag) pino would serialise whole.
 */
export function errorForLog(error: unknown): { code: string; message: string } {
  return { code: errorCode(error), message: error instanceof Error ? error.message : String(error) };
}

export function isInvalidInput(error: unknown): error is InvalidInputError {
  return error instanceof InvalidInputError;
}
