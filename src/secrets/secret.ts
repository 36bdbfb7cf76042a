import type { SecretValue } from '../model/index.js';
import { registerSecret } from './known-secrets.js';

const REDACTED = '[redacted]';
const inspectSymbol = Symbol.for('nodejs.util.inspect.custom');

/**
 * A secret value that does not print. toString, toJSON, util.inspect (console.log) and
 * template strings all give `[redacted]`; `reveal()` is called only where a request body or
 * a 0600 file is written. The value lives in a private field, so it is not enumerable and
 * structured logging cannot walk into it.
 *
 * Making one registers the value as a known secret (known-secrets.ts): it is then scrubbed
 * from every output, however a server echoes it back.
 */
export class Secret implements SecretValue {
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
    registerSecret(value);
  }

  reveal(): string {
    return this.#value;
  }

  toString(): string {
    return REDACTED;
  }

  toJSON(): string {
    return REDACTED;
  }

  [inspectSymbol](): string {
    return REDACTED;
  }

  [Symbol.toPrimitive](): string {
    return REDACTED;
  }
}

export function isSecret(value: unknown): value is Secret {
  return value instanceof Secret;
}
