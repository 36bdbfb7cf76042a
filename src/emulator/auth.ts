import { oneError, type Reply } from './reply.js';

export type Access = 'read-write' | 'read-only';

export interface TokenSets {
  readWrite: ReadonlySet<string>;
  readOnly: ReadonlySet<string>;
  expired: ReadonlySet<string>;
}

const CHALLENGE = 'Bearer realm="amsync-emulator"';

/** The access a request's Authorization header grants, or the 401 to answer. */
export function authenticate(header: string | undefined, tokens: TokenSets): Access | Reply {
  const match = header === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (match === null) {
    return oneError(401, 'authorization', 'required', 'a bearer access token is required', { 'WWW-Authenticate': CHALLENGE });
  }
  const token = match[1] as string;
  if (tokens.readWrite.has(token)) return 'read-write';
  if (tokens.readOnly.has(token)) return 'read-only';
  if (tokens.expired.has(token)) {
    return oneError(401, 'authorization', 'invalid', 'the access token has expired', {
      'WWW-Authenticate': `${CHALLENGE}, error="invalid_token", error_description="The access token expired"`,
    });
  }
  return oneError(401, 'authorization', 'invalid', 'the access token is not valid', { 'WWW-Authenticate': `${CHALLENGE}, error="invalid_token"` });
}
