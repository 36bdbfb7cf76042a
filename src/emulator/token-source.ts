import { randomBytes } from 'node:crypto';

/**
 * Tokens shaped like the real service's: JWTs (`eyJ…`, three base64url parts). The emulator
 * never verifies a signature (it looks tokens up), so the third part is random bytes; the
 * shape is what matters to clients that parse or log-scrub tokens.
 */

const ID_BYTES = 16;
const SIGNATURE_BYTES = 32;
const POOL_TOKENS = 1024;
const HEADER = base64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));

/** A JWT-shaped token carrying `claims`; `random` gives the signature's bytes. */
export function jwtShaped(claims: Readonly<Record<string, unknown>>, random: (bytes: number) => Buffer = randomBytes): string {
  return `${HEADER}.${base64url(JSON.stringify(claims))}.${random(SIGNATURE_BYTES).toString('base64url')}`;
}

/**
 * Random apikey tokens. Bytes are drawn a pool at a time because seeding 100k apikeys one
 * randomBytes call each costs far more than the pooled draw.
 */
export function createTokenSource(): () => string {
  let pool = Buffer.alloc(0);
  let offset = 0;
  const take = (bytes: number): Buffer => {
    if (offset + bytes > pool.length) {
      pool = randomBytes((ID_BYTES + SIGNATURE_BYTES) * POOL_TOKENS);
      offset = 0;
    }
    const out = pool.subarray(offset, offset + bytes);
    offset += bytes;
    return out;
  };
  return () => jwtShaped({ sub: 'apikey', jti: take(ID_BYTES).toString('base64url') }, take);
}

function base64url(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64url');
}
