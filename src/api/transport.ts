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

export type WireOutcome =
  | {
      readonly kind: 'response';
      readonly status: number;
      readonly headers: Readonly<Record<string, string | string[] | undefined>>;
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

/**
 * One got instance per service. got's own retry is off (retries are decided by the pure
 * policy and paced by the limiter), redirects are not followed (a redirect would carry the
 * token to another URL), HTTP errors are answers, not exceptions, and bodies stay text until
 * the client's schemas parse them.
 */
export class Transport {
  readonly #got: Got;
  readonly #agents: { http: HttpAgent; https: HttpsAgent };
  readonly #maxResponseBytes: number;
  /** Without keep-alive: every request on a connection of its own (see WireRequest.freshConnection). */
  readonly #freshAgents: { http: HttpAgent; https: HttpsAgent };

  constructor(options: TransportOptions) {
    this.#maxResponseBytes = options.maxResponseBytes;
    const ca = options.caFile === undefined ? undefined : readCa(options.caFile);
    this.#agents = {
      http: new HttpAgent({ keepAlive: true, maxSockets: options.maxSockets }),
      https: new HttpsAgent({ keepAlive: true, maxSockets: options.maxSockets }),
    };
    this.#freshAgents = { http: new HttpAgent({ keepAlive: false }), https: new HttpsAgent({ keepAlive: false }) };
    this.#got = got.extend({
      prefixUrl: options.baseUrl.href,
      headers: { accept: 'application/json', 'user-agent': options.userAgent },
      // A separate connect timeout proves a request was never sent (so even a POST may be
      // repeated); it only makes sense when it is shorter than the whole-request timeout.
      timeout: options.timeoutMs > connectTimeoutMs ? { connect: connectTimeoutMs, request: options.timeoutMs } : { request: options.timeoutMs },
      retry: { limit: 0 },
      followRedirect: false,
      throwHttpErrors: false,
      responseType: 'text',
      http2: false,
      agent: this.#agents,
      // Verification stays on; a private CA is added, never a way around it.
      https: { rejectUnauthorized: true, ...(ca === undefined ? {} : { certificateAuthority: ca }) },
    });
  }

  /**
   * One attempt. The body is read as it arrives and abandoned past maxResponseBytes (got has no
   * such option; its documented way is a downloadProgress listener that aborts the request):
   * an answer that streams without end costs at most the limit and one chunk of memory.
   * `token` undefined: no Authorization header (the token endpoint).
   */
  async send(request: WireRequest, token: SecretValue | undefined): Promise<WireOutcome> {
    if (request.signal?.aborted) return cancelled(false);
    const limit = this.#maxResponseBytes;
    const limiter = new AbortController();
    const overflow = { bytesRead: 0, lastChunkBytes: 0, declared: undefined as number | undefined };
    const signal = request.signal === undefined ? limiter.signal : AbortSignal.any([limiter.signal, request.signal]);
    let sent = false;
    try {
      const pending = this.#got(relativeUrl(request), {
        method: request.method,
        headers: {
          ...(token === undefined ? {} : { authorization: `Bearer ${token.reveal()}` }),
          ...(request.body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(request.body === undefined ? {} : { body: request.body }),
        signal,
        ...(request.freshConnection === true ? { agent: this.#freshAgents } : {}),
      });
      pending.on('request', () => {
        sent = true;
      });
      let previous = 0;
      pending.on('downloadProgress', (progress: { transferred: number; total?: number }) => {
        if (limiter.signal.aborted) return;
        // The first report comes with the headers: a body announced too large is not read at all.
        if (progress.total !== undefined && progress.total > limit) {
          overflow.declared = progress.total;
          limiter.abort();
          return;
        }
        overflow.lastChunkBytes = progress.transferred - previous;
        previous = progress.transferred;
        if (progress.transferred > limit) {
          overflow.bytesRead = progress.transferred;
          limiter.abort();
        }
      });
      const response = await pending;
      return { kind: 'response', status: response.statusCode, headers: response.headers, body: response.body };
    } catch (error) {
      if (limiter.signal.aborted) {
        const what = overflow.declared === undefined ? 'the answer passed' : `the answer announced ${mebibytes(overflow.declared)}, above`;
        return {
          kind: 'failure',
          failure: 'too_large',
          sent: true,
          message: `${what} the limit of ${mebibytes(limit)} (http.maxResponseBytes); it was not read further`,
          bytesRead: overflow.bytesRead,
          lastChunkBytes: overflow.lastChunkBytes,
        };
      }
      if (request.signal?.aborted) return cancelled(sent);
      return describeFailure(error);
    }
  }

  close(): void {
    for (const agent of [this.#agents.http, this.#agents.https, this.#freshAgents.http, this.#freshAgents.https]) agent.destroy();
  }
}
