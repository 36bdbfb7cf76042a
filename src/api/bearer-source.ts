import type { SecretValue } from '../model/index.js';

export interface CurrentToken {
  readonly token: SecretValue;
  /** Bumped whenever the token changes, so a 401 can tell a stale token from a bad one. */
  readonly generation: number;
  /**
   * Monotonic ms (the client's Timers) after which this token is too close to its expiry to be
   * sent: `current` renews it first. undefined: no known expiry.
   */
  readonly sendUntil?: number;
}

/** How far the executor got with a 401: no second token tried, none at hand, or one that was refused too. */
export type RejectionStage = 'none' | 'unchanged' | 'changed';

/**
 * Where the executor gets the bearer token of each request: a token or token file
 * (TokenProvider), or an integrator key exchanged for access tokens (IntegratorKeyProvider).
 */
export interface BearerSource {
  /**
   * Called before a request waits for the limiter: gets or renews the token there, so a
   * renewal (itself a request through the limiter) never waits inside a limiter slot.
   */
  ready(method: string, path: string, route: string, stop?: AbortSignal): Promise<void>;
  /**
   * The token to send now; inside the limiter slot, as the request goes on the wire. A renewal
   * it finds due starts beside it; only a token too old to be sent is waited for, its exchange
   * going ahead of the limiter's line (an urgent call), so a slot never waits on a slot.
   */
  current(method: string, path: string, route: string, stop?: AbortSignal): Promise<CurrentToken>;
  /**
   * After a 401 with the token of `generation`: true when a different token is now at hand
   * (another request may already have renewed it), false when there is none.
   */
  refresh(generation: number, method: string, path: string, route: string, stop?: AbortSignal): Promise<boolean>;
  /**
   * What a 401 that stands means for this kind of credential, naming where the token came
   * from (`token rejected (401): …`); `stage` says whether another token was tried.
   */
  describeRejection(stage: RejectionStage): string;
  // `stop`: the calling request's (an interrupt); a renewal every caller left on its stop is not sent.
  /** Whether a 401 is worth a refresh. */
  readonly rotatable: boolean;
  /** Values to scrub from anything that could be printed: every token and key seen. */
  readonly knownValues: readonly string[];
}
