import { request as httpRequest } from 'node:http';

/** A bare HTTP client for contract tests: no retries, no parsing beyond JSON, nothing hidden. */
export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** The body parsed as JSON; undefined when it is not JSON. */
  json: unknown;
  /** Interim (1xx) statuses received before the final one. */
  interim: number[];
}

export interface CallOptions {
  /** A bearer token; null sends no Authorization header. */
  token?: string | null;
  /** A JS value sent as JSON, or a string sent as is. */
  body?: unknown;
  headers?: Record<string, string>;
}

export const RW_TOKEN = 'rw-token';
export const RO_TOKEN = 'ro-token';
export const EXPIRED_TOKEN = 'expired-token';

/** One request over node:http (so 1xx interim answers and resets are observable). */
export function call(baseUrl: string, method: string, path: string, options: CallOptions = {}): Promise<RawResponse> {
  const url = new URL(path, baseUrl);
  const headers: Record<string, string> = { Accept: 'application/json', ...options.headers };
  const token = options.token === undefined ? RW_TOKEN : options.token;
  if (token !== null) headers.Authorization = `Bearer ${token}`;
  let payload: string | undefined;
  if (options.body !== undefined) {
    payload = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
    headers['Content-Type'] = 'application/json';
    headers['Content-Length'] = String(Buffer.byteLength(payload));
  }
  return new Promise((resolve, reject) => {
    const interim: number[] = [];
    const req = httpRequest(url, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json, interim });
      });
      res.on('error', reject);
    });
    req.on('information', (info) => interim.push(info.statusCode));
    req.on('error', reject);
    req.end(payload);
  });
}

/** The `errors` body of an error answer, or fails the test. */
export function errorsOf(res: RawResponse): { field: string; type: string; msg: string }[] {
  const body = res.json as { errors?: { field: string; type: string; msg: string }[] } | undefined;
  if (!body || !Array.isArray(body.errors)) throw new Error(`expected an errors body, got ${res.status} ${res.text}`);
  return body.errors;
}

/** Follows every `next` from cursor 0; bounded, so a cursor loop fails instead of hanging. */
export async function listAll(baseUrl: string, path: string, key: 'users' | 'apikeys' | 'roles', size?: number, maxPages = 1000) {
  const pages: { cursor: { current: number; next: number | null; previous: number | null }; items: { id: number }[] }[] = [];
  let cursor: number | null = 0;
  while (cursor !== null) {
    if (pages.length >= maxPages) throw new Error(`more than ${maxPages} pages`);
    const q = size === undefined ? `cursor=${cursor}` : `cursor=${cursor}&size=${size}`;
    const res = await call(baseUrl, 'GET', `${path}?${q}`);
    if (res.status !== 200) throw new Error(`list page answered ${res.status}: ${res.text}`);
    const body = res.json as Record<string, unknown> & { cursor: { current: number; next: number | null; previous: number | null } };
    pages.push({ cursor: body.cursor, items: body[key] as { id: number }[] });
    cursor = body.cursor.next;
  }
  return pages;
}

/** Polls until `check` holds; bounded by attempts, not by a timed assertion. */
export async function eventually(check: () => Promise<boolean>, attempts = 200, pauseMs = 10): Promise<void> {
  for (let i = 0; i < attempts; i += 1) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, pauseMs));
  }
  throw new Error('condition never held');
}

/** Whether `password` is the one the emulator at `baseUrl` (a tenant's URL too) holds for `username`: its control API, not the service's. */
export async function passwordMatches(baseUrl: string, username: string, password: string): Promise<boolean> {
  const res = await fetch(`${baseUrl}/_emulator/check-password`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username, password }) });
  return ((await res.json()) as { match: boolean }).match;
}
