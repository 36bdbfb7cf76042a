import * as z from 'zod';
import { oneError, type Reply } from './reply.js';
import type { TokenSettings } from './types.js';

export type Access = 'read-write' | 'read-only';

/** Access tokens issued by the token endpoint (oauth.ts): read-write until they expire. */
export interface IssuedTokens {
  lookup(token: string): 'valid' | 'expired' | undefined;
  expire(token: string): void;
}

/** The tokens the emulator accepts; mutable, so tokens can rotate and expire at run time. */
export interface TokenSets {
  readWrite: Set<string>;
  readOnly: Set<string>;
  expired: Set<string>;
  issued?: IssuedTokens;
}

const CHALLENGE = 'Bearer realm="amsync-emulator"';

const bearerPattern = /^Bearer\s+(\S+)\s*$/i;

/** The token an Authorization header carries, or null when it carries none. */
export function bearerToken(header: string | undefined): string | null {
  const match = header === undefined ? null : bearerPattern.exec(header);
  return match === null ? null : (match[1] as string);
}

/** The access a request's Authorization header grants, or the 401 to answer. */
export function authenticate(header: string | undefined, tokens: TokenSets): Access | Reply {
  const token = bearerToken(header);
  if (token === null) {
    return oneError(401, 'authorization', 'required', 'a bearer access token is required', { 'WWW-Authenticate': CHALLENGE });
  }
  if (tokens.readWrite.has(token)) return 'read-write';
  if (tokens.readOnly.has(token)) return 'read-only';
  const issued = tokens.issued?.lookup(token);
  if (issued === 'valid') return 'read-write';
  if (tokens.expired.has(token) || issued === 'expired') {
    return oneError(401, 'authorization', 'invalid', 'the access token has expired', {
      'WWW-Authenticate': `${CHALLENGE}, error="invalid_token", error_description="The access token expired"`,
    });
  }
  return oneError(401, 'authorization', 'invalid', 'the access token is not valid', { 'WWW-Authenticate': `${CHALLENGE}, error="invalid_token"` });
}

/** The `expireToken` fault: the token of this request is expired from now on (a valid one only). */
export function expireToken(header: string | undefined, tokens: TokenSets): void {
  const token = bearerToken(header);
  if (token !== null) tokens.issued?.expire(token);
  if (token === null || !(tokens.readWrite.has(token) || tokens.readOnly.has(token))) return;
  tokens.readWrite.delete(token);
  tokens.readOnly.delete(token);
  tokens.expired.add(token);
}

// A token with white space could never be sent in `Authorization: Bearer <token>`.
const tokenList = z.array(z.string().regex(/^\S+$/, 'tokens are non-empty strings without white space')).max(1000);

/** The body of `PUT /_emulator/tokens` and the argument of `setTokens`: each list given replaces its set. */
export const tokenSettingsSchema = z.strictObject({
  tokens: tokenList.optional(),
  readOnlyTokens: tokenList.optional(),
  expiredTokens: tokenList.optional(),
});

/** Replaces the sets named in `next` (already validated); a token is in one set at most. */
export function replaceTokens(tokens: TokenSets, next: TokenSettings): void {
  const sets: [keyof TokenSettings, Set<string>][] = [
    ['tokens', tokens.readWrite],
    ['readOnlyTokens', tokens.readOnly],
    ['expiredTokens', tokens.expired],
  ];
  for (const [key, set] of sets) {
    const list = next[key];
    if (list === undefined) continue;
    set.clear();
    for (const t of list) {
      for (const [, other] of sets) other.delete(t);
      set.add(t);
    }
  }
}

/** How many tokens of each kind there are: never the tokens themselves. */
export function tokenCounts(tokens: TokenSets): { tokens: number; readOnlyTokens: number; expiredTokens: number } {
  return { tokens: tokens.readWrite.size, readOnlyTokens: tokens.readOnly.size, expiredTokens: tokens.expired.size };
}
