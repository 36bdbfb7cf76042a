import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { closedPort } from './ports.js';

export interface ReceivedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  /** The exact bytes received. */
  readonly body: Buffer;
}

/** How the receiver answers its n-th request (0-based): a status, or `hang` (never answer). */
export type Answer = number | { readonly status: number; readonly headers?: Record<string, string> } | 'hang';

/**
 * A webhook receiver on 127.0.0.1, for the notifier's tests: it keeps every request (raw body
 * included) and answers as told. Waiting is on events (the n-th request arrived), never on time.
 */
export class WebhookReceiver {
  readonly requests: ReceivedRequest[] = [];
  #answer: (index: number) => Answer;
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  readonly #hanging = new Set<ServerResponse>();
  readonly #waiters: { count: number; resolve: () => void }[] = [];

  private constructor(answer: (index: number) => Answer) {
    this.#answer = answer;
    this.#server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const index = this.requests.length;
        this.requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) });
        const answer = this.#answer(index);
        if (answer === 'hang') this.#hanging.add(res);
        else {
          const { status, headers } = typeof answer === 'number' ? { status: answer, headers: {} } : answer;
          res.writeHead(status, { 'content-type': 'text/plain', ...headers }).end('ok');
        }
        for (const waiter of this.#waiters.filter((w) => this.requests.length >= w.count)) {
          this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
          waiter.resolve();
        }
      });
    });
    this.#server.on('connection', (socket) => {
      this.#sockets.add(socket);
      socket.on('close', () => this.#sockets.delete(socket));
    });
  }

  static async start(answer: (index: number) => Answer = () => 200): Promise<WebhookReceiver> {
    const receiver = new WebhookReceiver(answer);
    await new Promise<void>((resolve) => receiver.#server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  set answer(answer: (index: number) => Answer) {
    this.#answer = answer;
  }

  url(path = '/hook'): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}${path}`;
  }

  /** Resolves once `count` requests have arrived. */
  received(count: number): Promise<void> {
    if (this.requests.length >= count) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ count, resolve }));
  }

  async close(): Promise<void> {
    for (const res of this.#hanging) res.destroy();
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

/** A URL on 127.0.0.1 where nothing listens: connections are refused. */
export async function refusingUrl(): Promise<string> {
  return `http://127.0.0.1:${await closedPort()}/hook`;
}
