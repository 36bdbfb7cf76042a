import { connect } from 'node:net';
import type { FaultRule } from '../../../src/emulator/index.js';
import type { Rng } from '../../../src/emulator/rng.js';

/**
 * A seeded HTTP fuzzer for the emulator: raw bytes over TCP, so methods, request targets,
 * headers and bodies can be anything a client could send, not only what an HTTP library
 * would let through. Every answer's status line is read back, interim ones included.
 */

/** The statuses of the spec's table (api-spec.md, Errors). Nothing else may ever be answered. */
export const specStatuses: ReadonlySet<number> = new Set([102, 200, 202, 400, 401, 403, 404, 405, 409, 500, 502, 503, 504]);

export const FUZZ_TOKENS = { readWrite: 'fuzz-rw-token', readOnly: 'fuzz-ro-token', expired: 'fuzz-expired-token' } as const;

export interface FuzzRequest {
  /** What the request was, for a failure message. */
  readonly summary: string;
  readonly bytes: Buffer;
  readonly head: boolean;
}

export interface RawAnswer {
  /** Every status line received, interim ones first. */
  readonly statuses: number[];
  /** The connection closed (or stayed silent) without a final answer. */
  readonly noAnswer: boolean;
}

const pick = <T>(rng: Rng, items: readonly T[]): T => items[Math.floor(rng() * items.length)] as T;
const int = (rng: Rng, min: number, max: number): number => min + Math.floor(rng() * (max - min + 1));

const methods = ['GET', 'GET', 'GET', 'POST', 'POST', 'PUT', 'PUT', 'DELETE', 'HEAD', 'OPTIONS', 'PATCH', 'TRACE', 'PROPFIND', 'CONNECT', 'get', 'Post', 'FOO', 'GE T', ''];
const paths = [
  '/api/sshusers',
  '/api/sshusers/1',
  '/api/sshusers/2',
  '/api/sshusers/999999',
  '/api/3rdparty/apikeys',
  '/api/3rdparty/apikeys/1',
  '/api/3rdparty/apikeys/3',
  '/api/roles',
  '/',
  '/api',
  '/api/',
  '/api/sshusers/',
  '/api/sshusers/1/',
  '/api/sshusers/-1',
  '/api/sshusers/1.5',
  '/api/sshusers/0x1',
  '/api/sshusers/%31',
  '/api/sshusers/1e3',
  '/api/sshusers/99999999999999999999999',
  '/api//sshusers',
  '/api/sshusers/../roles',
  '/API/SSHUSERS',
  '/api/3rdparty/apikeys/1/roles',
  '/api/sshusers%2F1',
  '/api/%00',
  '/api/sshusers/%',
  '*',
  'http://127.0.0.1/api/sshusers',
  '/api/sshusers#frag',
];

function randomText(rng: Rng, max: number, alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789-_.~%/?&=+:@!$\'()*,;'): string {
  let out = '';
  for (let i = 0, n = int(rng, 0, max); i < n; i += 1) out += alphabet[Math.floor(rng() * alphabet.length)];
  return out;
}

function target(rng: Rng): string {
  let path = rng() < 0.85 ? pick(rng, paths) : `/${randomText(rng, 40)}`;
  if (rng() < 0.03) path = `/api/sshusers/${'a'.repeat(int(rng, 1000, 9000))}`;
  if (rng() < 0.02) path = `/api/sshusers/${String.fromCharCode(int(rng, 0x80, 0xff))}`;
  const params: string[] = [];
  for (let i = 0, n = int(rng, 0, 3); i < n; i += 1) {
    params.push(
      pick(rng, [
        'cursor=0',
        `cursor=${int(rng, 0, 2 ** 32)}`,
        'cursor=-1',
        'cursor=abc',
        'cursor=',
        `cursor=${int(rng, 0, 10)}.5`,
        'size=0',
        `size=${int(rng, 1, 200)}`,
        'size=1000000000000000000000',
        'size=1e3',
        'size=%00',
        'cursor=1&cursor=2',
        `${randomText(rng, 8)}=${randomText(rng, 8)}`,
        '%zz=%zz',
        '&&&',
      ]),
    );
  }
  return params.length > 0 ? `${path}?${params.join('&')}` : path;
}

function jsonValue(rng: Rng, depth: number): unknown {
  const r = rng();
  if (depth > 3 || r < 0.3) return pick(rng, [null, true, false, 0, -1, 1.5, 2 ** 53, 1e308, '', 'n1', 'n2', 'x'.repeat(int(rng, 0, 300)), '\u0000', '\ud800', 'é']);
  if (r < 0.5) return Array.from({ length: int(rng, 0, 4) }, () => jsonValue(rng, depth + 1));
  const obj: Record<string, unknown> = {};
  for (let i = 0, n = int(rng, 0, 5); i < n; i += 1) {
    const key = pick(rng, ['username', 'level', 'password', 'name', 'superuser', 'roles', 'id', 'token', '__proto__', 'constructor', randomText(rng, 6)]);
    obj[key] = jsonValue(rng, depth + 1);
  }
  return obj;
}

function body(rng: Rng): Buffer {
  const r = rng();
  if (r < 0.15) return Buffer.alloc(0);
  if (r < 0.35) return Buffer.from(JSON.stringify({ username: `u${int(rng, 0, 30)}`, level: pick(rng, ['n1', 'n1', 'n2']), password: 'p' }));
  if (r < 0.5) return Buffer.from(JSON.stringify({ name: `k${int(rng, 0, 30)}`, superuser: rng() < 0.5, roles: [int(rng, 0, 6)] }));
  if (r < 0.75) return Buffer.from(JSON.stringify(jsonValue(rng, 0)));
  if (r < 0.82) {
    const text = JSON.stringify(jsonValue(rng, 0));
    return Buffer.from(text.slice(0, int(rng, 0, text.length)));
  }
  if (r < 0.86) {
    const depth = int(rng, 1000, 20000);
    return Buffer.from(`${'['.repeat(depth)}${']'.repeat(depth)}`);
  }
  if (r < 0.88) return Buffer.alloc(1024 * 1024 + int(rng, 1, 4096), 0x41);
  return Buffer.from(Array.from({ length: int(rng, 1, 512) }, () => Math.floor(rng() * 256)));
}

function authorization(rng: Rng): string[] {
  const t = FUZZ_TOKENS;
  return pick(rng, [
    [`Authorization: Bearer ${t.readWrite}`],
    [`Authorization: Bearer ${t.readWrite}`],
    [`Authorization: Bearer ${t.readOnly}`],
    [`Authorization: Bearer ${t.expired}`],
    ['Authorization: Bearer not-a-token'],
    ['Authorization: Bearer'],
    ['Authorization: Basic dXNlcjpwYXNz'],
    [`Authorization: bearer ${t.readWrite}`],
    [`Authorization: Bearer   ${t.readWrite}   `],
    [`Authorization: Bearer ${t.readWrite}`, `Authorization: Bearer ${t.readOnly}`],
    [],
  ]);
}

/** One random request, complete and correctly framed unless the draw says otherwise. */
export function fuzzRequest(rng: Rng): FuzzRequest {
  const method = pick(rng, methods);
  const requestTarget = target(rng);
  const payload = ['POST', 'PUT', 'Post'].includes(method) || rng() < 0.1 ? body(rng) : Buffer.alloc(0);
  const version = rng() < 0.05 ? 'HTTP/1.0' : rng() < 0.01 ? 'HTTP/2.0' : 'HTTP/1.1';
  const headers: string[] = [];
  if (rng() < 0.97) headers.push('Host: 127.0.0.1');
  headers.push(...authorization(rng));
  if (rng() < 0.7) headers.push(`Content-Type: ${pick(rng, ['application/json', 'application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=latin1'])}`);
  if (rng() < 0.3) headers.push(`Accept: ${pick(rng, ['application/json', '*/*', 'text/html', 'application/xml'])}`);
  if (rng() < 0.05) headers.push(`Expect: ${pick(rng, ['100-continue', 'something-else'])}`);
  if (rng() < 0.04) headers.push('Connection: Upgrade', 'Upgrade: websocket');
  for (let i = 0, n = int(rng, 0, 3); i < n; i += 1) headers.push(`X-Fuzz-${randomText(rng, 6, 'abcdefghij')}: ${randomText(rng, 30)}`);
  if (rng() < 0.02) headers.push(`X-Big: ${'b'.repeat(int(rng, 8000, 20000))}`);
  if (rng() < 0.02) headers.push('Bad Header: with space');
  const chunked = payload.length > 0 && rng() < 0.1;
  if (chunked) headers.push('Transfer-Encoding: chunked');
  else if (payload.length > 0 || rng() < 0.2) headers.push(`Content-Length: ${payload.length}`);
  if (rng() < 0.02) headers.push('Content-Length: 5', 'Transfer-Encoding: chunked');
  headers.push('Connection: close');
  const head = `${method} ${requestTarget} ${version}\r\n${headers.join('\r\n')}\r\n\r\n`;
  const framed = chunked ? Buffer.concat([Buffer.from(`${payload.length.toString(16)}\r\n`), payload, Buffer.from('\r\n0\r\n\r\n')]) : payload;
  const summary = `${method} ${requestTarget.slice(0, 120)} ${version} [${headers.map((h) => h.slice(0, 60)).join(' | ')}] body ${payload.length} bytes${chunked ? ' chunked' : ''}`;
  return { summary, bytes: Buffer.concat([Buffer.from(head, 'latin1'), framed]), head: method === 'HEAD' };
}

/**
 * Sends raw bytes and reads every status line until the final answer (or the connection
 * closes). Bounded by `timeoutMs`: a silent server counts as no answer.
 */
export function sendRaw(port: number, request: FuzzRequest, timeoutMs = 5000): Promise<RawAnswer> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    const statuses: number[] = [];
    let buffer = Buffer.alloc(0);
    let done = false;
    const finish = (noAnswer: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ statuses, noAnswer });
    };
    const timer = setTimeout(() => finish(true), timeoutMs);
    socket.on('error', () => finish(statuses.every((s) => s < 200)));
    socket.on('close', () => finish(statuses.every((s) => s < 200)));
    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      // Status lines and headers of every response so far; the final one ends the exchange.
      for (;;) {
        const end = buffer.indexOf('\r\n\r\n');
        if (end < 0) return;
        const headText = buffer.subarray(0, end).toString('latin1');
        const match = /^HTTP\/\d\.\d (\d{3})/.exec(headText);
        if (!match) return finish(true);
        const status = Number(match[1]);
        statuses.push(status);
        buffer = buffer.subarray(end + 4);
        if (status < 200) continue;
        // The final answer is known: its body does not matter here.
        return finish(false);
      }
    });
    socket.write(request.bytes);
  });
}

/** Fault settings for one round of the fuzz: faults must not make the emulator answer off-table. */
export function fuzzFaults(rng: Rng): { failRate: number; maintenance: boolean; rules: FaultRule[]; rateLimit: number | null } {
  const candidates: FaultRule[] = [
    { label: 'malformed', malformed: true, probability: 0.2 },
    { label: 'reset', reset: true, probability: 0.1 },
    { label: 'lost', commitThenFail: pick(rng, ['reset', 500, 502, 504] as const), probability: 0.1 },
    { label: 'loop', cursorLoop: true, probability: 0.3 },
    { label: 'dup', duplicatePage: true, probability: 0.3 },
    { label: 'shuffle', reorderPage: true, probability: 0.3 },
    { label: 'status', status: pick(rng, [102, 200, 202, 400, 401, 403, 404, 405, 409, 500, 502, 503, 504]), probability: 0.2, retryAfter: 1 },
    { label: 'drift', concurrentWrite: pick(rng, ['create', 'delete'] as const), probability: 0.2 },
    { label: 'expire', expireToken: true, probability: 0.02 },
    { label: 'slow', delayMs: int(rng, 1, 20), probability: 0.2 },
    { label: 'other', anotherClient: { method: pick(rng, ['POST', 'PUT', 'DELETE'] as const), path: pick(rng, ['/api/sshusers', '/api/sshusers/2', '/api/3rdparty/apikeys/1']), body: { username: 'fuzz-other', level: 'n1', password: 'fuzz-pw-1' } }, probability: 0.2 },
    { label: 'shift', shiftPage: { id: int(rng, 1, 6), to: `fuzz-shift-${int(rng, 1, 3)}` }, probability: 0.2 },
    { label: 'echo', status: pick(rng, [400, 500, 502]), echo: pick(rng, ['json', 'text'] as const), probability: 0.1 },
    { label: 'endless', endless: true, probability: 0.02 },
  ];
  const rules = candidates.filter(() => rng() < 0.4);
  return { failRate: rng() < 0.3 ? Math.round(rng() * 30) / 100 : 0, maintenance: rng() < 0.1, rules, rateLimit: rng() < 0.1 ? 200 : null };
}
