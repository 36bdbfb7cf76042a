import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { root } from '../helpers/paths.js';
import { dashboardExpressions, rulesFiles, rulesSpec, withoutVariables } from '../helpers/promql-expressions.js';

/**
 * Every PromQL expression shipped parses, as Prometheus parses it: `promtool check rules` on
 * each alert rules file (the PrometheusRule's spec), and on the dashboard's queries written as
 * recording rules (Grafana's variables replaced by what Prometheus receives). promtool is
 * Debian's `prometheus` package: .ci/run installs it before this project; `npm test` never
 * needs it (test/project/dashboard-metrics.test.ts checks the names against /metrics).
 */

const promtool = spawnSync('promtool', ['--version'], { stdio: 'ignore' }).status === 0;
const dir = mkdtempSync(join(tmpdir(), 'amsync-promtool-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function checkRules(name: string, doc: unknown): { status: number | null; output: string } {
  const file = join(dir, name);
  writeFileSync(file, stringify(doc));
  const r = spawnSync('promtool', ['check', 'rules', file], { encoding: 'utf8' });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

describe('promtool check rules', () => {
  it('promtool is installed (.ci/run installs Debian\'s prometheus package)', () => {
    expect(promtool, 'promtool not found: apt-get install --no-install-recommends prometheus').toBe(true);
  });

  it.runIf(promtool).each(rulesFiles.map((f) => f.path))('%s passes', (path) => {
    const spec = rulesSpec(readFileSync(join(root, path), 'utf8'));
    const rules = spec.groups.flatMap((g) => g.rules).length;
    const r = checkRules('rules.yaml', spec);
    expect(r.output).toContain(`SUCCESS: ${rules} rules found`);
    expect(r.status).toBe(0);
  });

  it.runIf(promtool)('every query of the Grafana dashboard parses', () => {
    const queries = dashboardExpressions();
    const rules = queries.map((q, i) => ({ record: `amsync_dashboard:query_${i}`, expr: withoutVariables(q.expr) }));
    const r = checkRules('dashboard.yaml', { groups: [{ name: 'dashboard', rules }] });
    expect(r.output).toContain(`SUCCESS: ${rules.length} rules found`);
    expect(r.status).toBe(0);
  });

  it.runIf(promtool)('would fail on an expression that does not parse', () => {
    const r = checkRules('broken.yaml', { groups: [{ name: 'broken', rules: [{ record: 'x:y', expr: withoutVariables('sum by (outcome (increase(amsync_sync_runs_total[$__rate_interval]))') }] }] });
    expect(r.status).not.toBe(0);
    expect(r.output).toMatch(/parse error|unexpected/i);
  });
});
