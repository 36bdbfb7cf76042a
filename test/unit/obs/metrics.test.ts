import { describe, expect, it } from 'vitest';
import { createMetrics } from '../../../src/obs/metrics.js';
import { parseExposition } from '../../helpers/daemon-prom-parse.js';

describe('metrics: the Prometheus surface', () => {
  it('exposes every amsync metric, parseable by a strict exposition parser, from the first scrape', async () => {
    const metrics = createMetrics({ version: '1.2.3', nodeVersion: 'v20.0.0' });
    const { contentType, body } = await metrics.render();
    expect(contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    const e = parseExposition(body);
    const names = [...e.families.keys()];
    for (const name of [
      'amsync_build_info',
      'amsync_sync_runs_total',
      'amsync_sync_duration_seconds',
      'amsync_changes_total',
      'amsync_drifted_items',
      'amsync_unmanaged_items',
      'amsync_config_valid',
      'amsync_last_successful_sync_timestamp_seconds',
      'amsync_api_requests_total',
      'amsync_api_retries_total',
      'amsync_api_throttled_total',
      'amsync_rate_limiter_rate',
      'amsync_ready',
      'amsync_sync_in_progress',
      'amsync_consecutive_failed_runs',
    ]) {
      expect(names).toContain(name);
    }
    expect(names.every((n) => n.startsWith('amsync_'))).toBe(true);
    expect(e.value('amsync_build_info', { version: '1.2.3', node_version: 'v20.0.0' })).toBe(1);
    expect(e.value('amsync_config_valid')).toBe(1);
    expect(e.value('amsync_sync_runs_total', { outcome: 'failure' })).toBe(0);
    expect(e.value('amsync_drifted_items', { kind: 'sshUser' })).toBe(0);
    expect(e.families.get('amsync_sync_duration_seconds')?.type).toBe('histogram');
  });

  it('uses its own registry: two instances do not collide (no global registry)', async () => {
    const a = createMetrics({ version: '1' });
    const b = createMetrics({ version: '1' });
    a.recordRun('success', 1);
    expect(parseExposition((await b.render()).body).value('amsync_sync_runs_total', { outcome: 'success' })).toBe(0);
    expect(parseExposition((await a.render()).body).value('amsync_sync_runs_total', { outcome: 'success' })).toBe(1);
  });

  it('records runs, changes, drift and client events under their labels', async () => {
    const m = createMetrics({ version: '1' });
    m.recordRun('success', 0.3);
    m.recordRun('failure', 2);
    m.recordChange('sshUser', 'create', 'applied');
    m.recordChange('apikey', 'delete', 'failed');
    m.setDrift('sshUser', 2);
    m.setUnmanaged('apikey', 5);
    m.setConfigValid(false);
    m.setLastSuccess(1_700_000_000_000);
    m.observeApiRequest({ method: 'get', route: '/api/sshusers', status: 200, durationMs: 12 });
    m.observeApiRequest({ method: 'PUT', route: '/api/sshusers/{id}', status: undefined, error: 'timeout' });
    m.observeRetry({ method: 'GET', route: '/api/3rdparty/apikeys', reason: 'unavailable' });
    m.observeThrottle({ method: 'POST', route: '/api/sshusers', status: 429 });
    m.setLimiterRate(7.5);
    const e = parseExposition((await m.render()).body);
    expect(e.value('amsync_sync_runs_total', { outcome: 'success' })).toBe(1);
    expect(e.value('amsync_sync_duration_seconds_count', { outcome: 'failure' })).toBe(1);
    expect(e.value('amsync_changes_total', { kind: 'sshUser', action: 'create', outcome: 'applied' })).toBe(1);
    expect(e.value('amsync_changes_total', { kind: 'apikey', action: 'delete', outcome: 'failed' })).toBe(1);
    expect(e.value('amsync_drifted_items', { kind: 'sshUser' })).toBe(2);
    expect(e.value('amsync_unmanaged_items', { kind: 'apikey' })).toBe(5);
    expect(e.value('amsync_config_valid')).toBe(0);
    expect(e.value('amsync_last_successful_sync_timestamp_seconds')).toBe(1_700_000_000);
    expect(e.value('amsync_api_requests_total', { method: 'GET', route: '/api/sshusers', status: '200' })).toBe(1);
    expect(e.value('amsync_api_requests_total', { method: 'PUT', route: '/api/sshusers/{id}', status: 'timeout' })).toBe(1);
    expect(e.value('amsync_api_request_duration_seconds_count', { method: 'GET', route: '/api/sshusers' })).toBe(1);
    expect(e.value('amsync_api_retries_total', { method: 'GET', route: '/api/3rdparty/apikeys', reason: 'unavailable' })).toBe(1);
    expect(e.value('amsync_api_throttled_total', { method: 'POST', route: '/api/sshusers', status: '429' })).toBe(1);
    expect(e.value('amsync_rate_limiter_rate')).toBe(7.5);
  });

  it('counts access token renewals and shows whether the rotated integrator key reached its file', async () => {
    const m = createMetrics({ version: '1' });
    let e = parseExposition((await m.render()).body);
    expect(e.value('amsync_integrator_key_persisted')).toBe(1);
    m.observeCredential({ action: 'exchanged' });
    m.observeCredential({ action: 'renewed' });
    m.observeCredential({ action: 'renewed' });
    m.observeCredential({ action: 'write_back_failed' });
    e = parseExposition((await m.render()).body);
    expect(e.value('amsync_access_token_renewals_total', { outcome: 'exchanged' })).toBe(1);
    expect(e.value('amsync_access_token_renewals_total', { outcome: 'renewed' })).toBe(2);
    expect(e.value('amsync_integrator_key_persisted')).toBe(0);
    m.observeCredential({ action: 'rotated', persisted: true });
    m.observeApiRequest({ method: 'POST', route: '/api/v1/oauth2/token', status: 200 });
    m.observeApiRequest({ method: 'GET', route: '/api/user/info', status: 404 });
    e = parseExposition((await m.render()).body);
    expect(e.value('amsync_integrator_key_persisted')).toBe(1);
    expect(e.value('amsync_api_requests_total', { method: 'POST', route: '/api/v1/oauth2/token', status: '200' })).toBe(1);
    expect(e.value('amsync_api_requests_total', { method: 'GET', route: '/api/user/info', status: '404' })).toBe(1);
    // A key from AMSYNC_REFRESH_TOKEN that the service rotated has no file to go to.
    m.observeCredential({ action: 'rotated', persisted: false });
    e = parseExposition((await m.render()).body);
    expect(e.value('amsync_integrator_key_persisted')).toBe(0);
  });

  it('never lets a username, a key name, an id or a message into a label', async () => {
    const m = createMetrics({ version: '1' });
    m.observeApiRequest({ method: 'GET', route: '/api/sshusers/alice-secret-user', status: 200 });
    m.observeApiRequest({ method: 'DELETE', route: '/api/3rdparty/apikeys/4711', status: 200 });
    m.observeApiRequest({ method: 'GET', route: '/api/sshusers?username=bob-canary', status: 200 });
    m.observeApiRequest({ method: 'GET', route: 'carol-canary', status: undefined, error: 'connect ECONNREFUSED 10.0.0.1 for dave-canary' });
    m.observeRetry({ method: 'X-erin-canary', route: '/api/sshusers', reason: 'failed for frank-canary' });
    const body = (await m.render()).body;
    expect(body).not.toMatch(/alice|bob|carol|dave|erin|frank|4711|10\.0\.0\.1/);
    const e = parseExposition(body);
    expect(e.value('amsync_api_requests_total', { method: 'GET', route: '/api/sshusers/{param}', status: '200' })).toBe(1);
    expect(e.value('amsync_api_requests_total', { method: 'DELETE', route: '/api/3rdparty/apikeys/{id}', status: '200' })).toBe(1);
    expect(e.value('amsync_api_requests_total', { method: 'GET', route: '/api/sshusers', status: '200' })).toBe(1);
    expect(e.value('amsync_api_retries_total', { method: 'OTHER', route: '/api/sshusers', reason: 'other' })).toBe(1);
  });

  it('keeps the number of route series bounded', async () => {
    const m = createMetrics({ version: '1' });
    for (let i = 0; i < 100; i += 1) m.observeApiRequest({ method: 'GET', route: `/api/sshusers/{x${i}}`, status: 200 });
    const e = parseExposition((await m.render()).body);
    const routes = new Set(e.families.get('amsync_api_requests_total')!.samples.map((s) => s.labels.route));
    expect(routes.size).toBeLessThanOrEqual(33);
    expect(routes.has('other')).toBe(true);
  });

  it('can add the standard process metrics for the sidecar', async () => {
    const m = createMetrics({ version: '1', processMetrics: true });
    const e = parseExposition((await m.render()).body);
    expect(e.families.has('process_cpu_seconds_total')).toBe(true);
    expect(e.families.has('nodejs_heap_size_used_bytes')).toBe(true);
  });
});

describe('the strict exposition parser used by these tests', () => {
  it('rejects what Prometheus rejects', () => {
    expect(() => parseExposition('a{b="c} 1\n')).toThrow();
    expect(() => parseExposition('1a 1\n')).toThrow();
    expect(() => parseExposition('a 1\n# TYPE a counter\n')).toThrow();
    expect(() => parseExposition('a 1\nb 1\na{x="1"} 2\n')).toThrow(/two places/);
    expect(() => parseExposition('a 1\na 2\n')).toThrow(/duplicate/);
    expect(() => parseExposition('a{x="\\q"} 1\n')).toThrow(/escape/);
    expect(() => parseExposition('a 1')).toThrow(/newline/);
    expect(() => parseExposition('# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_sum 1\nh_count 1\n')).toThrow(/cumulative/);
    expect(() => parseExposition('# TYPE h histogram\nh_bucket{le="+Inf"} 2\nh_sum 1\nh_count 1\n')).toThrow(/_count/);
    expect(parseExposition('# HELP a x\\ny\n# TYPE a gauge\na{l="q\\"uote"} -1.5e3\n').value('a', { l: 'q"uote' })).toBe(-1500);
  });
});
