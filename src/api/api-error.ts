import { AmsyncError } from '../errors.js';

/**
 * Stable codes of every failure the client reports. Callers (state/, apply/) branch on these,
 * never on message text.
 */
export type ApiErrorCode =
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'bad_request'
  | 'rate_limited'
  | 'unavailable'
  | 'server_error'
  | 'network'
  /** The TLS handshake failed: the service does not speak TLS, or its certificate is not trusted. */
  | 'tls'
  | 'timeout'
  | 'bad_response'
  | 'unknown_outcome'
  /** The answer's body was larger than http.maxResponseBytes. */
  | 'response_too_large'
  /** The caller's signal cancelled the call (a daemon run past its deadline). */
  | 'cancelled'
  /**
   * Never sent: the caller's stop (an interrupt) came while the call waited for its turn; the
   * service did not receive it.
   */
  | 'not_sent';

/** One entry of the service's error body `{"errors": [{field, type, msg}]}` (as the real service does). */
export interface ServiceFieldError {
  readonly field?: string;
  /** `invalid`, `duplicated`, `required`, `not_found` or `rule` on the real service. */
  readonly type?: string;
  /** Already stripped of any secret the request carried. */
  readonly msg?: string;
}

export interface ApiErrorDetails {
  readonly method: string;
  /** The concrete path, e.g. `/api/sshusers/7`. */
  readonly path: string;
  /** The route template, e.g. `/api/sshusers/{id}`. */
  readonly route: string;
  readonly status?: number;
  readonly errors?: readonly ServiceFieldError[];
  /** Attempts made, retries and token re-reads included. */
  readonly attempts?: number;
  /** A sanitised cause: never the HTTP library's error, whose options hold the bearer token. */
  readonly cause?: unknown;
  /** What happened, without the `METHOD path: ` the message starts with. @default the message */
  readonly detail?: string;
  /** It concerns the service as a whole (unreachable, TLS), not this request. @default false */
  readonly serviceWide?: boolean;
  /**
   * The call ended because its stop fired (an interrupt): never sent (`not_sent`), or a retry
   * the stop kept from starting after an attempt that failed (its code is that attempt's).
   * @default false
   */
  readonly stopped?: boolean;
}

/**
 * A call to the service failed. `code` says how; the message never contains a secret. The
 * message is `METHOD path: detail`, or only the detail when the failure concerns the whole
 * service (nothing listens at the URL, its certificate is not trusted): the route adds nothing.
 */
export class ApiError extends AmsyncError {
  declare readonly code: ApiErrorCode;
  readonly method: string;
  readonly path: string;
  readonly route: string;
  readonly status: number | undefined;
  readonly errors: readonly ServiceFieldError[];
  readonly attempts: number;
  readonly detail: string;
  readonly serviceWide: boolean;
  /** Ended by the caller's stop (an interrupt), not by the service: see ApiErrorDetails. */
  readonly stopped: boolean;

  constructor(code: ApiErrorCode, message: string, details: ApiErrorDetails) {
    super(code, message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'ApiError';
    this.method = details.method;
    this.path = details.path;
    this.route = details.route;
    this.status = details.status;
    this.errors = details.errors ?? [];
    this.attempts = details.attempts ?? 1;
    this.detail = details.detail ?? message;
    this.serviceWide = details.serviceWide ?? false;
    this.stopped = details.stopped ?? false;
  }
}

/** An ApiError, with this code when one is given. */
export function isApiError(error: unknown, code?: ApiErrorCode): error is ApiError {
  return error instanceof ApiError && (code === undefined || error.code === code);
}

/**
 * The error is, or was caused by (a listing cut short), a call a stop kept from being sent
 * (`not_sent`): the service never received it.
 */
export function stoppedBeforeSending(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth += 1) {
    if (isApiError(e, 'not_sent')) return true;
  }
  return false;
}

/**
 * The error is, or was caused by (a listing cut short), a call that ended because its stop
 * fired: never sent, or its retry never started (a 503 waited out when the interrupt came).
 * The run ended by the interrupt, not by a failure of the service.
 */
export function endedByStop(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth += 1) {
    if (e instanceof ApiError && e.stopped) return true;
  }
  return false;
}
