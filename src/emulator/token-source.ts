import { randomBytes } from 'node:crypto';

const TOKEN_BYTES = 24;
const POOL_TOKENS = 1024;

/**
 * Random apikey tokens from node:crypto. Bytes are drawn a pool at a time because seeding
 * 100k apikeys one randomBytes call each costs far more than the pooled draw.
 */
export function createTokenSource(): () => string {
  let pool = Buffer.alloc(0);
  let offset = 0;
  return () => {
    if (offset + TOKEN_BYTES > pool.length) {
      pool = randomBytes(TOKEN_BYTES * POOL_TOKENS);
      offset = 0;
    }
    const token = pool.subarray(offset, offset + TOKEN_BYTES).toString('base64url');
    offset += TOKEN_BYTES;
    return `amk_${token}`;
  };
}
