import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../obs/index.js';
import { renderStatusHtml, renderStatusJson, statusPageStyle, type StatusSnapshot } from '../report/index.js';
import { scrub } from '../secrets/index.js';
import { DaemonError } from './daemon-error.js';
import { listenUrl, type ListenAddress } from './listen-address.js';
import type { Readiness } from './readiness.js';

export interface HealthServerOptions {
  readonly address: ListenAddress;
  /** Current readiness, computed on each request. */
  readiness(): Readiness;
  /** Fleet: /readyz answers JSON, `{ready, reason, ...this}` (each target's readiness). */
  readinessJson?(): Record<string, unknown>;
  /** Whether the process is alive (/healthz): not while a run abandoned at its deadline hangs on. */
  liveness(): Readiness;
  /** The Prometheus exposition text. */
  metrics(): Promise<{ contentType: string; body: string }>;
  /** The status page's facts (/status, /status.json); absent: no status page. */
  status?(): Promise<StatusSnapshot>;
  readonly logger: Logger;
}

/**
 * The status page's policy: nothing loads, runs or submits, except the page's own style sheet,
 * allowed by its hash. The page needs no script; a script slipped into it would not run.
 */
export const statusPageCsp = `default-src 'none'; style-src 'sha256-${createHash('sha256').update(statusPageStyle).digest('base64')}'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;

/** Headers of the status page and its JSON, besides the type. */
const statusHeaders = { 'Content-Security-Policy': statusPageCsp, 'X-Content-Type-Options': 'nosniff', 'Referrer-Policy': 'no-referrer', 'X-Frame-Options': 'DENY' };

export interface HealthServer {
  /** `http://HOST:PORT` with the port actually bound. */
  readonly url: string;
  close(): Promise<void>;
}

/**
 * `/healthz` (the process answers and no run is wedged past its deadline), `/readyz` (200 or
 * 503 with the reason), `/metrics`, and the status page `/status` (HTML) with `/status.json`.
 * Plain node:http: a few read-only routes need no framework, and nothing here reads a body.
 */
export async function startHealthServer(options: HealthServerOptions): Promise<HealthServer> {
  const { logger } = options;
  const server = createServer((req, res) => {
    handle(options, req, res).catch((error: unknown) => {
      logger.warn({ err: { message: (error as Error).message } }, 'health endpoint failed');
      if (!res.headersSent) send(res, 500, 'text/plain; charset=utf-8', 'internal error\n');
      else res.destroy();
    });
  });
  // Probes and scrapers open short connections; none may hold the process at shutdown.
  server.keepAliveTimeout = 5_000;
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      const where = `${options.address.host}:${options.address.port}`;
      const hint = error.code === 'EADDRINUSE' ? ' (the address is in use; pick another with --listen HOST:PORT)' : '';
      reject(new DaemonError('daemon_listen', `Cannot listen on ${where}: ${error.code ?? error.message}${hint}`, { cause: error }));
    });
    server.listen(options.address.port, options.address.host, () => resolve());
  });
  server.on('error', (error) => logger.warn({ err: { message: error.message } }, 'health endpoint error'));
  const port = (server.address() as AddressInfo).port;
  return {
    url: listenUrl(options.address.host, port),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function handle(options: HealthServerOptions, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = (req.url ?? '/').split('?', 1)[0];
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('Allow', 'GET, HEAD');
    send(res, 405, 'text/plain; charset=utf-8', 'method not allowed\n');
    return;
  }
  switch (path) {
    case '/healthz':
    case '/livez': {
      const l = options.liveness();
      send(res, l.ready ? 200 : 503, 'text/plain; charset=utf-8', l.ready ? 'ok\n' : `not ok: ${l.reason}\n`);
      return;
    }
    case '/readyz': {
      const r = options.readiness();
      if (options.readinessJson) {
        send(res, r.ready ? 200 : 503, 'application/json; charset=utf-8', `${JSON.stringify({ ready: r.ready, reason: r.reason, ...options.readinessJson() }, null, 2)}\n`);
        return;
      }
      send(res, r.ready ? 200 : 503, 'text/plain; charset=utf-8', `${r.ready ? 'ready' : 'not ready'}: ${r.reason}\n`);
      return;
    }
    case '/metrics': {
      const { contentType, body } = await options.metrics();
      send(res, 200, contentType, body);
      return;
    }
    case '/status':
    case '/status.json': {
      if (!options.status) break;
      const snapshot = await options.status();
      if (path === '/status') send(res, 200, 'text/html; charset=utf-8', renderStatusHtml(snapshot), statusHeaders);
      else send(res, 200, 'application/json; charset=utf-8', renderStatusJson(snapshot), statusHeaders);
      return;
    }
  }
  send(res, 404, 'text/plain; charset=utf-8', options.status ? 'not found: try /healthz, /readyz, /metrics, /status or /status.json\n' : 'not found: try /healthz, /readyz or /metrics\n');
}

function send(res: ServerResponse, status: number, contentType: string, text: string, headers: Readonly<Record<string, string>> = {}): void {
  // Whatever a reason or a label was built from, the one redaction step runs on every answer.
  const body = scrub(text);
  res.writeHead(status, { ...headers, 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(body), 'Cache-Control': 'no-store' });
  res.end(res.req.method === 'HEAD' ? undefined : body);
}

