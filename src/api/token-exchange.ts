import * as z from 'zod';
import type { Call, ParseResult } from './request-executor.js';

/** The real service's token endpoint; not in the service's API specification. */
export const tokenRoute = '/api/v1/oauth2/token';

/** What an exchange answers, read once at the edge. */
export interface TokenAnswer {
  readonly accessToken: string;
  /** A new refresh token when the service rotates them; undefined or the same when it does not. */
  readonly refreshToken: string | undefined;
  /** Lifetime of the access token; undefined when the service does not say (renewed on 401 only). */
  readonly expiresInSeconds: number | undefined;
}

// A token that could not go into `Authorization: Bearer <token>` is no token.
const headerSafeToken = z.string().regex(/^[\x21-\x7e]+$/);

const tokenAnswerSchema = z.object({
  access_token: headerSafeToken,
  refresh_token: headerSafeToken.nullish(),
  expires_in: z.union([z.number(), z.string().regex(/^\d+(\.\d+)?$/).transform(Number)]).pipe(z.number().positive().finite()).nullish(),
});

function parseAnswer(status: number, body: string): ParseResult<TokenAnswer> {
  if (status !== 200) return { ok: false, problem: 'a token exchange must answer 200' };
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return { ok: false, problem: 'the body is not JSON' };
  }
  const parsed = tokenAnswerSchema.safeParse(json);
  if (!parsed.success) {
    // Names the field, never its value: the body holds tokens.
    const issue = parsed.error.issues[0];
    return { ok: false, problem: `not a token answer (${issue?.path.join('.') || 'the body'} is missing or not a token)` };
  }
  const { access_token: accessToken, refresh_token: refreshToken, expires_in: expiresIn } = parsed.data;
  return { ok: true, value: { accessToken, refreshToken: refreshToken ?? undefined, expiresInSeconds: expiresIn ?? undefined } };
}

/**
 * `POST /api/v1/oauth2/token` with `{"grant_type": "refresh_token", "refresh_token": K}`, as a
 * call the executor runs like any other (limiter, retry policy), without a bearer token.
 * `stop` fires once no caller waits for the renewal any more (each left on its own stop): the
 * exchange is then not sent, nor retried; one already on the wire finishes, its answer standing.
 * `onSent` is told when each attempt goes on the wire: the answer's `expires_in` counts from the
 * last one, not from the first of its retries.
 */
export function tokenExchangeCall(refreshToken: string, stop?: AbortSignal, onSent?: (at: number) => void): Call<TokenAnswer> {
  return {
    ...(stop === undefined ? {} : { stop }),
    ...(onSent === undefined ? {} : { onSend: onSent }),
    method: 'POST',
    path: tokenRoute,
    route: tokenRoute,
    auth: false,
    body: JSON.stringify({ grant_type: 'refresh_token', refresh_token: refreshToken }),
    // Every request that waits for the renewal waits for this one, some in their slots: it goes
    // ahead of the line and the pace (AdaptiveLimiter.urgent).
    urgent: true,
    // A second exchange gives a second access token; a key that a lost answer rotated is lost
    // whether or not this one is repeated. Not repeating it on a 502 failed every request
    // waiting for the token.
    repeatable: true,
    secrets: [refreshToken],
    parse: parseAnswer,
  };
}
