import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { startHealthServer, type HealthServer } from '../../../src/daemon/health-server.js';
import type { StatusSnapshot } from '../../../src/report/index.js';
import { registerSecret } from '../../../src/secrets/known-secrets.js';
import { logSink } from '../../helpers/daemon-fakes.js';

const hostile = '<img src=x onerror=alert(1)>';
const token = 'CANARY-status-endpoint-token-91be';

const snapshot: StatusSnapshot = {
  generatedAt: '2026-01-02T00:01:00.000Z',
  daemon: { fleet: false, file: 'access.yaml', mode: 'apply', writes: true, ready: true, reason: 'ok', suspended: null, window: { open: true, reason: 'ok', windows: 0 } },
  targets: [
    {
      name: null, url: null, ready: true, reason: 'ok', running: false, lastSuccessAt: '2026-01-02T00:00:05.000Z', consecutiveFailures: 0,
      lastRun: { startedAt: '2026-01-02T00:00:00.000Z', finishedAt: '2026-01-02T00:00:05.000Z', trigger: ['start'], outcome: 'partial', dryRun: false, drift: 1, applied: 0, changes: [], failures: [{ kind: 'apikey', action: 'create', key: hostile, reason: `the service echoed Bearer ${token}` }], error: null },
      pending: { approve: [], changes: [] }, nextExpiry: null, expiringSoon: 0,
    },
  ],
  audit: null,
};

const servers: HealthServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

async function serve(status?: () => Promise<StatusSnapshot>): Promise<HealthServer> {
  const ok = () => ({ ready: true, reason: 'ok' });
  const server = await startHealthServer({
    address: { host: '127.0.0.1', port: 0 },
    readiness: ok,
    liveness: ok,
    metrics: () => Promise.resolve({ contentType: 'text/plain', body: '' }),
    ...(status ? { status } : {}),
    logger: logSink('error').logger,
  });
  servers.push(server);
  return server;
}

describe('GET /status and /status.json', () => {
  it('/status: HTML under a policy that allows no script and only the page’s own style sheet', async () => {
    const s = await serve(() => Promise.resolve(snapshot));
    const res = await fetch(`${s.url}/status`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toMatch(/^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/]+=*'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'$/);
    expect(csp).not.toMatch(/script-src|unsafe/);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('cache-control')).toBe('no-store');
    const body = await res.text();
    // The hash in the policy is the hash of the page's one <style> element: the browser applies it.
    const style = /<style>([\s\S]*?)<\/style>/.exec(body)![1]!;
    expect(csp).toContain(`'sha256-${createHash('sha256').update(style).digest('base64')}'`);
    expect(body).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(body).not.toContain(hostile);
  });

  it('/status.json: the same facts as JSON, under the same headers', async () => {
    const s = await serve(() => Promise.resolve(snapshot));
    const res = await fetch(`${s.url}/status.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.headers.get('content-security-policy')).toMatch(/^default-src 'none'/);
    const doc = (await res.json()) as StatusSnapshot & { formatVersion: number };
    expect(doc).toEqual({ formatVersion: 1, ...snapshot });
    expect(doc.targets[0]!.lastRun!.failures[0]!.key).toBe(hostile);
  });

  it('a secret the process knows never reaches either body (the redaction step runs on both)', async () => {
    registerSecret(token);
    const s = await serve(() => Promise.resolve(snapshot));
    for (const path of ['/status', '/status.json']) {
      const body = await (await fetch(`${s.url}${path}`)).text();
      expect(body).not.toContain(token);
      expect(body).toContain('the service echoed Bearer');
    }
  });

  it('HEAD answers the headers without a body; other methods 405', async () => {
    const s = await serve(() => Promise.resolve(snapshot));
    const head = await fetch(`${s.url}/status`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
    expect((await fetch(`${s.url}/status`, { method: 'POST' })).status).toBe(405);
  });

  it('without a status source: 404, and the 404 text is what it was', async () => {
    const s = await serve();
    const res = await fetch(`${s.url}/status`);
    expect(res.status).toBe(404);
    expect(await res.text()).toBe('not found: try /healthz, /readyz or /metrics\n');
    const other = (await serve(() => Promise.resolve(snapshot))).url;
    expect(await (await fetch(`${other}/nope`)).text()).toBe('not found: try /healthz, /readyz, /metrics, /status or /status.json\n');
  });
});
