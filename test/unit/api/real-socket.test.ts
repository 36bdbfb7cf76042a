import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createClient, type AmClient, type RetryEvent } from '../../../src/api/index.js';
import { Secret } from '../../../src/secrets/secret.js';

/**
 * Behaviour that only a real socket shows faithfully (nock answers the connection and the
 * response as one): a response lost after the request arrived, a reset mid-request, and an
 * interim 102. A tiny node:http server on 127.0.0.1 counts what really arrived.
 */

type Handler = (req: IncomingMessage, res: ServerResponse, count: number) => void;

let server: Server | undefined;
let client: AmClient | undefined;

afterEach(async () => {
  client?.close();
  client = undefined;
  const s = server;
  server = undefined;
  if (s) {
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }
});

async function serve(handler: Handler): Promise<{ url: string; arrived: () => string[] }> {
  const arrived: string[] = [];
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      arrived.push(`${req.method} ${req.url}`);
      handler(req, res, arrived.length);
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, arrived: () => [...arrived] };
}

function connect(url: string, timeoutMs = 300): AmClient {
  client = createClient({ url, token: new Secret('real-socket-token'), timeoutMs, initialRate: 1000, random: () => 0.5, retry: { baseDelayMs: 1, maxDelayMs: 5 } });
  return client;
}

const user = { id: 7, username: 'deploy', level: 'n1' };

describe('a POST whose response is lost is sent exactly once', () => {
  it('the service took the request and never answered: unknown_outcome', async () => {
    const service = await serve(() => {
      // Never answer: the response is lost.
    });
    const c = connect(service.url);
    const error = await c.createSshUser({ username: 'deploy', level: 'n1', password: new Secret('pw-canary-31337') }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'unknown_outcome', method: 'POST', path: '/api/sshusers', attempts: 1 });
    expect(service.arrived()).toEqual(['POST /api/sshusers']);
  });

  it('the connection was reset after the request arrived: unknown_outcome', async () => {
    const service = await serve((req) => req.socket.destroy());
    const c = connect(service.url);
    await expect(c.createApikey({ name: 'k' })).rejects.toMatchObject({ code: 'unknown_outcome', attempts: 1 });
    expect(service.arrived()).toEqual(['POST /api/3rdparty/apikeys']);
  });

  it('a GET in the same situation is simply retried', async () => {
    const service = await serve((req, res, count) => {
      if (count === 1) return;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(user));
    });
    const c = connect(service.url);
    await expect(c.fetchSshUser(7)).resolves.toMatchObject({ id: 7 });
    expect(service.arrived()).toEqual(['GET /api/sshusers/7', 'GET /api/sshusers/7']);
  });
});

describe('102 Processing', () => {
  it('an interim 102 followed by the answer is one request', async () => {
    const service = await serve((_req, res) => {
      res.writeProcessing();
      setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(user)), 20);
    });
    const c = connect(service.url);
    await expect(c.fetchSshUser(7)).resolves.toMatchObject({ id: 7 });
    expect(service.arrived()).toHaveLength(1);
  });

  it('a 102 with no answer after it times out, and the GET is retried', async () => {
    const service = await serve((_req, res, count) => {
      if (count === 1) res.writeProcessing();
      else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(user));
    });
    const c = connect(service.url);
    const retries: RetryEvent[] = [];
    c.events.on('retry', (event) => retries.push(event));
    await expect(c.fetchSshUser(7)).resolves.toMatchObject({ id: 7 });
    expect(retries).toEqual([expect.objectContaining({ reason: 'timeout' })]);
  });
});

describe('nothing listening', () => {
  it('a refused connection is retried even for a POST, then ends as network', async () => {
    const service = await serve(() => undefined);
    const url = service.url;
    await new Promise<void>((resolve) => server!.close(() => resolve()));
    server = undefined;
    const c = connect(url);
    const retries: RetryEvent[] = [];
    c.events.on('retry', (event) => retries.push(event));
    const error = await c.createSshUser({ username: 'a', level: 'n1', password: new Secret('pw-canary-31337') }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'network', attempts: 8 });
    expect((error as Error).cause).toMatchObject({ code: 'ECONNREFUSED' });
    expect(retries).toHaveLength(7);
  });
});

describe('after a 503 or 429, a request with a body is retried on a new connection', () => {
  /** A server that refuses the first request with `status` and answers the rest; notes each request's connection. */
  async function refuseFirst(status: number, body: unknown): Promise<{ url: string; connections: () => number[]; closing: () => boolean[] }> {
    const ports: number[] = [];
    const closing: boolean[] = [];
    const service = await serve((req, res, count) => {
      ports.push(req.socket.remotePort ?? -1);
      closing.push(req.headers.connection === 'close');
      if (count === 1) res.writeHead(status, { 'retry-after': '0', 'content-type': 'application/json' }).end('{"errors":[]}');
      else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
    return { url: service.url, connections: () => [...ports], closing: () => [...closing] };
  }

  it('a POST refused with 503 is sent again on a connection of its own', async () => {
    const service = await refuseFirst(503, user);
    const c = connect(service.url, 5000);
    await expect(c.createSshUser({ username: 'deploy', level: 'n1', password: new Secret('pw-canary-31337') })).resolves.toMatchObject({ id: 7 });
    const [first, second] = service.connections();
    expect(second).not.toBe(first);
    // ... which is closed after the answer, not kept for the next request.
    expect(service.closing()).toEqual([false, true]);
  });

  it('a PUT refused with 429 too', async () => {
    const service = await refuseFirst(429, user);
    const c = connect(service.url, 5000);
    await expect(c.updateSshUser(7, { level: 'n1' })).resolves.toMatchObject({ id: 7 });
    const [first, second] = service.connections();
    expect(second).not.toBe(first);
  });

  it('a GET (no body) keeps its connection', async () => {
    const service = await refuseFirst(503, user);
    const c = connect(service.url, 5000);
    await expect(c.fetchSshUser(7)).resolves.toMatchObject({ id: 7 });
    const [first, second] = service.connections();
    expect(second).toBe(first);
    expect(service.closing()).toEqual([false, false]);
  });
});
