import type { FieldError } from './types.js';

/** What a handler answers; the HTTP layer serialises it. */
export interface Reply {
  status: number;
  /** Serialised as JSON; default `{}`. */
  body?: unknown;
  /** Sent as is instead of `body` (the `malformed` fault). */
  raw?: string;
  headers?: Record<string, string>;
}

export function errorReply(status: number, errors: FieldError[], headers?: Record<string, string>): Reply {
  return headers ? { status, body: { errors }, headers } : { status, body: { errors } };
}

export function oneError(status: number, field: string, type: FieldError['type'], msg: string, headers?: Record<string, string>): Reply {
  return errorReply(status, [{ field, type, msg }], headers);
}
