import type { IncomingMessage, ServerResponse } from 'node:http';
import { handleApi, type ApiDeps } from './api-handler.js';
import { authenticate, type TokenSets } from './auth.js';
import { handleControl, isControlPath, type ControlDeps } from './control-handler.js';
import type { FaultController, FaultPlan } from './faults.js';
import { oneError, type Reply } from './reply.js';
import type { RequestLog } from './request-log.js';

/** Bodies above this are refused; the service's own limit is not documented. */
const MAX_BODY_BYTES = 1024 * 1024;

export interface HttpContext {
  control: boolean;
  tokens: TokenSets;
  faults: FaultController;
  log: RequestLog;
  api: ApiDeps;
  controlDeps: ControlDeps;
  /** A timer the emulator cancels on close (latency, delayed answers). */
  sleep(ms: number): Promise<void>;
  isClosed(): boolean;
  onError(error: unknown): void;
}

/**
 * The node:http request listener: control API first (no token, no faults, no log), then for
 * every other request: log, faults, authentication, the API.
 */
export function createRequestListener(ctx: HttpContext): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const url = req.url ?? '/';
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
  const started = performance.now();
  const seq = ctx.log.nextSeq();
  const time = new Date().toISOString();
  let fault: string | undefined;
  const finish = (status: number) => {
    ctx.log.finish({
      seq,
      method,
      path,
      query: Object.fromEntries(query),
      status,
      time,
      durationMs: Math.round((performance.now() - started) * 100) / 100,
      ...(fault === undefined ? {} : { fault }),
    });
  };
  const reset = () => {
    finish(0);
    req.socket.destroy();
  };
  try {
    // The whole body is read first, so a reset fault hits a client that has finished sending.
    const body = await readBody(req);
    const plan: FaultPlan = ctx.faults.admit(method, path);
    fault = plan.label;
    if (plan.delayMs > 0) await ctx.sleep(plan.delayMs);
    if (ctx.isClosed()) return reset();
    if (plan.processing) res.writeProcessing();
    if (plan.reset) return reset();
    if (plan.answer) return respond(res, plan.answer, finish);
    let reply: Reply;
    if (body === null) {
      reply = oneError(400, 'body', 'rule', `the body is larger than ${MAX_BODY_BYTES} bytes`);
    } else {
      const access = authenticate(req.headers.authorization, ctx.tokens);
      reply =
        typeof access === 'string'
          ? await handleApi({ method, path, query, body, access, listMode: plan.listMode, sendProcessing: () => res.writeProcessing() }, ctx.api)
          : access;
    }
    if (ctx.isClosed()) return reset();
    if (plan.commitThenFail === 'reset') return reset();
    if (plan.commitThenFail !== undefined) {
      reply = oneError(plan.commitThenFail, 'service', 'rule', `injected fault ${plan.commitThenFail} after the request was performed`);
    }
    if (plan.malformed) reply = { status: 200, raw: truncate(JSON.stringify(reply.body ?? {})) };
    respond(res, reply, finish);
  } catch (error) {
    respond(res, internalError(ctx, error), finish);
  }
}

function respond(res: ServerResponse, reply: Reply, finish: (status: number) => void): void {
  finish(reply.status);
  send(res, reply);
}

function send(res: ServerResponse, reply: Reply): void {
  if (res.destroyed) return;
  const text = reply.raw ?? JSON.stringify(reply.body ?? {});
  // Every answer, errors included, is JSON (DESIGN.md §1).
  res.writeHead(reply.status, { ...reply.headers, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
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
