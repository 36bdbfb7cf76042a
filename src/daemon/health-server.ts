import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../obs/index.js';
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
  readonly logger: Logger;
}

export interface HealthServer {
  /** `http://HOST:PORT` with the port actually bound. */
  readonly url: string;
  close(): Promise<void>;
}

/**
 * `/healthz` (the process answers and no run is wedged past its deadline), `/readyz` (200 or
 * 503 with the reason), `/metrics`.
 * Plain node:http: three read-only routes need no framework, and nothing here reads a body.
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
    default:
      send(res, 404, 'text/plain; charset=utf-8', 'not found: try /healthz, /readyz or /metrics\n');
  }
}

function send(res: ServerResponse, status: number, contentType: string, text: string): void {
  // Whatever a reason or a label was built from, the one redaction step runs on every answer.
  const body = scrub(text);
  res.writeHead(status, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(body), 'Cache-Control': 'no-store' });
  res.end(res.req.method === 'HEAD' ? undefined : body);
}
