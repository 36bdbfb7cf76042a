import type { AdaptiveLimiter } from './adaptive-limiter.js';
import { ApiError, type ApiErrorCode, type ServiceFieldError } from './api-error.js';
import { emitSafely, type ClientEvents } from './client-events.js';
import { describeFailure, errorCodeFor } from './error-codes.js';
import { describeServiceFailure, type ServiceTarget } from './network-errors.js';
import type { DispatchStamp } from './rate-controller.js';
import { bodyExcerpt, redactText, textExcerpt } from './redact.js';
import { parseRetryAfter } from './retry-after.js';
import { decideRetry, type AttemptFailure, type HttpMethod, type RetryDecision, type RetryPolicyOptions } from './retry-policy.js';
import { serviceErrorBodySchema } from './schemas.js';
import { onAbort, Sleeper, type Timers } from '../time/index.js';
import { LimiterClosedError, LimiterStoppedError } from './pacer.js';
import { LockLostError } from '../errors.js';
import type { BearerSource, RejectionStage } from './bearer-source.js';
import { CredentialError } from './credential-error.js';
import type { Transport, WireOutcome } from './transport.js';
import type { WriteFences } from './write-fence.js';

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
  /** false: sent without a bearer token (the token endpoint), and a 401 is simply an answer. */
  readonly auth?: false;
  /** A POST harmless to repeat whatever the first attempt did: retried on a 500, 502 or 504 as a PUT is. */
  readonly repeatable?: true;
  /** Goes ahead of the limiter's line and pace (AdaptiveLimiter.urgent): the token exchange the others wait for, some in their slots. */
  readonly urgent?: true;
  /** Told the client's monotonic time as each attempt goes on the wire (the token exchange: a token's life counts from the attempt answered). */
  readonly onSend?: (at: number) => void;
  /** Reads a 2xx answer. */
  readonly parse: (status: number, body: string) => ParseResult<T>;
  /** Cancels the call: nothing more is sent, a request in flight is aborted. */
  readonly signal?: AbortSignal;
  /**
   * Stops the call short of the wire (an interrupt): once it fires nothing more of it is sent —
   * a wait for its turn or for a retry ends at once, with ApiError `not_sent` when no attempt
   * went out — but an attempt already sent is let finish, and its answer stands. No retry
   * starts after it. A client gives calls a stop that fires with `signal` too.
   */
  readonly stop?: AbortSignal;
}

export interface ExecutorDeps {
  /** The service, for messages about reaching it. */
  readonly target: ServiceTarget;
  readonly transport: Pick<Transport, 'send'>;
  readonly limiter: AdaptiveLimiter;
  readonly tokens: BearerSource;
  readonly events: ClientEvents;
  readonly timers: Timers;
  readonly retry: RetryPolicyOptions;
  /** Checked right before each write request is sent (the writer lock, the Lease). */
  readonly fences?: WriteFences;
}

interface Attempted {
  readonly outcome: WireOutcome;
  readonly generation: number;
  /** Wall-clock ms when the answer came: the one instant a Retry-After date is read against. */
  readonly answeredAt: number;
  readonly durationMs: number;
  /** The limiter's rate when the attempt was sent. */
  readonly rate: number;
}

type Stop = Extract<RetryDecision, { stop: unknown }>;
type TokenReload = RejectionStage;

/**
 * An attempt not sent: a 503 was read after the limiter let it through (AdaptiveLimiter.heldBack);
 * it queues again, ahead of first attempts, at the lowered rate. Never sent, so never repeated.
 */
const heldBack = Symbol('held back');

function header(headers: Readonly<Record<string, string | string[] | undefined>>, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

const maxServiceErrors = 5;
const maxMsgLength = 200;
const maxNameLength = 60;

function serviceErrors(body: string, secrets: readonly string[]): ServiceFieldError[] {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return [];
  }
  const parsed = serviceErrorBodySchema.safeParse(json);
  if (!parsed.success) return [];
  // Every part is outside text: each is scrubbed before it is cut.
  return parsed.data.errors.slice(0, 20).map((entry) => ({
    ...(entry.field === undefined ? {} : { field: textExcerpt(entry.field, secrets, maxNameLength) }),
    ...(entry.type === undefined ? {} : { type: textExcerpt(entry.type, secrets, maxNameLength) }),
    ...(entry.msg === undefined ? {} : { msg: textExcerpt(entry.msg, secrets, maxMsgLength) }),
  }));
}

function explainServiceErrors(errors: readonly ServiceFieldError[]): string {
  return errors
    .slice(0, maxServiceErrors)
    .map((error) => [error.field, error.type].filter(Boolean).join(' ') + (error.msg === undefined ? '' : ` (${error.msg})`))
    .filter((text) => text !== '')
    .join('; ');
}

const unknownOutcomeHint = 'the service may or may not have carried it out; it is not repeated, so nothing is created twice (look the item up)';

/** "150 s", "1.9 s": waits and budgets as people read them. */
function seconds(ms: number): string {
  const s = ms / 1000;
  return `${s >= 10 ? Math.round(s) : Math.round(s * 10) / 10} s`;
}

function attemptsTried(attempts: number, elapsedMs: number): string {
  return attempts === 1 ? '' : `${attempts} attempts in ${seconds(elapsedMs)}`;
}

/**
 * Runs one call to completion: every attempt through the limiter, retries as the pure policy
 * decides, one token re-read on a 401, and failures turned into ApiErrors whose messages hold
 * no secret.
 */
export class RequestExecutor {
  readonly #deps: ExecutorDeps;
  readonly #sleeper: Sleeper;
  #closed = false;
  /** Some answer came from the service: a connection that fails later is a restart, not a wrong URL. */
  #reached = false;
  #onWire = 0;

  constructor(deps: ExecutorDeps) {
    this.#deps = deps;
    this.#sleeper = new Sleeper(deps.timers);
  }

  /** Requests sent and not answered yet: what an interrupt lets finish. */
  get onWire(): number {
    return this.#onWire;
  }

  /** Calls waiting for a slot or a retry fail with `network` "the client was closed". */
  close(): void {
    this.#closed = true;
    this.#sleeper.close();
  }

  async run<T>(call: Call<T>): Promise<T> {
    const { timers, retry } = this.#deps;
    const started = timers.now();
    // A 401 tries another token once per call: none yet, or what that try found.
    let reload: TokenReload = 'none';
    // After a 503/429 to a request with a body, the retry goes on a new connection.
    let freshConnection = false;
    // After a 503/429 an urgent call's retry keeps to the (cut) pace; after a 500 or a lost
    // answer nothing asked the client to slow down, and the requests waiting for it wait on.
    let throttled = false;
    // The answer of the last attempt sent, for the error when a stop forbids the next one.
    let last: FailedAttempt | undefined;
    // The policy stops at maxAttempts; one extra attempt may follow a token re-read.
    for (let attempt = 1; attempt <= retry.maxAttempts + 1; attempt += 1) {
      if (this.#closed) throw this.#closedError(call, attempt - 1);
      if (call.signal?.aborted) throw this.#cancelledError(call, attempt - 1);
      if (call.stop?.aborted) throw this.#stoppedError(call, attempt - 1, last);
      let attempted: Attempted;
      try {
        attempted = await this.#withToken(call, attempt, freshConnection, throttled);
      } catch (error) {
        if (error instanceof LimiterClosedError) throw this.#closedError(call, attempt - 1);
        if (error instanceof LimiterStoppedError) throw call.signal?.aborted ? this.#cancelledError(call, attempt - 1) : this.#stoppedError(call, attempt - 1, last);
        // A write fence held this attempt back: it never went out, and the report must say so.
        if (error instanceof LockLostError) throw this.#stoppedError(call, attempt - 1, last, error.message, error);
        // So did a credential that could not be had (a key rejected at renewal, one that could
        // not be kept): a write held back before the wire is not started, the credential says why.
        if (error instanceof CredentialError && call.method !== 'GET') throw this.#stoppedError(call, attempt - 1, last, error.message, error);
        throw error;
      }
      const { outcome, answeredAt } = attempted;
      // Neither is worth repeating: the same answer would be as large; the caller gave up.
      if (outcome.kind === 'failure' && outcome.failure === 'too_large') throw this.#error('response_too_large', call, attempt, outcome.message);
      if (outcome.kind === 'failure' && outcome.failure === 'cancelled') throw this.#cancelledError(call, attempt);
      let failure: AttemptFailure;
      let retryAfter: string | undefined;
      if (outcome.kind === 'response') {
        this.#reached = true;
        const { status } = outcome;
        if (status >= 200 && status < 300) {
          this.#requestEvent(call, attempt, attempted);
          return this.#parse(call, outcome.body, status, attempt);
        }
        if (status === 401 && call.auth !== false) {
          reload = await this.#reloadToken(call, attempt, attempted, reload);
          last = { failure: { kind: 'status', method: call.method, status }, outcome };
          continue;
        }
        const refusal = this.#refusal(call, attempt, attempted);
        if (refusal !== undefined) throw refusal;
        failure = { kind: 'status', method: call.method, status, ...repeatable(call) };
        retryAfter = header(outcome.headers, 'retry-after');
        throttled = status === 503 || status === 429;
        if (throttled && call.body !== undefined) freshConnection = true;
      } else {
        throttled = false;
        failure =
          outcome.failure === 'timeout'
            ? { kind: 'timeout', method: call.method, sent: outcome.sent, ...repeatable(call) }
            : { kind: 'network', method: call.method, errorCode: outcome.errorCode, sent: outcome.sent, reached: this.#reached, ...repeatable(call) };
      }

      const elapsedMs = timers.now() - started;
      const decision = decideRetry(attempt, failure, retryAfter, answeredAt, elapsedMs, retry);
      last = { failure, outcome };
      // Stopped while this attempt was on the wire: its answer stands, and no retry starts.
      const stopped = call.stop?.aborted === true;
      this.#requestEvent(call, attempt, attempted, 'stop' in decision || stopped ? undefined : decision.delayMs);
      if ('stop' in decision) throw this.#finalError(call, attempt, elapsedMs, failure, outcome, decision);
      if (stopped) throw this.#stoppedError(call, attempt, last);
      emitSafely(this.#deps.events, 'retry', {
        method: call.method,
        route: call.route,
        attempt,
        delayMs: decision.delayMs,
        reason: errorCodeFor(failure),
        status: failure.kind === 'status' ? failure.status : undefined,
        source: decision.source,
      });
      // A stop ends the wait too: the retry is never sent.
      if (!(await this.#sleeper.sleep(decision.delayMs, call.stop ?? call.signal))) {
        if (call.signal?.aborted) throw this.#cancelledError(call, attempt);
        throw call.stop?.aborted ? this.#stoppedError(call, attempt, last) : this.#closedError(call, attempt);
      }
    }
    // Unreachable: the policy stops by maxAttempts. Kept so the loop is visibly bounded.
    throw this.#error('unavailable', call, retry.maxAttempts + 1, 'gave up after too many attempts');
  }

  /**
   * One attempt through the limiter, its bearer taken in the slot as it goes on the wire. The
   * token is got or renewed before the wait, outside the limiter (a renewal is itself a call
   * through it); a token that has grown too old for the wire while the attempt waited is renewed
   * in the slot, the exchange going past the line (AdaptiveLimiter.urgent), so the request goes
   * right after it however slow the pace: given back, it would find the next token too old too
   * whenever the pace is slower than a token's life.
   */
  async #withToken(call: Call<unknown>, attempt: number, freshConnection: boolean, throttled: boolean): Promise<Attempted> {
    const { limiter, tokens } = this.#deps;
    let held = false;
    const stop = call.stop ?? call.signal;
    for (;;) {
      // The call's stop goes along: a renewal every caller has left is not sent.
      if (call.auth !== false) await untilStopped(tokens.ready(call.method, call.path, call.route, stop), stop);
      if (this.#closed) throw this.#closedError(call, attempt - 1);
      if (call.signal?.aborted) throw this.#cancelledError(call, attempt - 1);
      const send = (stamp: DispatchStamp) => this.#attempt(call, attempt, stamp, freshConnection);
      // The stop takes a call still waiting out of the limiter's line at once (LimiterStoppedError).
      // An urgent call's retry after a 503 (and one held back by a 503) keeps to the pace, still
      // past the line: the backoff alone would send it at a server that just said 503 faster than
      // the cut rate.
      const attempted = call.urgent === true ? await limiter.urgent(send, stop, throttled || held) : await limiter.schedule(send, attempt > 1 || held ? 1 : 0, stop);
      // Held back by a 503 read since its slot: bounded, as each hold needs a new 503.
      if (attempted !== heldBack) return attempted;
      held = true;
    }
  }

  /**
   * A 401: one more try with another token per call (a re-read token file, a renewed access
   * token, or one renewed since this request left). Returns 'changed' when the call should be
   * repeated with it; throws CredentialError `token_rejected` otherwise, worded by where the
   * token came from.
   */
  async #reloadToken(call: Call<unknown>, attempt: number, attempted: Attempted, reload: TokenReload): Promise<TokenReload> {
    const status = 401;
    if (reload === 'none' && this.#deps.tokens.rotatable) {
      const changed = await this.#deps.tokens.refresh(attempted.generation, call.method, call.path, call.route, call.stop ?? call.signal);
      emitSafely(this.#deps.events, 'token', { method: call.method, route: call.route, changed });
      if (changed) {
        this.#requestEvent(call, attempt, attempted, 0);
        emitSafely(this.#deps.events, 'retry', { method: call.method, route: call.route, attempt, delayMs: 0, reason: 'unauthorized', status, source: 'token_reloaded' });
        return 'changed';
      }
      reload = 'unchanged';
    }
    this.#requestEvent(call, attempt, attempted);
    const message = `${call.method} ${call.path}: ${redactText(this.#deps.tokens.describeRejection(reload), this.#secrets(call))}`;
    throw new CredentialError('token_rejected', message, { request: { method: call.method, path: call.path, route: call.route, status, attempts: attempt } });
  }

  /** A 403 or a redirect: final answers that are not the service's fault, never retried. */
  #refusal(call: Call<unknown>, attempt: number, attempted: Attempted): ApiError | undefined {
    const { outcome } = attempted;
    if (outcome.kind !== 'response') return undefined;
    const { status } = outcome;
    if (status !== 403 && (status < 300 || status >= 400)) return undefined;
    this.#requestEvent(call, attempt, attempted);
    if (status === 403) {
      return this.#error('forbidden', call, attempt, 'forbidden (403): the token has no permission for this API or method (is it a read-only token?)', {
        status,
        errors: serviceErrors(outcome.body, this.#secrets(call)),
      });
    }
    // Following it would send the bearer token wherever the Location points.
    return this.#error('bad_response', call, attempt, `the service answered with a redirect (${status}); amsync does not follow redirects`, { status });
  }

  async #attempt(call: Call<unknown>, attempt: number, stamp: DispatchStamp, freshConnection: boolean): Promise<Attempted | typeof heldBack> {
    const { limiter, timers, tokens, transport, events, retry } = this.#deps;
    // Taken now, as the request goes on the wire, not when it was queued: one too old to be
    // sent is renewed first, the stop ending the wait (the request is then never sent).
    const stop = call.stop ?? call.signal;
    const current = call.auth === false ? undefined : await untilStopped(tokens.current(call.method, call.path, call.route, stop), stop);
    // Here, not when the write was queued: a process paused with writes queued sends them on resume.
    if (call.method !== 'GET' && call.auth !== false) this.#deps.fences?.check();
    // The last moment a request can be held back, with no wait between this and the wire:
    // stopped before here it was never sent; past here it is on the wire and is let finish.
    if (call.stop?.aborted || call.signal?.aborted) throw new LimiterStoppedError();
    // The gate in front of the wire: a 503 read since the limiter let this one through means
    // the server's bucket is empty; sent now it would draw another. It queues again instead.
    if (limiter.heldBack(stamp)) return heldBack;
    const sentAt = timers.now();
    call.onSend?.(sentAt);
    // The round trip counts from the wire, not from the slot: a wait in the slot for a renewed
    // token is not the server's latency (it would widen the window and look like a queue).
    const sent: DispatchStamp = sentAt > stamp.at ? { ...stamp, at: sentAt } : stamp;
    this.#onWire += 1;
    let outcome: WireOutcome;
    try {
      outcome = await transport.send(
        {
          method: call.method,
          path: call.path,
          ...(call.searchParams === undefined ? {} : { searchParams: call.searchParams }),
          ...(call.body === undefined ? {} : { body: call.body }),
          ...(call.signal === undefined ? {} : { signal: call.signal }),
          ...(freshConnection ? { freshConnection } : {}),
        },
        current?.token,
      );
    } finally {
      this.#onWire -= 1;
    }
    const durationMs = timers.now() - sentAt;
    const answeredAt = timers.wallNow();
    if (outcome.kind === 'response') {
      const { status } = outcome;
      if (status === 503 || status === 429) {
        const serverDelay = parseRetryAfter(header(outcome.headers, 'retry-after'), answeredAt);
        const pause = serverDelay === undefined ? undefined : Math.min(serverDelay, retry.maxRetryAfterMs);
        const result = limiter.throttle(sent, pause);
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
        limiter.success(sent);
      }
    }
    return { outcome, generation: current?.generation ?? 0, answeredAt, durationMs, rate: stamp.rate };
  }

  /** One event per attempt, once it is known whether the call goes on (`retryDelayMs`). */
  #requestEvent(call: Call<unknown>, attempt: number, attempted: Attempted, retryDelayMs?: number): void {
    const { outcome } = attempted;
    emitSafely(this.#deps.events, 'request', {
      method: call.method,
      route: call.route,
      status: outcome.kind === 'response' ? outcome.status : undefined,
      error: outcome.kind === 'response' ? undefined : 'errorCode' in outcome ? outcome.errorCode : outcome.failure,
      durationMs: attempted.durationMs,
      attempt,
      rate: attempted.rate,
      retryDelayMs,
    });
  }

  #parse<T>(call: Call<T>, body: string, status: number, attempts: number): T {
    const result = call.parse(status, body);
    if (result.ok) return result.value;
    const excerpt = bodyExcerpt(body, this.#secrets(call));
    throw this.#error('bad_response', call, attempts, `unexpected response (${status}): ${result.problem}; body: ${excerpt}`, { status });
  }

  #finalError(call: Call<unknown>, attempts: number, elapsedMs: number, failure: AttemptFailure, outcome: WireOutcome, stop: Stop): ApiError {
    const code: ApiErrorCode = stop.stop === 'unknown_outcome' ? 'unknown_outcome' : errorCodeFor(failure);
    const secrets = this.#secrets(call);
    const status = failure.kind === 'status' ? failure.status : undefined;
    const cause =
      outcome.kind === 'failure' && 'errorCode' in outcome ? Object.assign(new Error(redactText(outcome.message, secrets)), { code: outcome.errorCode }) : undefined;
    if (failure.kind === 'network') {
      const serviceWide = describeServiceFailure(failure.errorCode, this.#deps.target, attemptsTried(attempts, elapsedMs));
      if (serviceWide !== undefined) return this.#error(code, call, attempts, serviceWide, { cause, serviceWide: true });
    }
    const errors = outcome.kind === 'response' ? serviceErrors(outcome.body, secrets) : [];
    let detail = describeFailure(failure);
    if (errors.length > 0) detail += `: ${explainServiceErrors(errors)}`;
    else if (outcome.kind === 'response' && failure.kind === 'status' && failure.status >= 400 && outcome.body.trim() !== '') {
      detail += `: ${bodyExcerpt(outcome.body, secrets, 120)}`;
    }
    if (stop.stop === 'unknown_outcome') detail += `; ${unknownOutcomeHint}`;
    if (stop.stop === 'retry_after_exceeds_budget') {
      detail += `: the service asked to wait ${seconds(stop.retryAfterMs)} (Retry-After), more than the ${seconds(stop.budgetLeftMs)} retry budget left (retry.maxElapsedMs)`;
    }
    if (stop.stop === 'max_attempts' || stop.stop === 'max_elapsed') detail += ` (gave up after ${attempts} attempt${attempts === 1 ? '' : 's'})`;
    return this.#error(code, call, attempts, detail, { status, errors, cause });
  }

  #closedError(call: Call<unknown>, attempts: number): ApiError {
    return this.#error('network', call, attempts, 'the client was closed before the call completed');
  }

  /**
   * The call's stop fired before its next attempt went out: `not_sent` when none had (the
   * service never saw it), else the last attempt's failure, not retried.
   */
  #stoppedError(call: Call<unknown>, attempts: number, last: FailedAttempt | undefined, why = stopReason(call.stop), cause?: Error): ApiError {
    // Marked when the stop (an interrupt) is the reason, not a lost lock or a credential
    // (`cause`): the caller ends the run as the interrupt, whatever the last attempt's code.
    const stopped = cause === undefined;
    if (last === undefined) return this.#error('not_sent', call, 0, `not sent: ${why}`, { cause, stopped });
    const { failure, outcome } = last;
    const errors = outcome.kind === 'response' ? serviceErrors(outcome.body, this.#secrets(call)) : [];
    const detail = `${describeFailure(failure)}${errors.length > 0 ? `: ${explainServiceErrors(errors)}` : ''}; not retried: ${why}`;
    return this.#error(errorCodeFor(failure), call, attempts, detail, { status: failure.kind === 'status' ? failure.status : undefined, errors, cause, stopped });
  }

  #cancelledError(call: Call<unknown>, attempts: number): ApiError {
    return this.#error('cancelled', call, attempts, 'cancelled: the run was abandoned (its deadline passed)');
  }

  #secrets(call: Call<unknown>): string[] {
    return [...this.#deps.tokens.knownValues, ...(call.secrets ?? [])];
  }

  #error(code: ApiErrorCode, call: Call<unknown>, attempts: number, detail: string, extra: ErrorExtra = {}): ApiError {
    const secrets = this.#secrets(call);
    // Belt and braces: every message passes the scrubber, whatever it was built from.
    const scrubbed = redactText(detail, secrets);
    // The method and path are amsync's own, and are not scrubbed: the pattern for `token: value`
    // would take the status from `POST /api/v1/oauth2/token: 500 …`.
    const message = extra.serviceWide === true ? scrubbed : `${call.method} ${call.path}: ${scrubbed}`;
    return new ApiError(code, message, {
      method: call.method,
      path: call.path,
      route: call.route,
      ...(extra.status === undefined ? {} : { status: extra.status }),
      ...(extra.errors === undefined ? {} : { errors: extra.errors }),
      attempts,
      ...(extra.cause === undefined ? {} : { cause: extra.cause }),
      detail: scrubbed,
      serviceWide: extra.serviceWide === true,
      stopped: extra.stopped === true,
    });
  }
}

/** An attempt that was sent and failed: what a stop that forbids its retry reports. */
interface FailedAttempt {
  readonly failure: AttemptFailure;
  readonly outcome: WireOutcome;
}

/** `interrupted (SIGINT)`: what the stop signal was aborted with. */
function stopReason(signal: AbortSignal | undefined): string {
  const reason: unknown = signal?.reason;
  if (reason instanceof Error) return reason.message;
  return typeof reason === 'string' ? reason : 'the run was stopped';
}

interface ErrorExtra {
  readonly status?: number | undefined;
  readonly errors?: readonly ServiceFieldError[];
  readonly cause?: unknown;
  readonly serviceWide?: boolean;
  readonly stopped?: boolean;
}

function repeatable(call: Call<unknown>): { readonly repeatable?: true } {
  return call.repeatable === true ? { repeatable: true } : {};
}

/**
 * Waits for `work` (a token renewal other calls share) unless `stop` fires first: a call waiting
 * for a token leaves at once on an interrupt (LimiterStoppedError: never sent), rather than
 * after the renewal's retries. The renewal itself goes on for the calls that still wait.
 */
async function untilStopped<T>(work: Promise<T>, stop: AbortSignal | undefined): Promise<T> {
  if (stop === undefined) return work;
  if (stop.aborted) {
    work.catch(() => undefined);
    throw new LimiterStoppedError();
  }
  let unsubscribe = (): void => undefined;
  const stopped = new Promise<never>((_, reject) => {
    unsubscribe = onAbort(stop, () => reject(new LimiterStoppedError()));
  });
  try {
    return await Promise.race([work, stopped]);
  } finally {
    unsubscribe();
    work.catch(() => undefined);
    stopped.catch(() => undefined);
  }
}
