import { readFile } from 'node:fs/promises';
import type { SecretValue } from '../model/index.js';
import { writeFileAtomic, registerSecret, Secret } from '../secrets/index.js';
import { isApiError, type ApiError } from './api-error.js';
import type { BearerSource, CurrentToken, RejectionStage } from './bearer-source.js';
import { emitSafely, type ClientEvents } from './client-events.js';
import { CredentialError } from './credential-error.js';
import { redactText } from './redact.js';
import { onAbort } from '../time/index.js';
import type { TokenAnswer } from './token-exchange.js';

export interface IntegratorKeySource {
  /** The key given directly (AMSYNC_REFRESH_TOKEN): a rotated key lives in memory only. */
  readonly key?: SecretValue;
  /** A file holding the key (AMSYNC_REFRESH_TOKEN_FILE): a rotated key is written back to it. */
  readonly keyFile?: string;
  /** Somewhere else holding the key (a Kubernetes Secret, integratorKeySecret): read and written back as a key file is. */
  readonly store?: IntegratorKeyStore;
}

/**
 * A place other than a file that holds the integrator key (a Kubernetes Secret): read before
 * each exchange, as a key file is (a key replaced from outside is picked up), and written
 * back when the service rotates the key.
 */
export interface IntegratorKeyStore {
  /** For messages: `the Secret amsync/billing-app-amsync (data key integrator-key)`. */
  readonly describe: string;
  /** What to do when it cannot be written: `grant amsync's service account get and update on that Secret (…)`. */
  readonly fix: string;
  /** The key it holds (not trimmed). Throws an Error whose message is one line without the key, with an errno-like `code`. */
  read(): Promise<string>;
  /** Puts `key` there. Throws as read does. */
  write(key: string): Promise<void>;
}

export interface IntegratorKeyDeps {
  /**
   * One exchange through the executor (limiter, retry policy); throws ApiError. `stop` fires once
   * no caller waits for it any more (each left on its own stop): not sent then, nor retried.
   * `onSent` is told (in `now`'s clock) when each attempt goes on the wire.
   */
  exchange(refreshToken: string, stop?: AbortSignal, onSent?: (at: number) => void): Promise<TokenAnswer>;
  /** Monotonic milliseconds (the client's Timers). */
  now(): number;
  readonly events: ClientEvents;
  /** @default fs.readFile as UTF-8 */
  readFile?(path: string): Promise<string>;
  /** @default writeFileAtomic, 0600 */
  writeFile?(path: string, text: string): Promise<void>;
  /** Renew once this share of `expires_in` has passed. @default 0.8 */
  readonly renewAtShare?: number;
  /**
   * A rotated key that cannot be written back: false (a one-shot run), the renewal fails with
   * `integrator_key_not_persisted` and so does every request after it, as the key in use is lost
   * when the process ends; true (the daemon), the key is used from memory while the process
   * lives, `writeBack` says so (not ready) and the write is tried again at each renewal.
   * @default false
   */
  readonly keepUnpersistedKey?: boolean;
}

/** The state of the write-back of a rotated key to its file, for /readyz and metrics. */
export interface WriteBackStatus {
  /** false after a failed write-back, until one succeeds; false for good once a key from AMSYNC_REFRESH_TOKEN rotated. */
  readonly ok: boolean;
  /** errno-like code of the last failure; `no_key_file` for a key from AMSYNC_REFRESH_TOKEN, which has nowhere to go. */
  readonly error?: string;
}

interface AccessToken extends CurrentToken {
  /** Monotonic ms after which the next request renews it first. */
  readonly renewAt: number;
  /** Monotonic ms after which the service refuses it (401). */
  readonly expiresAt: number;
  /** Monotonic ms after which it is not sent any more: it could expire before the service reads it. */
  readonly sendUntil: number;
}

/** Who waits for a renewal: once every caller has left on its own stop, the exchange is not sent. */
interface Renewal {
  readonly stop: AbortController;
  /** Callers with a stop that has not fired. */
  waiting: number;
  /** A caller without a stop waits: the exchange goes whatever happens. */
  held: boolean;
  readonly leave: (() => void)[];
}

/** Known values kept for scrubbing: enough for every token still in use, bounded over months. */
const maxKnownValues = 64;
/** A failed renewal (not a rejection) is tried again after this, while the token lasts. */
const renewalRetryMs = 30_000;
/** A token is not sent in the last tenth of its life, at most the last 5 s: the way to the service and its clock. */
const sendMarginShare = 0.1;
const maxSendMarginMs = 5_000;
const headerSafe = /^[\x21-\x7e]+$/;

/**
 * Bearer tokens from an integrator key (README, "Logging in: the integrator key"): the key is exchanged for an access
 * token before the first request, and every access token, the first included, is renewed at
 * about 80% of `expires_in` and once on a 401, one renewal at a time however many requests
 * wait for it. The token is taken as a request goes on the wire: one that waited in the queue
 * past 80% starts the renewal beside it, and one whose token is too close to its expiry is
 * not sent but waits for the renewal. A rotated key is used from then on and written back to
 * its file (atomically, 0600) so a restart continues; if it cannot be kept, a one-shot run
 * fails and the daemon turns not ready (`keepUnpersistedKey`). A file replaced from outside
 * (a new key from the service's UI) is picked up at the next renewal. A key the service
 * rejected is never sent again: it fails at once until the file holds another.
 */
export class IntegratorKeyProvider implements BearerSource {
  readonly #source: IntegratorKeySource;
  #deps: IntegratorKeyDeps;
  #read: (path: string) => Promise<string>;
  #write: (path: string, text: string) => Promise<void>;
  readonly #seen = new Set<string>();
  #key: string | undefined;
  /** What the file held when last read or written: a different content was put there from outside. */
  #fileContent: string | undefined;
  #rejectedKey: string | undefined;
  #access: AccessToken | undefined;
  #renewing: Promise<AccessToken> | undefined;
  #renewal: Renewal | undefined;
  #retryRenewalAt = 0;
  #generation = 0;
  #writeBack: WriteBackStatus = { ok: true };
  #warnedUnpersisted = false;
  /** Set once a rotated key could not be kept (a one-shot run): every request fails with it. */
  #lost: CredentialError | undefined;

  constructor(source: IntegratorKeySource, deps: IntegratorKeyDeps) {
    this.#source = source;
    this.#deps = deps;
    this.#read = deps.readFile ?? ((path) => readFile(path, 'utf8'));
    this.#write = deps.writeFile ?? ((path, text) => writeFileAtomic(path, text, 0o600));
    if (source.key !== undefined) this.#key = this.#remember(source.key.reveal().trim());
  }

  /** Whether `source` names the same key as this provider's: a client made for it may take this one over. */
  serves(source: IntegratorKeySource): boolean {
    return source.keyFile === this.#source.keyFile && source.store?.describe === this.#source.store?.describe && source.key?.reveal().trim() === this.#source.key?.reveal().trim();
  }

  /**
   * A new client takes this key over (the daemon's settings reload): its exchanges, clock and
   * events from now on. The key in use, the access token and the write-back state go on, so a
   * rotated key only memory holds is never traded for the retired one in the file.
   */
  rebind(deps: IntegratorKeyDeps): void {
    this.#deps = deps;
    this.#read = deps.readFile ?? ((path) => readFile(path, 'utf8'));
    this.#write = deps.writeFile ?? ((path, text) => writeFileAtomic(path, text, 0o600));
  }

  get rotatable(): boolean {
    return true;
  }

  get knownValues(): readonly string[] {
    return [...this.#seen];
  }

  /** Whether the last rotated key reached its file. */
  get writeBack(): WriteBackStatus {
    return this.#writeBack;
  }

  /**
   * A one-shot run's end: once the renewal in flight (one the run's last request may have
   * started beside it) has settled, or `bound` has, the rotated key that could not be kept, if
   * any. A renewal still unanswered when `bound` settles may carry a rotated key the process
   * would take with it: that is a loss too, as far as anyone can tell.
   */
  async settled(bound: Promise<void>): Promise<CredentialError | undefined> {
    const renewing = this.#renewing;
    if (renewing !== undefined) {
      const done = await Promise.race([renewing.then(() => true, () => true), bound.then(() => false)]);
      if (!done && this.#renewing === renewing && this.#place !== undefined) {
        return new CredentialError(
          'integrator_key_not_persisted',
          `integrator key may be lost: a renewal of the access token was still unanswered when amsync ended; if the service rotated the key, the new one never reached ${this.#place} and the key there stops working. Run amsync again: if the key is rejected, put a new integrator key from the service's UI in ${this.#place}`,
        );
      }
    }
    return this.#lost;
  }

  async ready(_method?: string, _path?: string, _route?: string, stop?: AbortSignal): Promise<void> {
    if (this.#lost !== undefined) throw this.#lost;
    const now = this.#deps.now();
    const access = this.#access;
    if (access !== undefined && now < access.renewAt) return;
    // A renewal failed a moment ago and the token can still be sent: use it, try again later.
    if (access !== undefined && now < access.sendUntil && now < this.#retryRenewalAt) return;
    try {
      await this.#renew(stop);
    } catch (error) {
      if (error instanceof CredentialError || wasStopped(error) || access === undefined || this.#deps.now() >= access.sendUntil) throw error;
      this.#deferRenewal(error, access);
    }
  }

  /**
   * In the limiter slot, as the request goes on the wire: the newest token fit to be sent. Past
   * 80% of its life the renewal starts beside it, so requests that waited in the queue do not
   * all reach the service with a token about to expire; one too close to its expiry to be sent
   * is renewed first, the request waiting for it in its slot (the exchange goes ahead of the
   * line, AdaptiveLimiter.urgent), so it goes right after the exchange however slow the pace.
   */
  async current(_method?: string, _path?: string, _route?: string, stop?: AbortSignal): Promise<CurrentToken> {
    if (this.#lost !== undefined) throw this.#lost;
    const access = this.#access;
    if (access === undefined) return this.#renew(stop);
    const now = this.#deps.now();
    // As ready() does: a renewal that fails now fails the request, whose token would not last.
    if (now >= access.sendUntil) return this.#renew(stop);
    if (now >= access.renewAt && this.#renewing === undefined && now >= this.#retryRenewalAt) {
      // Started by the request going out now, for the ones behind it: its stop is the renewal's.
      this.#renew(stop).catch((error: unknown) => {
        // A rejected or lost key fails the next request that needs a token; a renewal nobody
        // waited for any more was simply not sent; anything else is retried later.
        if (!(error instanceof CredentialError) && !wasStopped(error) && this.#access === access) this.#deferRenewal(error, access);
      });
    }
    return access;
  }

  async refresh(generation: number, _method?: string, _path?: string, _route?: string, stop?: AbortSignal): Promise<boolean> {
    if (this.#lost !== undefined) throw this.#lost;
    if (this.#access !== undefined && this.#access.generation > generation) return true;
    try {
      let next = await this.#renew(stop);
      // The renewal in flight had already handed out the token that was refused: one more.
      if (next.generation <= generation) next = await this.#renew(stop);
      return next.generation > generation;
    } catch (error) {
      // A rejected key is the answer to the 401; anything else leaves the 401 as it is.
      if (error instanceof CredentialError) throw error;
      return false;
    }
  }

  describeRejection(stage: RejectionStage): string {
    const from = `the integrator key in ${this.#place ?? 'AMSYNC_REFRESH_TOKEN'}`;
    if (stage === 'changed') return `token rejected (401): the service refused the access token from ${from}, and a renewed one too`;
    return `token rejected (401): the service refused the access token from ${from}, and it could not be renewed`;
  }

  /** A renewal failed (not a rejection) while the token can still be sent: keep it, try again later. */
  #deferRenewal(error: unknown, access: AccessToken): void {
    const now = this.#deps.now();
    this.#retryRenewalAt = now + Math.min(renewalRetryMs, Math.max(0, access.sendUntil - now) / 2);
    emitSafely(this.#deps.events, 'credential', { action: 'renewal_deferred', error: errorCodeOf(error) });
  }

  /**
   * One renewal at a time, joined by `stop`'s caller: when every caller has left on its own
   * stop (an interrupt), the exchange is not sent (nor retried); one already on the wire
   * finishes, and its rotated key is kept. One that was stopped is not joined: a new one starts.
   */
  #renew(stop?: AbortSignal): Promise<AccessToken> {
    let renewing = this.#renewing;
    let renewal = this.#renewal;
    if (renewing === undefined || renewal === undefined || renewal.stop.signal.aborted) {
      const started: Renewal = { stop: new AbortController(), waiting: 0, held: false, leave: [] };
      const promise: Promise<AccessToken> = this.#exchangeOnce(started.stop.signal).finally(() => {
        for (const leave of started.leave) leave();
        if (this.#renewing === promise) {
          this.#renewing = undefined;
          this.#renewal = undefined;
        }
      });
      [renewing, renewal] = [promise, started];
      this.#renewing = promise;
      this.#renewal = started;
    }
    join(renewal, stop);
    return renewing;
  }

  async #exchangeOnce(stop: AbortSignal): Promise<AccessToken> {
    let key = await this.#currentKey();
    if (key === this.#rejectedKey) throw this.#rejected(key, undefined);
    // When the attempt that was answered left (a renewal may retry for longer than a token
    // lives): the token's life counts from there.
    let sentAt = this.#deps.now();
    const onSent = (at: number): void => {
      sentAt = at;
    };
    let answer: TokenAnswer;
    try {
      answer = await this.#deps.exchange(key, stop, onSent);
    } catch (error) {
      if (!isRejection(error)) throw error;
      this.#rejectedKey = key;
      // The file may hold a newer key than the one in use (replaced after a revocation).
      const fromFile = this.#place === undefined ? undefined : await this.#readKeyFile().catch(() => undefined);
      if (fromFile === undefined || fromFile === key) throw this.#rejected(key, error);
      this.#adoptFileKey(fromFile);
      key = fromFile;
      try {
        answer = await this.#deps.exchange(key, stop, onSent);
      } catch (again) {
        if (!isRejection(again)) throw again;
        this.#rejectedKey = key;
        throw this.#rejected(key, again);
      }
    }
    const access = this.#accept(answer, sentAt);
    await this.#rotate(key, answer.refreshToken);
    return access;
  }

  /** The key to exchange: the file's when it changed from outside, else the one in use. */
  async #currentKey(): Promise<string> {
    if (this.#place === undefined) {
      if (this.#key === undefined || this.#key === '' || !headerSafe.test(this.#key)) {
        throw new CredentialError('integrator_key_unreadable', 'integrator key unusable: AMSYNC_REFRESH_TOKEN is empty or holds characters a key cannot have');
      }
      return this.#key;
    }
    let fromFile: string;
    try {
      fromFile = await this.#readKeyFile();
    } catch (error) {
      // The key in memory still works; the file is only where a restart finds it.
      if (this.#key !== undefined) return this.#key;
      throw error;
    }
    if (this.#key === undefined || fromFile !== this.#fileContent) this.#adoptFileKey(fromFile);
    return this.#key as string;
  }

  /** Where the key is kept (its file, or the store), for messages; undefined for AMSYNC_REFRESH_TOKEN. */
  get #place(): string | undefined {
    return this.#source.keyFile ?? this.#source.store?.describe;
  }

  async #readKeyFile(): Promise<string> {
    const store = this.#source.store;
    if (store !== undefined && this.#source.keyFile === undefined) {
      let text: string;
      try {
        text = await store.read();
      } catch (error) {
        throw new CredentialError('integrator_key_unreadable', `integrator key in ${store.describe} could not be read: ${error instanceof Error ? error.message : 'error'}`);
      }
      const value = text.trim();
      if (value === '' || !headerSafe.test(value)) throw new CredentialError('integrator_key_unreadable', `integrator key in ${store.describe} is empty or holds characters a key cannot have`);
      return value;
    }
    const file = this.#source.keyFile as string;
    let text: string;
    try {
      text = await this.#read(file);
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      throw new CredentialError('integrator_key_unreadable', `integrator key file ${file} could not be read (${typeof code === 'string' ? code : 'error'})`);
    }
    const value = text.trim();
    if (value === '' || !headerSafe.test(value)) {
      throw new CredentialError('integrator_key_unreadable', `integrator key file ${file} is empty or holds characters a key cannot have`);
    }
    return value;
  }

  #adoptFileKey(value: string): void {
    this.#fileContent = value;
    this.#key = this.#remember(value);
  }

  #accept(answer: TokenAnswer, sentAt: number): AccessToken {
    const ttlMs = answer.expiresInSeconds === undefined ? Number.POSITIVE_INFINITY : answer.expiresInSeconds * 1000;
    // Counted from when the request left: the service's clock started no earlier.
    this.#generation += 1;
    const expiresAt = sentAt + ttlMs;
    const access: AccessToken = {
      token: new Secret(this.#remember(answer.accessToken)),
      generation: this.#generation,
      renewAt: sentAt + ttlMs * (this.#deps.renewAtShare ?? 0.8),
      expiresAt,
      sendUntil: expiresAt - Math.min(ttlMs * sendMarginShare, maxSendMarginMs),
    };
    this.#access = access;
    this.#retryRenewalAt = 0;
    emitSafely(this.#deps.events, 'credential', { action: this.#generation === 1 ? 'exchanged' : 'renewed', expiresInSeconds: answer.expiresInSeconds });
    return access;
  }

  /**
   * A new refresh token: used from now on, and written back to the file it came from. One that
   * cannot be kept fails the renewal (and every request after it) unless `keepUnpersistedKey`.
   */
  async #rotate(used: string, next: string | undefined): Promise<void> {
    const file = this.#place;
    if (next === undefined || next === used) {
      // A write-back that failed is tried again at every renewal, rotated or not: fixing the
      // volume makes the daemon ready again (/readyz promises it).
      if (!this.#writeBack.ok && file !== undefined) await this.#persist(file, used);
      return;
    }
    this.#key = this.#remember(next);
    if (file === undefined) {
      this.#writeBack = { ok: false, error: 'no_key_file' };
      emitSafely(this.#deps.events, 'credential', { action: 'rotated', persisted: false, firstTime: !this.#warnedUnpersisted, kept: this.#deps.keepUnpersistedKey === true });
      this.#warnedUnpersisted = true;
      this.#loseUnlessKept(
        "the service rotated the key from AMSYNC_REFRESH_TOKEN, and an environment variable cannot be written back: the key there is replaced and stops working. Put a new integrator key from the service's UI in a file given with AMSYNC_REFRESH_TOKEN_FILE (--refresh-token-file), where each rotated key is written back",
      );
      return;
    }
    await this.#persist(file, next);
  }

  /** Writes the key in use to its file; one that cannot be kept fails the run unless `keepUnpersistedKey`. */
  async #persist(file: string, next: string): Promise<void> {
    const store = this.#source.keyFile === undefined ? this.#source.store : undefined;
    try {
      if (store !== undefined) await store.write(next);
      else await this.#write(file, `${next}\n`);
      this.#fileContent = next;
      this.#writeBack = { ok: true };
      emitSafely(this.#deps.events, 'credential', { action: 'rotated', persisted: true });
    } catch (error) {
      const code = errorCodeOf(error);
      this.#writeBack = { ok: false, error: code };
      emitSafely(this.#deps.events, 'credential', { action: 'write_back_failed', error: code, file, kept: this.#deps.keepUnpersistedKey === true });
      if (store !== undefined) {
        const why = error instanceof Error ? error.message : code;
        this.#loseUnlessKept(`the service rotated the key and amsync could not write the new one back to ${file} (${why}): the key there is replaced and stops working. ${store.fix}, then put a new integrator key from the service's UI in it`);
        return;
      }
      this.#loseUnlessKept(
        `the service rotated the key and amsync could not write the new one back to ${file} (${code}): the key in the file is replaced and stops working. Make the file writable (AMSYNC_REFRESH_TOKEN_FILE / --refresh-token-file: a file in a folder amsync can write), then put a new integrator key from the service's UI in it`,
      );
    }
  }

  /** A one-shot run ends here: going on would end with a key nobody has. */
  #loseUnlessKept(why: string): void {
    if (this.#deps.keepUnpersistedKey === true) return;
    // Built from a path and an errno code only: nothing to scrub.
    this.#lost = new CredentialError('integrator_key_not_persisted', `integrator key lost: ${why}`);
    throw this.#lost;
  }

  #rejected(key: string, error: ApiError | undefined): CredentialError {
    const where = this.#place ?? 'AMSYNC_REFRESH_TOKEN';
    let detail = 'the service refused it before';
    if (error !== undefined) {
      // `field type (msg)`, as the client words service errors elsewhere.
      const reasons = error.errors.map((e) => [e.field, e.type].filter(Boolean).join(' ') + (e.msg === undefined ? '' : ` (${e.msg})`)).filter((t) => t.trim() !== '');
      detail = `${error.method} ${error.path} answered ${error.status ?? 'an error'}${reasons.length > 0 ? `: ${reasons.slice(0, 3).join('; ')}` : ''}`;
    }
    emitSafely(this.#deps.events, 'credential', { action: 'rejected' });
    const message = `integrator key rejected: ${detail}; make a new integrator key in the service's UI and put it in ${where}`;
    return new CredentialError('integrator_key_rejected', redactText(message, [key, ...this.#seen]));
  }

  #remember(value: string): string {
    // Every output's one redaction step knows it from now on, in every encoding.
    registerSecret(value);
    this.#seen.delete(value);
    this.#seen.add(value);
    if (this.#seen.size > maxKnownValues) this.#seen.delete(this.#seen.values().next().value as string);
    return value;
  }
}

/** A caller joins a renewal: with a stop, until it fires; without, for good. The last to leave stops it. */
function join(renewal: Renewal, stop: AbortSignal | undefined): void {
  const leave = (reason: unknown): void => {
    if (!renewal.held && renewal.waiting === 0) renewal.stop.abort(reason);
  };
  if (stop === undefined) {
    renewal.held = true;
    return;
  }
  if (stop.aborted) return leave(stop.reason);
  renewal.waiting += 1;
  renewal.leave.push(
    onAbort(stop, () => {
      renewal.waiting -= 1;
      leave(stop.reason);
    }),
  );
}

/** The renewal was not sent (or not retried) because nobody waited for it any more. */
function wasStopped(error: unknown): boolean {
  return isApiError(error) && error.code === 'not_sent';
}

/** 400, 401 and 403 from the token endpoint: the service said no to the key itself. */
function isRejection(error: unknown): error is ApiError {
  return isApiError(error) && error.status !== undefined && [400, 401, 403].includes(error.status);
}

function errorCodeOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[A-Za-z][\w.-]{0,63}$/.test(code) ? code : 'error';
}
