import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A small, independent and misbehaving fake of the service on 127.0.0.1, for what the
 * project's own emulator cannot do: answer without end, shift a listing between pages, hand
 * out a fresh cursor forever, never answer. It shares nothing with src/ (STYLE.md: test
 * against what you did not write). Each test gives the handler; the server records what came.
 */

export interface Arrival {
  readonly method: string;
  readonly path: string;
  readonly query: Record<string, string>;
}

export type HostileHandler = (req: IncomingMessage, res: ServerResponse, arrival: Arrival) => void;

export interface HostileServer {
  readonly url: string;
  readonly arrivals: Arrival[];
  close(): Promise<void>;
}

export async function startHostileServer(handler: HostileHandler): Promise<HostileServer> {
  const arrivals: Arrival[] = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const arrival = { method: req.method ?? '?', path: url.pathname, query: Object.fromEntries(url.searchParams) };
    arrivals.push(arrival);
    req.resume();
    req.on('end', () => handler(req, res, arrival));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    arrivals,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Answers 200 JSON. */
export function json(res: ServerResponse, body: unknown, status = 200): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/**
 * A 200 JSON answer that never ends: `prefix`, then `chunk` again and again (honouring
 * backpressure, so the server's own memory stays flat) until the client hangs up. `written`
 * counts the bytes handed to the socket.
 */
export function streamForever(res: ServerResponse, prefix: string, chunk: string, written: { bytes: number } = { bytes: 0 }): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  const piece = Buffer.from(chunk.repeat(Math.max(1, Math.floor(16_384 / chunk.length))));
  res.write(prefix);
  written.bytes += Buffer.byteLength(prefix);
  const pump = (): void => {
    while (!res.destroyed && !res.writableEnded) {
      written.bytes += piece.length;
      if (!res.write(piece)) {
        res.once('drain', pump);
        return;
      }
    }
  };
  res.on('close', () => res.removeAllListeners('drain'));
  pump();
}

/** The page cursor object of the service. */
export function cursor(current: number | string, next: number | string | null, previous: number | string | null = null) {
  return { current, next, previous };
}
