import type { AdaptiveLimiter } from './adaptive-limiter.js';
import { ApiError, type ApiErrorCode, type ServiceFieldError } from './api-error.js';
import { emitSafely, type ClientEvents } from './client-events.js';
import { describeFailure, errorCodeFor } from './error-codes.js';
import type { DispatchStamp } from './rate-controller.js';
import { bodyExcerpt, redactText } from './redact.js';
import { parseRetryAfter } from './retry-after.js';
import { decideRetry, type AttemptFailure, type HttpMethod, type RetryPolicyOptions, type StopReason } from './retry-policy.js';
import { serviceErrorBodySchema } from './schemas.js';
import { Sleeper, type Timers } from './timers.js';
import { LimiterClosedError } from './pacer.js';
import type { TokenProvider } from './token-provider.js';
import type { Transport, WireOutcome } from './transport.js';

/** The outcome of reading a 2xx body: a value, or why the body was not what was expected. */
export type ParseResult<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly problem: string };

export interface Call<T> {
  readonly method: HttpMethod;
  /** Concrete path, e.g. `/api/sshusers/7`. */
  readonly path: string;
  /** Template, e.g. `/api/sshusers/{id}` (for events and errors). */
  readonly route: string;
  readonly searchParams?: Readonly<Record<string, string>>;
  /** Serialised JSON body. */
  readonly body?: string;
  /** Secret values inside the body, scrubbed from anything that could be printed. */
  readonly secrets?: readonly string[];
  /** Reads a 2xx answer. */
  readonly parse: (status: number, body: string) => ParseResult<T>;
}

export interface ExecutorDeps {
  readonly transport: Transport;
  readonly limiter: AdaptiveLimiter;
  readonly tokens: TokenProvider;
  readonly events: ClientEvents;
  readonly timers: Timers;
  readonly retry: RetryPolicyOptions;
}

interface Attempted {
  readonly outcome: WireOutcome;
  readonly generation: number;
  /** Wall-clock ms when the answer came: the one instant a Retry-After date is read against. */
  readonly answeredAt: number;
}

function header(headers: Readonly<Record<string, string | string[] | undefined>>, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

const maxServiceErrors = 5;
const maxMsgLength = 200;

function serviceErrors(body: string, secrets: readonly string[]): ServiceFieldError[] {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return [];
  }
  const parsed = serviceErrorBodySchema.safeParse(json);
  if (!parsed.success) return [];
  return parsed.data.errors.slice(0, 20).map((entry) => ({
    ...(entry.field === undefined ? {} : { field: entry.field }),
    ...(entry.type === undefined ? {} : { type: entry.type }),
    ...(entry.msg === undefined ? {} : { msg: redactText(entry.msg, secrets).slice(0, maxMsgLength) }),
  }));
}

function explainServiceErrors(errors: readonly ServiceFieldError[]): string {
  return errors
    .slice(0, maxServiceErrors)
    .map((error) => [error.field, error.type].filter(Boolean).join(' ') + (error.msg === undefined ? '' : ` (${error.msg})`))
    .filter((text) => text !== '')
    .join('; ');
}

const stopHints: Partial<Record<StopReason, string>> = {
  unknown_outcome:
    'the service may or may not have carried it out; it is not repeated, so nothing is created twice (look the item up)',
};

/**
 * Runs one call to completion: every attempt through the limiter, retries as the pure policy
 * decides, one token re-read on a 401, and failures turned into ApiErrors whose messages hold
 * no secret.
 */
export class RequestExecutor {
  readonly #deps: ExecutorDeps;
  readonly #sleeper: Sleeper;
  #closed = false;

  constructor(deps: ExecutorDeps) {
    this.#deps = deps;
    this.#sleeper = new Sleeper(deps.timers);
  }

  /** Calls waiting for a slot or a retry fail with `network` "the client was closed". */
  close(): void {
    this.#closed = true;
    this.#sleeper.close();
  }

  async run<T>(call: Call<T>): Promise<T> {
    const { limiter, timers, retry } = this.#deps;
    const started = timers.now();
    // A 401 re-reads the token file once per call: none yet, or what the re-read found.
    let reload: 'none' | 'unchanged' | 'changed' = 'none';
    // After a 503/429 to a request with a body, the retry goes on a new connection.
    let freshConnection = false;
    // The policy stops at maxAttempts; one extra attempt may follow a token re-read.
    for (let attempt = 1; attempt <= retry.maxAttempts + 1; attempt += 1) {
      if (this.#closed) throw this.#closedError(call, attempt - 1);
      let attempted: Attempted;
      try {
        const fresh = freshConnection;
        attempted = await limiter.schedule((stamp) => this.#attempt(call, attempt, stamp, fresh), attempt > 1 ? 1 : 0);
      } catch (error) {
        if (error instanceof LimiterClosedError) throw this.#closedError(call, attempt - 1);
        throw error;
      }
      const { outcome, generation, answeredAt } = attempted;
      let failure: AttemptFailure;
      let retryAfter: string | undefined;
      if (outcome.kind === 'response') {
        const { status } = outcome;
        if (status >= 200 && status < 300) return this.#parse(call, outcome.body, status, attempt);
        if (status === 401) {
          if (reload === 'none' && this.#deps.tokens.rotatable) {
            const changed = await this.#deps.tokens.refresh(generation, call.method, call.path, call.route);
            reload = changed ? 'changed' : 'unchanged';
            emitSafely(this.#deps.events, 'token', { method: call.method, route: call.route, changed });
            if (changed) {
              emitSafely(this.#deps.events, 'retry', {
                method: call.method,
                route: call.route,
                attempt,
                delayMs: 0,
                reason: 'unauthorized',
                status,
                source: 'token_reloaded',
              });
              continue;
            }
          }
          const reread = {
            none: '',
            unchanged: '; the token file was re-read and held no other token',
            changed: '; the token re-read from the token file was refused too',
          }[reload];
          throw this.#error('unauthorized', call, attempt, `token missing or expired (401)${reread}`, status);
        }
        if (status === 403) {
          throw this.#error(
            'forbidden',
            call,
            attempt,
            'forbidden (403): the token has no permission for this API or method (is it a read-only token?)',
            status,
            serviceErrors(outcome.body, this.#secrets(call)),
          );
        }
        if (status >= 300 && status < 400) {
          // Following it would send the bearer token wherever the Location points.
          throw this.#error('bad_response', call, attempt, `the service answered with a redirect (${status}); amsync does not follow redirects`, status);
        }
        failure = { kind: 'status', method: call.method, status };
        retryAfter = header(outcome.headers, 'retry-after');
        if ((status === 503 || status === 429) && call.body !== undefined) freshConnection = true;
      } else {
        failure =
          outcome.failure === 'timeout'
            ? { kind: 'timeout', method: call.method, sent: outcome.sent }
            : { kind: 'network', method: call.method, errorCode: outcome.errorCode, sent: outcome.sent };
      }

      const decision = decideRetry(attempt, failure, retryAfter, answeredAt, timers.now() - started, retry);
      if ('stop' in decision) throw this.#finalError(call, attempt, failure, outcome, decision.stop);
      emitSafely(this.#deps.events, 'retry', {
        method: call.method,
        route: call.route,
        attempt,
        delayMs: decision.delayMs,
        reason: errorCodeFor(failure),
        status: failure.kind === 'status' ? failure.status : undefined,
        source: decision.source,
      });
      if (!(await this.#sleeper.sleep(decision.delayMs))) throw this.#closedError(call, attempt);
    }
    // Unreachable: the policy stops by maxAttempts. Kept so the loop is visibly bounded.
    throw this.#error('unavailable', call, retry.maxAttempts + 1, 'gave up after too many attempts');
  }

  async #attempt(call: Call<unknown>, attempt: number, stamp: DispatchStamp, freshConnection: boolean): Promise<Attempted> {
    const { limiter, timers, tokens, transport, events, retry } = this.#deps;
    const current = await tokens.current(call.method, call.path, call.route);
    const sentAt = timers.now();
    const outcome = await transport.send(
      {
        method: call.method,
        path: call.path,
        ...(call.searchParams === undefined ? {} : { searchParams: call.searchParams }),
        ...(call.body === undefined ? {} : { body: call.body }),
        ...(freshConnection ? { freshConnection } : {}),
      },
      current.token,
    );
    const durationMs = timers.now() - sentAt;
    const answeredAt = timers.wallNow();
    emitSafely(events, 'request', {
      method: call.method,
      route: call.route,
      status: outcome.kind === 'response' ? outcome.status : undefined,
      error: outcome.kind === 'response' ? undefined : outcome.errorCode,
      durationMs,
      attempt,
      rate: stamp.rate,
    });
    if (outcome.kind === 'response') {
      const { status } = outcome;
      if (status === 503 || status === 429) {
        const serverDelay = parseRetryAfter(header(outcome.headers, 'retry-after'), answeredAt);
        const pause = serverDelay === undefined ? undefined : Math.min(serverDelay, retry.maxRetryAfterMs);
        const result = limiter.throttle(stamp, pause);
        if (result.decreased || result.pauseMs > 0) {
          emitSafely(events, 'throttle', {
            method: call.method,
            route: call.route,
            status,
            previousRate: result.previousRate,
            rate: result.rate,
            decreased: result.decreased,
            pauseMs: result.pauseMs,
          });
        }
      } else if (status < 500 && status !== 102) {
        // Any real answer shows the server is keeping up with this rate.
        limiter.success(stamp);
      }
    }
    return { outcome, generation: current.generation, answeredAt };
  }

  #parse<T>(call: Call<T>, body: string, status: number, attempts: number): T {
    const result = call.parse(status, body);
    if (result.ok) return result.value;
    const excerpt = bodyExcerpt(body, this.#secrets(call));
    throw this.#error('bad_response', call, attempts, `unexpected response (${status}): ${result.problem}; body: ${excerpt}`, status);
  }

  #finalError(call: Call<unknown>, attempts: number, failure: AttemptFailure, outcome: WireOutcome, stop: StopReason): ApiError {
    const code: ApiErrorCode = stop === 'unknown_outcome' ? 'unknown_outcome' : errorCodeFor(failure);
    const secrets = this.#secrets(call);
    const errors = outcome.kind === 'response' ? serviceErrors(outcome.body, secrets) : [];
    let detail = describeFailure(failure);
    if (errors.length > 0) detail += `: ${explainServiceErrors(errors)}`;
    else if (outcome.kind === 'response' && failure.kind === 'status' && failure.status >= 500 && outcome.body.trim() !== '') {
      detail += `: ${bodyExcerpt(outcome.body, secrets, 120)}`;
    }
    const hint = stopHints[stop];
    if (hint !== undefined) detail += `; ${hint}`;
    if (stop === 'max_attempts' || stop === 'max_elapsed') detail += ` (gave up after ${attempts} attempt${attempts === 1 ? '' : 's'})`;
    const cause =
      outcome.kind === 'failure' ? Object.assign(new Error(redactText(outcome.message, secrets)), { code: outcome.errorCode }) : undefined;
    return this.#error(code, call, attempts, detail, failure.kind === 'status' ? failure.status : undefined, errors, cause);
  }

  #closedError(call: Call<unknown>, attempts: number): ApiError {
    return this.#error('network', call, attempts, 'the client was closed before the call completed');
  }

  #secrets(call: Call<unknown>): string[] {
    return [...this.#deps.tokens.knownValues, ...(call.secrets ?? [])];
  }

  #error(
    code: ApiErrorCode,
    call: Call<unknown>,
    attempts: number,
    detail: string,
    status?: number,
    errors?: readonly ServiceFieldError[],
    cause?: unknown,
  ): ApiError {
    // Belt and braces: every message passes the scrubber, whatever it was built from.
    const message = redactText(`${call.method} ${call.path}: ${detail}`, this.#secrets(call));
    return new ApiError(code, message, {
      method: call.method,
      path: call.path,
      route: call.route,
      ...(status === undefined ? {} : { status }),
      ...(errors === undefined ? {} : { errors }),
      attempts,
      ...(cause === undefined ? {} : { cause }),
    });
  }
}
