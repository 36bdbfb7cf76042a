import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { anotherClient, handleApi, type ApiDeps } from './api-handler.js';
import { authenticate, bearerToken, expireToken, type TokenSets } from './auth.js';
import { handleControl, isControlPath, type ControlDeps } from './control-handler.js';
import { echoReply } from './echo.js';
import type { FaultController, FaultPlan } from './faults.js';
import type { Holds } from './holds.js';
import { TOKEN_PATH, type OAuthIssuer } from './oauth.js';
import { oneError, type Reply } from './reply.js';
import type { RequestLog } from './request-log.js';
import { resolveRoute } from './routes.js';

/** Bodies above this are refused; the service's own limit is not documented. */
const MAX_BODY_BYTES = 1024 * 1024;

export interface HttpContext {
  control: boolean;
  /**
   * Where this service sits on the server: '' for a lone emulator, `/t/<name>` for a tenant.
   * The handler sees paths without it (routes, fault rules and the request log are the
   * service's own); what is shown to the client (error messages, echoes) carries it.
   */
  pathPrefix: string;
  tokens: TokenSets;
  /** The token endpoint (integrator keys); it needs no bearer token. */
  oauth: OAuthIssuer;
  faults: FaultController;
  /** Requests a `hold` rule keeps waiting until a test releases them. */
  holds: Holds;
  log: RequestLog;
  api: ApiDeps;
  controlDeps: ControlDeps;
  /** API requests arrived and not answered yet (chaos tests wait for 0 between runs). */
  traffic: { inFlight: number };
  /** Labels of bearer tokens a test named (`setClientLabels`), for the request log's `client`. */
  clientLabels: ReadonlyMap<string, string>;
  /** A timer the emulator cancels on close (latency, delayed answers). */
  sleep(ms: number): Promise<void>;
  isClosed(): boolean;
  onError(error: unknown): void;
}

/** Serves one request; `target` is the request target relative to the service (its path and query). */
export type RequestHandler = (req: IncomingMessage, res: ServerResponse, target: string) => void;

/**
 * One service's request handler: control API first (no token, no faults, no log), then for
 * every other request: log, faults, authentication, the API.
 */
export function createRequestHandler(ctx: HttpContext): RequestHandler {
  return (req, res, url) => {
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const query = new URLSearchParams(q < 0 ? '' : url.slice(q + 1));
    const method = (req.method ?? 'GET').toUpperCase();
    if (ctx.control && isControlPath(path)) {
      void readBody(req)
        .then((body) => (body === null ? oneError(400, 'body', 'rule', 'body too large') : handleControl(method, path, query, body, ctx.controlDeps)))
        .catch((error: unknown) => internalError(ctx, error))
        .then((reply) => send(res, reply));
      return;
    }
    void serveApi(ctx, req, res, method, path, query);
  };
}

async function serveApi(ctx: HttpContext, req: IncomingMessage, res: ServerResponse, method: string, path: string, query: URLSearchParams): Promise<void> {
  ctx.traffic.inFlight += 1;
  try {
    await serveApiRequest(ctx, req, res, method, path, query);
  } finally {
    ctx.traffic.inFlight -= 1;
  }
}

async function serveApiRequest(ctx: HttpContext, req: IncomingMessage, res: ServerResponse, method: string, path: string, query: URLSearchParams): Promise<void> {
  const exchange = new ApiExchange(ctx, req, res, method, path, query);
  try {
    await exchange.serve();
  } catch (error) {
    exchange.respond(internalError(ctx, error));
  }
}

/**
 * One API request, from its arrival to its line in the request log: read the body, let the
 * faults act (they may answer or cut it), perform it, then the faults that strike after it
 * was performed.
 */
class ApiExchange {
  readonly #ctx: HttpContext;
  readonly #req: IncomingMessage;
  readonly #res: ServerResponse;
  readonly #method: string;
  readonly #path: string;
  readonly #query: URLSearchParams;
  readonly #started: number;
  readonly #seq: number;
  readonly #time: string;
  #fault: string | undefined;

  constructor(ctx: HttpContext, req: IncomingMessage, res: ServerResponse, method: string, path: string, query: URLSearchParams) {
    this.#ctx = ctx;
    this.#req = req;
    this.#res = res;
    this.#method = method;
    this.#path = path;
    this.#query = query;
    this.#started = performance.now();
    this.#seq = ctx.log.nextSeq();
    this.#time = new Date().toISOString();
  }

  async serve(): Promise<void> {
    const ctx = this.#ctx;
    // The whole body is read first, so a reset fault hits a client that has finished sending.
    const body = await readBody(this.#req);
    const plan: FaultPlan = ctx.faults.admit(this.#method, this.#path);
    this.#fault = plan.label;
    if (await this.#faultAnswers(plan, body)) return;
    if (plan.hold === 'before') {
      await this.#hold('before');
      if (ctx.isClosed()) return void this.#cut();
    }
    const reply = await this.#perform(plan, body);
    if (plan.hold === 'after') await this.#hold('after');
    if (ctx.isClosed() || plan.commitThenFail === 'reset') return this.#reset(reply);
    this.respond(afterCommit(plan, reply));
  }

  #hold(hold: 'before' | 'after'): Promise<void> {
    return this.#ctx.holds.wait({ seq: this.#seq, method: this.#method, path: this.#path, hold, label: this.#fault ?? 'hold' });
  }

  respond(reply: Reply): void {
    this.#finish(reply.status, reply);
    send(this.#res, reply);
  }

  /** The faults that act before the request is performed; true when one answered or cut it. */
  async #faultAnswers(plan: FaultPlan, body: string | null): Promise<boolean> {
    const ctx = this.#ctx;
    if (plan.delayMs > 0) await ctx.sleep(plan.delayMs);
    if (ctx.isClosed()) return this.#cut();
    if (plan.processing) this.#res.writeProcessing();
    if (plan.reset) return this.#cut();
    if (plan.anotherClient) await anotherClient(plan.anotherClient, ctx.api);
    if (plan.endless) {
      await streamEndless(ctx, this.#res, this.#method, this.#path);
      this.#finish(200);
      return true;
    }
    if (plan.answer === undefined) return false;
    if (plan.echo) {
      const itemToken = apikeyToken(ctx, this.#path);
      const request = { method: this.#method, path: `${ctx.pathPrefix}${this.#path}`, body, authorization: this.#req.headers.authorization, itemToken };
      this.respond(echoReply(plan.answer.status, plan.echo, request, plan.answer.headers));
    } else {
      this.respond(plan.answer);
    }
    return true;
  }

  #cut(): true {
    this.#reset();
    return true;
  }

  /** The request performed: the token endpoint, or the API once the bearer token is checked. */
  async #perform(plan: FaultPlan, body: string | null): Promise<Reply> {
    const method = this.#method;
    const path = this.#path;
    const ctx = this.#ctx;
    const authorization = this.#req.headers.authorization;
    if (body === null) return oneError(400, 'body', 'rule', `the body is larger than ${MAX_BODY_BYTES} bytes`);
    if (path === TOKEN_PATH && ctx.oauth.enabled && method !== 'POST') return oneError(405, 'method', 'rule', `${method} is not supported on ${ctx.pathPrefix}${path}`, { Allow: 'POST' });
    if (path === TOKEN_PATH) return ctx.oauth.exchange(body);
    if (plan.expireToken) expireToken(authorization, ctx.tokens);
    const access = authenticate(authorization, ctx.tokens);
    if (typeof access !== 'string') return access;
    return handleApi(
      {
        method,
        path,
        query: this.#query,
        body,
        access,
        listMode: plan.listMode,
        ...(plan.concurrentWrite === undefined ? {} : { concurrentWrite: plan.concurrentWrite }),
        ...(plan.shiftPage === undefined ? {} : { shiftPage: plan.shiftPage }),
        sendProcessing: () => this.#res.writeProcessing(),
      },
      ctx.api,
    );
  }

  /** The client gets no answer: the connection is destroyed. */
  #reset(performed?: Reply): void {
    this.#finish(0, performed);
    this.#req.socket.destroy();
  }

  #finish(status: number, reply?: Reply): void {
    const next = status === 200 && reply?.raw === undefined ? listNext(reply?.body) : undefined;
    this.#ctx.log.finish({
      seq: this.#seq,
      method: this.#method,
      path: this.#path,
      query: Object.fromEntries(this.#query),
      status,
      time: this.#time,
      durationMs: Math.round((performance.now() - this.#started) * 100) / 100,
      ...(this.#fault === undefined ? {} : { fault: this.#fault }),
      ...(next === undefined ? {} : { next }),
      // The client hung up first (it timed out or was killed): the answer reaches nobody.
      ...(status !== 0 && (this.#res.destroyed || this.#req.socket.destroyed) ? { undelivered: true as const } : {}),
      ...(reply?.item === undefined ? {} : { item: reply.item }),
      ...this.#client(),
    });
  }

  #client(): { client?: string } {
    const labels = this.#ctx.clientLabels;
    const token = labels.size === 0 ? null : bearerToken(this.#req.headers.authorization);
    const client = token === null ? undefined : labels.get(token);
    return client === undefined ? {} : { client };
  }
}

/** The faults that strike once the request was performed: an error or a malformed body instead of its answer. */
function afterCommit(plan: FaultPlan, performed: Reply): Reply {
  let reply = performed;
  // What was performed stays in the log, whatever answer is sent instead.
  const item = reply.item === undefined ? {} : { item: reply.item };
  if (typeof plan.commitThenFail === 'number') {
    reply = { ...oneError(plan.commitThenFail, 'service', 'rule', `injected fault ${plan.commitThenFail} after the request was performed`), ...item };
  }
  if (plan.malformed) reply = { status: 200, raw: truncate(JSON.stringify(reply.body ?? {})), ...item };
  return reply;
}

/** The token of the apikey a path names, when it names one that exists (for `echo`). */
function apikeyToken(ctx: HttpContext, path: string): string | undefined {
  const route = resolveRoute(path);
  if (route?.resource !== 'apikeys' || route.id === undefined) return undefined;
  const key = ctx.api.store.getApikey(route.id);
  return key.ok ? key.value.token : undefined;
}

/**
 * The `endless` fault: 200 and a JSON body that never ends — a list's items again and again —
 * written as fast as the client reads it (backpressure keeps the emulator's memory flat),
 * until the client hangs up or the emulator closes.
 */
async function streamEndless(ctx: HttpContext, res: ServerResponse, method: string, path: string): Promise<void> {
  const closed = new Promise<void>((resolve) => res.once('close', resolve));
  if (method === 'HEAD') {
    // No body goes with a HEAD answer: there is nothing to stream.
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end();
    return closed;
  }
  const field = path.includes('apikeys') ? 'apikeys' : 'users';
  const item = JSON.stringify({ id: 1, username: 'endless', name: 'endless', level: 'n1', superuser: false, roles: [], created_at: '2024-01-01T00:00:00Z', updated_at: '2024-01-01T00:00:00Z' });
  const chunk = Buffer.from(`${item},`.repeat(Math.ceil(16_384 / (item.length + 1))));
  res.writeHead(200, { 'Content-Type': 'application/json' });
  res.write(`{"cursor":{"current":0,"next":null,"previous":null},"${field}":[`);
  while (!res.destroyed && !ctx.isClosed()) {
    // Wait for the client to read (or, should the socket take it all, for the next turn).
    if (!res.write(chunk)) await Promise.race([new Promise<void>((resolve) => res.once('drain', resolve)), closed]);
    else await new Promise<void>((resolve) => setImmediate(resolve));
  }
  if (!res.destroyed) res.destroy();
  await closed;
}

/** The `next` of a list answer's cursor object; undefined for any other answer. */
function listNext(body: unknown): number | null | undefined {
  const cursor = (body as { cursor?: { next?: unknown } } | null | undefined)?.cursor;
  if (typeof cursor !== 'object' || cursor === null) return undefined;
  const next = cursor.next;
  return typeof next === 'number' || next === null ? next : undefined;
}

/**
 * The corners of HTTP that node:http answers by itself with statuses the service never uses
 * (found by the chaos fuzz): `100 Continue` and `417` for an `Expect` header, `431` or `400`
 * without a body for a request it cannot parse, and a CONNECT closed without an answer. The
 * emulator answers only the spec's statuses, so: an `Expect` is ignored (RFC 9110 lets a
 * server do so) and the request handled as any other, an unparsable request gets a 400 with
 * the usual error body, and CONNECT a 405.
 */
export function answerProtocolEdges(server: Server, listener: (req: IncomingMessage, res: ServerResponse) => void): { closeAll(): void } {
  // Sockets node:http no longer tracks (closeAllConnections does not reach them).
  const detached = new Set<Duplex>();
  const answer = (socket: Duplex, status: 400 | 405, field: string, type: 'invalid' | 'rule', msg: string, extraHeaders = '') => {
    detached.add(socket);
    socket.on('close', () => detached.delete(socket));
    socket.on('error', () => socket.destroy());
    // Lingering close: the answer is sent, what the client still sends is read and dropped until
    // it hangs up (closing at once could reset the connection before the answer is read).
    (socket as Duplex & { setTimeout?: (ms: number, cb: () => void) => void }).setTimeout?.(5_000, () => socket.destroy());
    const text = JSON.stringify({ errors: [{ field, type, msg }] });
    socket.end(`HTTP/1.1 ${status} ${reasons[status]}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\n${extraHeaders}Connection: close\r\n\r\n${text}`);
    socket.resume();
  };
  server.on('checkContinue', listener);
  server.on('checkExpectation', listener);
  server.on('connect', (_req: IncomingMessage, socket: Duplex) => {
    answer(socket, 405, 'method', 'rule', 'CONNECT is not supported', 'Allow: GET, HEAD, POST, PUT, DELETE\r\n');
  });
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    answer(socket, 400, 'request', 'invalid', `the request is not valid HTTP/1.1 (${error.code ?? 'parse error'})`);
  });
  return {
    closeAll() {
      for (const socket of detached) socket.destroy();
      detached.clear();
    },
  };
}

const reasons: Record<number, string> = { 400: 'Bad Request', 405: 'Method Not Allowed' };

/** Writes a reply, as JSON unless it says otherwise (the router's 404s use it too). */
export function send(res: ServerResponse, reply: Reply): void {
  if (res.destroyed) return;
  const text = reply.raw ?? JSON.stringify(reply.body ?? {});
  // Every answer, errors included, is JSON (as the real service does); the echo fault's page is not.
  res.writeHead(reply.status, { ...reply.headers, 'Content-Type': reply.contentType ?? 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

function internalError(ctx: HttpContext, error: unknown): Reply {
  ctx.onError(error);
  return oneError(500, 'service', 'rule', 'internal error of the emulator');
}

/** Cuts a JSON text so that no parser accepts it. */
function truncate(json: string): string {
  return json.length > 2 ? json.slice(0, Math.ceil(json.length / 2)) : '{"';
}

/** The body as text, or null when it is larger than MAX_BODY_BYTES (the rest is drained). */
function readBody(req: IncomingMessage): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.on('end', () => resolve(size > MAX_BODY_BYTES ? null : Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
