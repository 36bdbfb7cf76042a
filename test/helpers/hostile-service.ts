import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { echoEverywhere } from './encodings.js';

/**
 * A small, independent and misbehaving fake of the service (node:http on 127.0.0.1): it
 * shares no code or assumption with amsync or its emulator. It lists what it is given, and
 * answers writes as the test says, typically with error bodies that echo the request body and
 * every secret it knows, in every encoding (test/helpers/encodings.ts).
 */

export interface HostileUser {
  readonly id: number;
  readonly username: string;
  readonly level: string;
}

export interface HostileApikey {
  readonly id: number;
  readonly name: string;
  readonly superuser?: boolean;
  readonly roles?: readonly number[];
  readonly token: string;
}

export interface SeenRequest {
  readonly method: string;
  /** Path without the query. */
  readonly path: string;
  readonly authorization: string | undefined;
  readonly body: string;
}

export interface HostileAnswer {
  readonly status: number;
  readonly body: string;
  /** @default application/json */
  readonly contentType?: string;
}

export interface HostileOptions {
  /** The bearer token it accepts (anything else: 401). */
  readonly token: string;
  readonly sshUsers?: readonly HostileUser[];
  readonly apikeys?: readonly HostileApikey[];
  /** How a write (POST, PUT, DELETE) is answered; undefined: as the real service would. */
  readonly answerWrite?: (request: SeenRequest) => HostileAnswer | undefined;
}

export interface HostileService {
  readonly url: string;
  /** Every request received, in order. */
  readonly requests: SeenRequest[];
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, answer: HostileAnswer): void {
  res.writeHead(answer.status, { 'content-type': answer.contentType ?? 'application/json' });
  res.end(answer.body);
}

const json = (status: number, value: unknown): HostileAnswer => ({ status, body: JSON.stringify(value) });

function apikeyJson(k: HostileApikey): Record<string, unknown> {
  return { id: k.id, name: k.name, superuser: k.superuser ?? false, roles: (k.roles ?? []).map((id) => ({ id, name: `role-${id}` })), token: k.token };
}

function ordinaryAnswer(request: SeenRequest, options: HostileOptions): HostileAnswer {
  const { method, path } = request;
  if (method === 'GET' && path === '/api/sshusers') return json(200, { cursor: { current: 0, next: null, previous: null }, users: options.sshUsers ?? [] });
  if (method === 'GET' && path === '/api/3rdparty/apikeys') {
    return json(200, { cursor: { current: 0, next: null, previous: null }, apikeys: (options.apikeys ?? []).map(apikeyJson) });
  }
  const body = request.body === '' ? {} : (JSON.parse(request.body) as Record<string, unknown>);
  const id = Number(path.split('/').pop());
  if (path.startsWith('/api/sshusers')) {
    if (method === 'POST') return json(200, { id: 900, username: body.username, level: body.level });
    if (method === 'PUT') return json(200, { id, username: body.username ?? 'x', level: body.level ?? 'n1' });
    return json(200, {});
  }
  if (method === 'POST') return json(200, apikeyJson({ id: 901, name: String(body.name), token: 'hostile-new-token-0f3e91' }));
  if (method === 'PUT') return json(200, apikeyJson({ id, name: String(body.name ?? 'x'), token: 'hostile-put-token-77ab20' }));
  return json(200, {});
}

export async function startHostileService(options: HostileOptions): Promise<HostileService> {
  const requests: SeenRequest[] = [];
  const server = createServer((req, res) => {
    void (async () => {
      const request: SeenRequest = {
        method: req.method ?? 'GET',
        path: new URL(req.url ?? '/', 'http://127.0.0.1').pathname,
        authorization: req.headers.authorization,
        body: await readBody(req),
      };
      requests.push(request);
      if (request.authorization !== `Bearer ${options.token}`) return send(res, json(401, { errors: [{ type: 'invalid', msg: 'who are you' }] }));
      const special = request.method === 'GET' ? undefined : options.answerWrite?.(request);
      send(res, special ?? ordinaryAnswer(request, options));
    })().catch(() => {
      res.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Error bodies a careless service sends, each quoting `request` (the body it was sent) and
 * `secrets` in every encoding.
 */
export const echoingBodies = {
  /** `{"errors": [...]}` whose messages quote everything: the structured shape. */
  structured(request: string, secrets: readonly string[]): string {
    return JSON.stringify({
      errors: [
        { field: 'password', type: 'rule', msg: `rejected ${request}: ${echoEverywhere(secrets)}` },
        { field: 'username', type: 'invalid', msg: `you sent ${JSON.stringify(request)}` },
      ],
    });
  },
  /** JSON of another shape: the request quoted as a string (JSON-escaped twice over). */
  otherJson(request: string, secrets: readonly string[]): string {
    return JSON.stringify({ error: 'internal', request, echo: echoEverywhere(secrets) });
  },
  /** A text or HTML page from a proxy. */
  text(request: string, secrets: readonly string[]): string {
    return `<html><body>upstream failed for ${request}<br>${echoEverywhere(secrets)}</body></html>`;
  },
};
