import { randomBytes } from 'node:crypto';
import { oneError, type Reply } from './reply.js';
import { jwtShaped } from './token-source.js';

/**
 * The real service's login (as the real service does): the long-lived credential is an integrator key, a
 * refresh token; `POST /api/v1/oauth2/token` with `{"grant_type": "refresh_token",
 * "refresh_token": K}` answers `{access_token, refresh_token, expires_in}`, and access tokens
 * expire. Pure apart from the injected clock and randomness: tests drive time directly.
 */

export const TOKEN_PATH = '/api/v1/oauth2/token';

export interface OAuthSettings {
  /** Integrator keys accepted at start; none: the token endpoint answers 404. */
  readonly refreshTokens: readonly string[];
  /** Lifetime of an issued access token, in seconds (`expires_in`). */
  readonly accessTokenTtlSeconds: number;
  /** Each exchange answers a new refresh token; the old one stops working after the grace. */
  readonly rotate: boolean;
  /** How long a rotated-out refresh token still works, in seconds (a lost answer can be retried). */
  readonly graceSeconds: number;
  /** '' or a tenant's `/t/<name>`, for messages. @default '' */
  readonly pathPrefix?: string;
}

export interface OAuthStats {
  readonly enabled: boolean;
  readonly accessTokenTtlSeconds: number;
  readonly rotate: boolean;
  readonly graceSeconds: number;
  /** Successful exchanges. */
  readonly exchanges: number;
  /** Exchanges refused: unknown, revoked or rotated-out refresh tokens, bad bodies. */
  readonly rejected: number;
  /** Refresh tokens that still work. */
  readonly refreshTokens: number;
  /** Issued access tokens not expired yet. */
  readonly accessTokens: number;
}

interface RefreshState {
  /** The integrator key this token descends from: revoking any token of it revokes them all. */
  readonly family: number;
  /** Epoch ms after which it no longer works; null while it is the family's current token. */
  validUntil: number | null;
}

export class OAuthIssuer {
  readonly #settings: OAuthSettings;
  readonly #now: () => number;
  readonly #random: (bytes: number) => Buffer;
  readonly #refresh = new Map<string, RefreshState>();
  readonly #access = new Map<string, number>();
  #families = 0;
  #exchanges = 0;
  #rejected = 0;

  constructor(settings: OAuthSettings, now: () => number, random: (bytes: number) => Buffer = randomBytes) {
    this.#settings = settings;
    this.#now = now;
    this.#random = random;
    for (const t of settings.refreshTokens) this.addRefreshToken(t);
  }

  get enabled(): boolean {
    return this.#families > 0;
  }

  /** A new integrator key (as made in the service's UI): a family of its own. */
  addRefreshToken(token: string): void {
    this.#families += 1;
    this.#refresh.set(token, { family: this.#families, validUntil: null });
  }

  /** Revokes the integrator key `token` belongs to, rotated descendants included; false when unknown. */
  revoke(token: string): boolean {
    const state = this.#refresh.get(token);
    if (state === undefined) return false;
    for (const [t, s] of this.#refresh) if (s.family === state.family) this.#refresh.delete(t);
    return true;
  }

  /** Whether an exchange of this refresh token would succeed now (it makes none). */
  accepts(refreshToken: string): boolean {
    const state = this.#refresh.get(refreshToken);
    return state !== undefined && (state.validUntil === null || this.#now() < state.validUntil);
  }

  /** `valid`, `expired`, or undefined for a token this issuer never made. */
  lookup(accessToken: string): 'valid' | 'expired' | undefined {
    const expiresAt = this.#access.get(accessToken);
    if (expiresAt === undefined) return undefined;
    return this.#now() < expiresAt ? 'valid' : 'expired';
  }

  /** The `expireToken` fault for an issued token. */
  expire(accessToken: string): void {
    if (this.#access.has(accessToken)) this.#access.set(accessToken, this.#now());
  }

  /** `POST /api/v1/oauth2/token`: the raw body in, the answer out. */
  exchange(rawBody: string): Reply {
    if (!this.enabled) return oneError(404, 'path', 'not_found', `no API at ${this.#settings.pathPrefix ?? ''}${TOKEN_PATH} (start the emulator with --refresh-token)`);
    this.#prune();
    let body: unknown;
    try {
      body = rawBody.trim() === '' ? undefined : JSON.parse(rawBody);
    } catch (error) {
      return this.#reject(400, 'body', 'invalid', `malformed JSON: ${(error as Error).message}`);
    }
    const { grant_type: grant, refresh_token: key } = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
    if (grant !== 'refresh_token') return this.#reject(400, 'grant_type', grant === undefined ? 'required' : 'invalid', "grant_type must be 'refresh_token'");
    if (typeof key !== 'string' || key === '') return this.#reject(400, 'refresh_token', 'required', 'refresh_token is required');
    const state = this.#refresh.get(key);
    if (state === undefined || (state.validUntil !== null && this.#now() >= state.validUntil)) {
      return this.#reject(401, 'refresh_token', 'invalid', 'the refresh token is not valid: unknown, revoked, or replaced by a newer one');
    }
    const now = this.#now();
    const ttl = this.#settings.accessTokenTtlSeconds;
    const access = jwtShaped({ sub: 'integrator', typ: 'access', iat: Math.floor(now / 1000), exp: Math.floor(now / 1000) + ttl, jti: this.#id() }, this.#random);
    this.#access.set(access, now + ttl * 1000);
    let refresh = key;
    if (this.#settings.rotate) {
      refresh = jwtShaped({ sub: 'integrator', typ: 'refresh', iat: Math.floor(now / 1000), jti: this.#id() }, this.#random);
      this.#refresh.set(refresh, { family: state.family, validUntil: null });
      const graceEnd = now + this.#settings.graceSeconds * 1000;
      state.validUntil = state.validUntil === null ? graceEnd : Math.min(state.validUntil, graceEnd);
    }
    this.#exchanges += 1;
    return { status: 200, body: { access_token: access, refresh_token: refresh, token_type: 'Bearer', expires_in: ttl } };
  }

  stats(): OAuthStats {
    this.#prune();
    const now = this.#now();
    let accessTokens = 0;
    for (const expiresAt of this.#access.values()) if (now < expiresAt) accessTokens += 1;
    return {
      enabled: this.enabled,
      accessTokenTtlSeconds: this.#settings.accessTokenTtlSeconds,
      rotate: this.#settings.rotate,
      graceSeconds: this.#settings.graceSeconds,
      exchanges: this.#exchanges,
      rejected: this.#rejected,
      refreshTokens: this.#refresh.size,
      accessTokens,
    };
  }

  #reject(status: 400 | 401, field: string, type: 'invalid' | 'required', msg: string): Reply {
    this.#rejected += 1;
    return oneError(status, field, type, msg);
  }

  #id(): string {
    return this.#random(12).toString('base64url');
  }

  /** Forgets tokens past their time, so a long run does not grow without bound. */
  #prune(): void {
    const now = this.#now();
    // An expired access token still answers "expired" (not "unknown") for a while.
    const keepExpiredMs = 3_600_000;
    for (const [t, expiresAt] of this.#access) if (now >= expiresAt + keepExpiredMs) this.#access.delete(t);
    for (const [t, s] of this.#refresh) if (s.validUntil !== null && now >= s.validUntil) this.#refresh.delete(t);
  }
}
