import { createHmac } from 'node:crypto';
import type { SecretValue } from '../model/index.js';

/**
 * `X-Amsync-Signature`: `sha256=` and the hex HMAC-SHA256 of the exact bytes sent, keyed by
 * the webhook's key (GitHub's X-Hub-Signature-256 scheme, which receivers already know how to
 * check: over the raw body, before parsing it, in constant time).
 */
export function signatureHeader(body: Uint8Array, key: SecretValue): string {
  return `sha256=${createHmac('sha256', key.reveal()).update(body).digest('hex')}`;
}
