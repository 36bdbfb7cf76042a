import { createHmac } from 'node:crypto';
import type { SecretValue } from '../model/index.js';

/**
 * A keyed fingerprint of a password: HMAC-SHA256, hex. It tells whether the declared
 * password changed since it was last applied without storing the password, and the key
 * keeps it from being brute-forced from the state file alone.
 */
export function fingerprint(key: Buffer | string, secret: SecretValue): string {
  return createHmac('sha256', key).update(secret.reveal(), 'utf8').digest('hex');
}
