import type { FieldError } from './types.js';

/** What a handler answers; the HTTP layer serialises it. */
export interface Reply {
  status: number;
  /** Serialised as JSON; default `{}`. */
  body?: unknown;
  /** Sent as is instead of `body` (the `malformed` and `echo` faults). */
  raw?: string;
  /** @default application/json (every answer of the service is JSON; a proxy's page is not) */
  contentType?: string;
  headers?: Record<string, string>;
  /** The item a write acted on, for the request log (never sent). */
  item?: { id: number; name: string };
}

export function errorReply(status: number, errors: FieldError[], headers?: Record<string, string>): Reply {
  return headers ? { status, body: { errors }, headers } : { status, body: { errors } };
}

export function oneError(status: number, field: string, type: FieldError['type'], msg: string, headers?: Record<string, string>): Reply {
  return errorReply(status, [{ field, type, msg }], headers);
}
