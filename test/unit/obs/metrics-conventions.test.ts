import { readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments, stringify } from 'yaml';
import { createMetrics } from '../../../src/obs/metrics.js';
import { root } from '../../helpers/paths.js';
import { parseExposition } from '../../helpers/daemon-prom-parse.js';
import { lintFamilies, promtool, promtoolAvailable } from '../../helpers/prom-lint.js';

/**
 * Prometheus' own tools judge what amsync exposes: `promtool check metrics` on the daemon's
 * whole /metrics (prom-client's process metrics included), `promtool check rules` on the
 * example alerts. Where promtool is missing, the same naming rules are checked by
 * test/helpers/prom-lint.ts, itself compared with promtool wherever promtool is installed.
 */

const hasPromtool = promtoolAvailable();

/** The daemon's /metrics with every amsync series present (src/cli/daemon.ts creates it so). */
async function daemonMetrics(): Promise<string> {
  const m = createMetrics({ version: '0.1.0', processMetrics: true });
  m.recordRun('success', 1.5);
  m.recordChange('sshUser', 'create', 'applied');
  m.observeApiRequest({ method: 'GET', route: '/api/sshusers', status: 200, durationMs: 12 });
  m.observeRetry({ method: 'POST', route: '/api/sshusers', reason: 'unavailable' });
  m.observeThrottle({ method: 'GET', route: '/api/apikeys', status: 503 });
  m.setLimiterRate(12.5);
  m.setLastSuccess(1_700_000_000_000);
  return (await m.render()).body;
}

// Every rule promtool enforces, broken once each.
const broken = [
  '# HELP a_active_total x\n# TYPE a_active_total gauge\na_active_total 1',
  '# TYPE b_requests counter\nb_requests 1',
  '# HELP c_latency_milliseconds x\n# TYPE c_latency_milliseconds gauge\nc_latency_milliseconds{le="1"} 1',
  '# HELP d_fooBar_ms x\n# TYPE d_fooBar_ms gauge\nd_fooBar_ms{myLabel="x"} 1',
  '# HELP e_x_count x\n# TYPE e_x_count gauge\ne_x_count 1',
  '# HELP f_gauge x\n# TYPE f_gauge gauge\nf_gauge{quantile="1"} 1',
  '# HELP g:x x\n# TYPE g:x gauge\ng:x 1',
].join('\n') + '\n';

describe("the daemon's /metrics follows Prometheus' conventions", () => {
  it('passes the naming rules promtool enforces, process and Node.js metrics included', async () => {
    const text = await daemonMetrics();
    const exposition = parseExposition(text);
    expect(exposition.families.has('process_cpu_seconds_total')).toBe(true);
    expect(lintFamilies(exposition.families.values())).toEqual([]);
  });

  it('drops only the default gauges named like counters: each is the sum of a gauge that stays', async () => {
    const families = parseExposition(await daemonMetrics()).families;
    for (const name of ['nodejs_active_handles', 'nodejs_active_requests', 'nodejs_active_resources']) {
      expect(families.has(`${name}_total`), `${name}_total`).toBe(false);
      expect(families.get(name)?.type, name).toBe('gauge');
    }
  });

  it.runIf(hasPromtool)('passes `promtool check metrics`', async () => {
    const run = promtool(['check', 'metrics'], await daemonMetrics());
    expect(run.problems).toEqual([]);
    expect(run.status).toBe(0);
  });
});

describe('the rule check used where promtool is missing', () => {
  it('finds every kind of problem promtool reports', () => {
    expect(lintFamilies(parseExposition(broken).families.values()).sort()).toEqual([
      'a_active_total non-counter metrics should not have "_total" suffix',
      'b_requests counter metrics should have "_total" suffix',
      'b_requests no help text',
      'c_latency_milliseconds non-histogram metrics should not have "le" label',
      'c_latency_milliseconds use base unit "seconds" instead of "milliseconds"',
      "d_fooBar_ms label names should be written in 'snake_case' not 'camelCase'",
      "d_fooBar_ms metric names should be written in 'snake_case' not 'camelCase'",
      'd_fooBar_ms metric names should not contain abbreviated units',
      'e_x_count non-histogram and non-summary metrics should not have "_count" suffix',
      "f_gauge metric name should not include type 'gauge'",
      'f_gauge non-summary metrics should not have "quantile" label',
      "g:x metric names should not contain ':'",
    ]);
  });

  it.runIf(hasPromtool)('says what promtool says, on the broken text and on the daemon before the fix', async () => {
    const run = promtool(['check', 'metrics'], broken);
    expect(run.status).toBe(3);
    expect(lintFamilies(parseExposition(broken).families.values()).sort()).toEqual([...run.problems].sort());
    // prom-client's defaults as they come, without amsync's fix: promtool's finding of issue 14.
    const { collectDefaultMetrics, Registry } = await import('prom-client');
    const raw = new Registry();
    collectDefaultMetrics({ register: raw });
    const text = await raw.metrics();
    expect(lintFamilies(parseExposition(text).families.values()).sort()).toEqual([...promtool(['check', 'metrics'], text).problems].sort());
  });

  it("flags prom-client's unfiltered default metrics, as promtool did before the fix", async () => {
    const { collectDefaultMetrics, Registry } = await import('prom-client');
    const raw = new Registry();
    collectDefaultMetrics({ register: raw });
    expect(lintFamilies(parseExposition(await raw.metrics()).families.values())).toContain('nodejs_active_handles_total non-counter metrics should not have "_total" suffix');
  });
});

interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

describe('examples/kubernetes/prometheus-rules.yaml', () => {
  const [rules] = parseAllDocuments(readFileSync(join(root, 'examples/kubernetes/prometheus-rules.yaml'), 'utf8')).map((d) => d.toJS());
  const groups = rules.spec.groups as { name: string; rules: Rule[] }[];
  let dir = '';
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'amsync-rules-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('gives every alert a severity label and a summary, and alerts only on metrics the daemon exposes', async () => {
    const exposed = new Set(parseExposition(await daemonMetrics()).families.keys());
    const alerts = groups.flatMap((g) => g.rules).filter((r) => r.alert !== undefined);
    expect(alerts.length).toBeGreaterThan(0);
    for (const rule of alerts) {
      expect(['critical', 'warning', 'info'], `${rule.alert}: severity`).toContain(rule.labels?.severity);
      expect(rule.annotations?.summary, `${rule.alert}: summary`).toMatch(/\S/);
      for (const name of rule.expr.match(/\bamsync_[a-z_]+/g) ?? []) expect(exposed.has(name), `${rule.alert}: ${name}`).toBe(true);
    }
  });

  it.runIf(hasPromtool)('passes `promtool check rules` (the PrometheusRule spec as a rules file)', () => {
    const file = join(dir, 'rules.yaml');
    writeFileSync(file, stringify({ groups }));
    const run = promtool(['check', 'rules', file]);
    expect(run.status, run.problems.join('\n')).toBe(0);
    expect(run.problems.join('\n')).toMatch(/SUCCESS: \d+ rules found/);
  });
});
