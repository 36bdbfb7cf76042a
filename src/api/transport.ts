import { readFileSync } from 'node:fs';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { got, RequestError, TimeoutError, type Got } from 'got';
import type { SecretValue } from '../model/index.js';
import { ClientConfigError } from './client-config-error.js';
import type { HttpMethod } from './retry-policy.js';

export interface TransportOptions {
  /** Checked by checkBaseUrl, with a trailing slash. */
  readonly baseUrl: URL;
  /** Whole attempt, connection included. */
  readonly timeoutMs: number;
  readonly caFile?: string;
  readonly userAgent: string;
  /** Sockets kept per host; matches the limiter's concurrency. */
  readonly maxSockets: number;
  /** Largest answer body read, after decompression; past it the answer is abandoned. */
  readonly maxResponseBytes: number;
}

export interface WireRequest {
  readonly method: HttpMethod;
  /** Absolute path under the base URL, e.g. `/api/sshusers/7`. */
  readonly path: string;
  readonly searchParams?: Readonly<Record<string, string>>;
  /** JSON, already serialised (secrets revealed there and nowhere else). */
  readonly body?: string;
  /** Aborts the request in flight (a daemon run past its deadline). */
  readonly signal?: AbortSignal;
  /**
   * On a new connection, closed after the answer: the retry of a request with a body after a
   * 503/429, which may have been refused before its body was read (leaving the old
   * connection's state unknown), and which a balancer may have pinned to an overloaded node.
   */
  readonly freshConnection?: boolean;
}

type WireResponseHeaders = Readonly<Record<string, string | string[] | undefined>>;

const jsonContent = { 'content-type': 'application/json' } as const;

export type WireOutcome =
  | {
      readonly kind: 'response';
      readonly status: number;
      readonly headers: WireResponseHeaders;
      readonly body: string;
    }
  | {
      readonly kind: 'failure';
      readonly failure: 'network' | 'timeout';
      /** ECONNREFUSED, ECONNRESET, ETIMEDOUT, ... */
      readonly errorCode: string;
      /** false only when the request provably never reached the service. */
      readonly sent: boolean;
      /** The library's message; it names host and port, never headers. */
      readonly message: string;
    }
  | {
      /** The answer's body passed maxResponseBytes: reading stopped there. Never retried. */
      readonly kind: 'failure';
      readonly failure: 'too_large';
      readonly sent: true;
      readonly message: string;
      /** Body bytes read before it was abandoned (at most the limit and one chunk). */
      readonly bytesRead: number;
      /** The last chunk read: how far past the limit reading could go. */
      readonly lastChunkBytes: number;
    }
  | {
      /** The caller's signal aborted the request (it may have reached the service). */
      readonly kind: 'failure';
      readonly failure: 'cancelled';
      readonly sent: boolean;
      readonly message: string;
    };

// Failures that happen before a single byte of the request is written.
const beforeSendCodes = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL', 'EHOSTDOWN']);
const beforeSendTimeouts = new Set(['lookup', 'socket', 'connect', 'secureConnect']);
const connectTimeoutMs = 10_000;

function cancelled(sent: boolean): WireOutcome {
  return { kind: 'failure', failure: 'cancelled', sent, message: 'the request was cancelled (the run was abandoned)' };
}

function describeFailure(error: unknown): WireOutcome {
  if (error instanceof TimeoutError) {
    // Only a timeout of a phase before sending proves nothing left; a whole-request timeout
    // may have struck after the service got the request, so it counts as sent.
    const sent = !beforeSendTimeouts.has(error.event);
    return { kind: 'failure', failure: 'timeout', errorCode: 'ETIMEDOUT', sent, message: error.message };
  }
  if (error instanceof RequestError) {
    const code = error.code || 'ERR_UNKNOWN';
    // Anything else (a reset included) may have reached the service: assume it did.
    return { kind: 'failure', failure: 'network', errorCode: code, sent: !beforeSendCodes.has(code), message: error.message };
  }
  const code = (error as { code?: unknown } | null)?.code;
  return {
    kind: 'failure',
    failure: 'network',
    errorCode: typeof code === 'string' ? code : 'ERR_UNKNOWN',
    sent: true,
    message: error instanceof Error ? error.message : String(error),
  };
}

function mebibytes(bytes: number): string {
  const mib = bytes / (1024 * 1024);
  return mib >= 1 ? `${Number.isInteger(mib) ? mib : mib.toFixed(1)} MiB` : `${bytes} bytes`;
}

/**
 * The path and query relative to the base URL. Built here rather than through got's
 * `searchParams` option, which costs a URLSearchParams and a URL re-parse per request
 * (measured on the 2,000 pages of a 100k listing).
 */
function relativeUrl(request: WireRequest): string {
  const path = request.path.startsWith('/') ? request.path.slice(1) : request.path;
  if (request.searchParams === undefined) return path;
  let query = '';
  for (const [name, value] of Object.entries(request.searchParams)) query += `${query === '' ? '?' : '&'}${encodeURIComponent(name)}=${encodeURIComponent(value)}`;
  return path + query;
}

function readCa(caFile: string): Buffer {
  try {
    return readFileSync(caFile);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw new ClientConfigError('ca_file', `CA file ${caFile} could not be read (${typeof code === 'string' ? code : 'error'})`);
  }
}

/** got's options that do not depend on the service: one instance serves every client with the same ones. */
interface SharedGotOptions {
  readonly timeoutMs: number;
  readonly userAgent: string;
  readonly ca: Buffer | undefined;
}

/**
 * got instances by their options. got.extend validates and merges every option (~0.2 ms of CPU):
 * a fleet of 2,000 targets with the same settings built 2,000 identical instances. The base
 * URL and the agents, which are each service's own, are given per request instead. Bounded:
 * settings are few; a daemon reloading a changed CA file does not keep the old ones forever.
 */
const sharedGots = new Map<string, Got>();
const maxSharedGots = 16;

function sharedGot(options: SharedGotOptions): Got {
  const key = JSON.stringify([options.timeoutMs, options.userAgent, options.ca?.toString('base64') ?? null]);
  const known = sharedGots.get(key);
  if (known !== undefined) return known;
  if (sharedGots.size >= maxSharedGots) sharedGots.clear();
  const instance = got.extend({
    headers: { accept: 'application/json', 'user-agent': options.userAgent },
    // A separate connect timeout proves a request was never sent (so even a POST may be
    // repeated); it only makes sense when it is shorter than the whole-request timeout.
    timeout: options.timeoutMs > connectTimeoutMs ? { connect: connectTimeoutMs, request: options.timeoutMs } : { request: options.timeoutMs },
    retry: { limit: 0 },
    followRedirect: false,
    throwHttpErrors: false,
    http2: false,
    // Verification stays on; a private CA is added, never a way around it.
    https: { rejectUnauthorized: true, ...(options.ca === undefined ? {} : { certificateAuthority: options.ca }) },
  });
  sharedGots.set(key, instance);
  return instance;
}

type Agents = { http: HttpAgent } | { https: HttpsAgent };

/**
 * One service's connections: got's own retry is off (retries are decided by the pure policy and
 * paced by the limiter), redirects are not followed (a redirect would carry the token to another
 * URL, and so the scheme never changes: one agent of the base URL's scheme is all a service
 * needs), HTTP errors are answers, not exceptions, and bodies stay text until the client's
 * schemas parse them.
 */
export class Transport {
  readonly #got: Got;
  readonly #base: string;
  readonly #https: boolean;
  readonly #maxSockets: number;
  readonly #maxResponseBytes: number;
  /** Keep-alive, made on the first request (a fleet builds thousands of clients). */
  #agents: Agents | undefined;
  /** Without keep-alive: every request on a connection of its own (see WireRequest.freshConnection). */
  #freshAgents: Agents | undefined;

  constructor(options: TransportOptions) {
    this.#maxResponseBytes = options.maxResponseBytes;
    this.#maxSockets = options.maxSockets;
    this.#base = options.baseUrl.href;
    this.#https = options.baseUrl.protocol === 'https:';
    const ca = options.caFile === undefined ? undefined : readCa(options.caFile);
    this.#got = sharedGot({ timeoutMs: options.timeoutMs, userAgent: options.userAgent, ca });
  }

  #agentsFor(fresh: boolean): Agents {
    const options = fresh ? { keepAlive: false } : { keepAlive: true, maxSockets: this.#maxSockets };
    const make = (): Agents => (this.#https ? { https: new HttpsAgent(options) } : { http: new HttpAgent(options) });
    if (fresh) return (this.#freshAgents ??= make());
    return (this.#agents ??= make());
  }

  /**
   * One attempt, through got's stream interface: the body is read as it arrives and abandoned
   * past maxResponseBytes (got has no such option), so an answer that streams without end
   * costs at most the limit and one chunk of memory. The stream interface rather than the
   * promise one: the promise wrapper (a cancelable promise, a buffering of the body and a
   * progress listener to bound it) cost ~0.15 ms of CPU per request, a fifth of a 2,000-page
   * listing's (docs/performance.md). `token` undefined: no Authorization header (the token
   * endpoint).
   */
  send(request: WireRequest, token: SecretValue | undefined): Promise<WireOutcome> {
    if (request.signal?.aborted) return Promise.resolve(cancelled(false));
    const limit = this.#maxResponseBytes;
    const stream = this.#got.stream(this.#base + relativeUrl(request), {
      method: request.method,
      agent: this.#agentsFor(request.freshConnection === true),
      headers: token === undefined ? (request.body === undefined ? {} : jsonContent) : { authorization: `Bearer ${token.reveal()}`, ...(request.body === undefined ? {} : jsonContent) },
      ...(request.body === undefined ? {} : { body: request.body }),
      ...(request.signal === undefined ? {} : { signal: request.signal }),
    });
    // A stream request ends by itself when it has a body or cannot have one (GET); a DELETE
    // without one is ended here.
    if (request.body === undefined && request.method !== 'GET') stream.end();
    return new Promise<WireOutcome>((resolve) => {
      let sent = false;
      let settled = false;
      let status = 0;
      let headers: WireResponseHeaders = {};
      const chunks: Buffer[] = [];
      let bytesRead = 0;
      const settle = (outcome: WireOutcome): void => {
        if (settled) return;
        settled = true;
        resolve(outcome);
      };
      const tooLarge = (message: string, lastChunkBytes: number): void => {
        settle({ kind: 'failure', failure: 'too_large', sent: true, message: `${message} the limit of ${mebibytes(limit)} (http.maxResponseBytes); it was not read further`, bytesRead, lastChunkBytes });
        chunks.length = 0;
        stream.destroy();
      };
      stream.once('request', () => {
        sent = true;
      });
      stream.once('response', (response: { statusCode: number; headers: WireResponseHeaders }) => {
        status = response.statusCode;
        headers = response.headers;
        // A body announced too large is not read at all.
        const declared = Number(headers['content-length']);
        if (declared > limit) tooLarge(`the answer announced ${mebibytes(declared)}, above`, 0);
      });
      stream.on('data', (chunk: Buffer) => {
        if (settled) return;
        bytesRead += chunk.length;
        if (bytesRead > limit) return tooLarge('the answer passed', chunk.length);
        chunks.push(chunk);
      });
      stream.once('end', () => {
        settle({ kind: 'response', status, headers, body: chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks, bytesRead).toString('utf8') });
      });
      // Kept after settling: a stream destroyed past the limit may still report an error.
      stream.on('error', (error: unknown) => {
        if (request.signal?.aborted) return settle(cancelled(sent));
        settle(describeFailure(error));
      });
    });
  }

  close(): void {
    for (const agents of [this.#agents, this.#freshAgents]) {
      for (const agent of Object.values(agents ?? {}) as (HttpAgent | HttpsAgent)[]) agent.destroy();
    }
  }
}
