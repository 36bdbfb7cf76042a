import { readFile } from 'node:fs/promises';
import { Secret } from '../secrets/index.js';
import type { SecretValue } from '../model/index.js';
import type { BearerSource, CurrentToken, RejectionStage } from './bearer-source.js';
import { CredentialError } from './credential-error.js';

export type { CurrentToken } from './bearer-source.js';

export interface TokenSource {
  /** A token given directly (AMSYNC_TOKEN). Used first when both are set. */
  readonly token?: SecretValue;
  /** A file holding the token (AMSYNC_TOKEN_FILE, --token-file); re-read on a 401. */
  readonly tokenFile?: string;
}

// Anything else cannot go into an HTTP header (Node would refuse it at send time).
const headerSafe = /^[\x21-\x7e]+$/;

/** Whether a token (already trimmed) can be sent as `Authorization: Bearer <token>`. */
export function isSendableToken(value: string): boolean {
  return value !== '' && headerSafe.test(value);
}

/**
 * Hands out the bearer token and swaps in a rotated one: on a 401 the file is re-read once
 * (single-flight, however many requests got the 401 together).
 */
export class TokenProvider implements BearerSource {
  readonly #source: TokenSource;
  readonly #read: (path: string) => Promise<string>;
  #current: CurrentToken | undefined;
  #loading: Promise<CurrentToken> | undefined;
  /** Every token value seen, so error excerpts can be scrubbed of old ones too. */
  readonly #seen = new Set<string>();
  #directTokenInvalid = false;

  constructor(source: TokenSource, read: (path: string) => Promise<string> = (path) => readFile(path, 'utf8')) {
    this.#source = source;
    this.#read = read;
    if (source.token !== undefined) {
      const value = source.token.reveal().trim();
      if (value !== '' && headerSafe.test(value)) this.#current = this.#accept(value, 0);
      else this.#directTokenInvalid = true;
    }
  }

  /** Whether a 401 can be answered by re-reading a token file. */
  get rotatable(): boolean {
    return this.#source.tokenFile !== undefined;
  }

  /** Values to scrub from anything that could be printed. */
  get knownValues(): readonly string[] {
    return [...this.#seen];
  }

  /** Nothing to prepare: a token file is read inside the slot, which needs no request. */
  async ready(): Promise<void> {}

  async current(method: string, path: string, route: string): Promise<CurrentToken> {
    if (this.#current !== undefined) return this.#current;
    if (this.#source.tokenFile === undefined) {
      const problem = this.#directTokenInvalid ? 'token is empty or holds characters a token cannot have' : 'token missing: set AMSYNC_TOKEN or AMSYNC_TOKEN_FILE';
      throw unusable(`${method} ${path}: ${problem} (nothing was sent)`, { method, path, route });
    }
    return this.#load(method, path, route, 0);
  }

  /**
   * After a 401 with the token of `generation`: true when a different token is now at hand
   * (another request may already have re-read the file), false when there is none.
   */
  async refresh(generation: number, method: string, path: string, route: string): Promise<boolean> {
    if (this.#current !== undefined && this.#current.generation > generation) return true;
    if (this.#source.tokenFile === undefined) return false;
    try {
      const next = await this.#load(method, path, route, generation);
      return next.generation > generation;
    } catch {
      // A rotation in progress may leave the file briefly unreadable: fail on the 401 instead.
      return false;
    }
  }

  #load(method: string, path: string, route: string, generation: number): Promise<CurrentToken> {
    this.#loading ??= (async () => {
      const file = this.#source.tokenFile as string;
      let text: string;
      try {
        text = await this.#read(file);
      } catch (error) {
        const code = (error as { code?: unknown }).code;
        throw unusable(`${method} ${path}: token file ${file} could not be read (${typeof code === 'string' ? code : 'error'})`, { method, path, route });
      }
      const value = text.trim();
      if (value === '' || !headerSafe.test(value)) {
        throw unusable(`${method} ${path}: token file ${file} is empty or holds characters a token cannot have`, { method, path, route });
      }
      if (this.#current !== undefined && this.#current.token.reveal() === value) return this.#current;
      this.#current = this.#accept(value, Math.max(generation, this.#current?.generation ?? 0) + 1);
      return this.#current;
    })().finally(() => {
      this.#loading = undefined;
    });
    return this.#loading;
  }

  /** Names where the token came from: AMSYNC_TOKEN, the token file, or both (the file is the fallback). */
  describeRejection(stage: RejectionStage): string {
    const { token, tokenFile } = this.#source;
    const file = tokenFile === undefined ? undefined : `the token file ${tokenFile}`;
    const from = [token === undefined ? undefined : 'AMSYNC_TOKEN', file].filter(Boolean).join(', then ');
    const reread = { none: '', unchanged: '; the token file was re-read and held no other token', changed: '; the token re-read from the token file was refused too' }[stage];
    return `token rejected (401): missing, expired or wrong (${from || 'no token given'})${reread}`;
  }

  #accept(value: string, generation: number): CurrentToken {
    this.#seen.add(value);
    return { token: new Secret(value), generation };
  }
}

/** No token to send: nothing was sent. */
function unusable(message: string, request: { method: string; path: string; route: string }): CredentialError {
  return new CredentialError('token_unusable', message, { request: { ...request, attempts: 0 } });
}
