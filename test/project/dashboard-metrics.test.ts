import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningTenants } from '../../src/emulator/index.js';
import { waitFor } from '../helpers/daemon-deferred.js';
import { parseExposition, type Sample } from '../helpers/daemon-prom-parse.js';
import { startDaemonInProcess, type InProcessDaemon } from '../helpers/in-process.js';
import { root } from '../helpers/paths.js';
import { dashboardExpressions, dashboardPath, promqlNames, ruleExpressions, rulesFiles, rulesSpec, withoutVariables, type Audience, type Expression } from '../helpers/promql-expressions.js';

/**
 * The shipped dashboard (examples/grafana/) and alert rules name only metrics, and labels, that a
 * daemon really serves: each expression is checked against the /metrics of a daemon started
 * in-process against the emulator — a single-service daemon for the single-service panels and
 * rules, a fleet daemon for the fleet's. A metric renamed in src/obs/ or a name misspelt in the
 * JSON fails here. (That every expression parses is test/slow/promtool.test.ts: promtool.)
 */

const TOKEN = 'dashboard-metrics-token-5c1e';
/** Labels Prometheus adds when it scrapes (a PodMonitor's `pod`, `namespace`...), never on /metrics. */
const scrapeLabels = new Set(['instance', 'job', 'pod', 'namespace', 'container', 'service', 'endpoint']);

let dir: string;
let emu: RunningTenants;
const daemons: InProcessDaemon[] = [];
const scraped = new Map<Audience, Sample[]>();

const accessYaml = 'sshUsers:\n  - username: deploy\n    level: n1\n    password: { env: DEPLOY_PASSWORD }\napikeys: []\n';
const env = { AMSYNC_TOKEN: TOKEN, FLEET_TOKEN: TOKEN, DEPLOY_PASSWORD: 'pw-dashboard-1' };

/** The daemon's /metrics once its first run applied its change. */
async function metricsOf(args: string[], applied: string): Promise<Sample[]> {
  const d = await startDaemonInProcess([...args, '--listen', '127.0.0.1:0', '--schedule', '0 0 1 1 *'], { cwd: dir, env });
  daemons.push(d);
  const text = await waitFor(async () => {
    const body = (await d.get('/metrics')).text;
    return parseExposition(body).samples().some((s) => s.name === applied && s.labels.outcome === 'applied' && s.value > 0) && body;
  }, 'the first run to apply its change');
  return parseExposition(text).samples();
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'amsync-dashboard-'));
  emu = await startEmulator({ tokens: [TOKEN], tenants: ['single', 'fleet'] });
  await writeFile(join(dir, 'access.yaml'), accessYaml);
  // One pushback on the first listing of each: retried and throttled, so those series exist too.
  for (const t of ['single', 'fleet']) emu.tenant(t).setFaults({ rules: [{ method: 'GET', path: '^/api/sshusers$', status: 503, retryAfter: 0, times: 1 }] });
  await writeFile(join(dir, 'targets.yaml'), `targets:\n  - name: one\n    url: ${emu.tenant('fleet').url}\n    token: { env: FLEET_TOKEN }\n`);
  scraped.set('single', await metricsOf(['-f', 'access.yaml', '--url', emu.tenant('single').url, '--state-file', 'single/state.json'], 'amsync_changes_total'));
  scraped.set('fleet', await metricsOf(['--targets', 'targets.yaml', '-f', 'access.yaml', '--state-file', 'fleet/state.json'], 'amsync_target_changes_total'));
});

afterAll(async () => {
  for (const d of daemons.splice(0)) await d.stop();
  await emu?.close();
  await rm(dir, { recursive: true, force: true, maxRetries: 20, retryDelay: 50 });
});

/** What in an expression the daemon does not serve: unknown metrics, labels no series of it has. */
function unknownNames(e: Expression, samples: readonly Sample[]): string[] {
  const problems: string[] = [];
  const { selectors, grouping } = promqlNames(withoutVariables(e.expr));
  const labelsOf = (metric: string) => new Set(samples.filter((s) => s.name === metric).flatMap((s) => Object.keys(s.labels)));
  const known = new Set<string>();
  for (const { metric, labels } of selectors) {
    const has = labelsOf(metric);
    if (!samples.some((s) => s.name === metric)) problems.push(`${e.where}: no series ${metric} on /metrics`);
    for (const label of labels) if (!scrapeLabels.has(label) && !has.has(label)) problems.push(`${e.where}: ${metric} has no label ${label}`);
    for (const label of has) known.add(label);
  }
  for (const label of [...grouping, ...(e.label === undefined ? [] : [e.label])]) {
    if (!scrapeLabels.has(label) && !known.has(label)) problems.push(`${e.where}: no series in it has the label ${label}`);
  }
  if (selectors.length === 0 && e.expr.includes('amsync_')) problems.push(`${e.where}: no metric found in ${e.expr}`);
  return problems;
}

const expressions = (): Expression[] => [...dashboardExpressions(), ...rulesFiles.flatMap((f) => ruleExpressions(f.path, f.audience))];

describe('the Grafana dashboard and the alert rules name what /metrics serves', () => {
  it('every metric and label of the dashboard and the rules is on the /metrics of the daemon it is written for', () => {
    const all = expressions();
    // Both views and both rules files are there, and every variable and panel query was found.
    expect(all.filter((e) => e.audience === 'fleet').length).toBeGreaterThan(15);
    expect(all.filter((e) => e.audience === 'single').length).toBeGreaterThan(25);
    expect(all.flatMap((e) => unknownNames(e, scraped.get(e.audience)!))).toEqual([]);
  });

  it('covers what waits on a person: each of these metrics is in the dashboard and in an alert, for one service and for a fleet', () => {
    const names = (list: Expression[]) => new Set(list.flatMap((e) => promqlNames(withoutVariables(e.expr)).selectors.map((s) => s.metric)));
    const dashboard = names(dashboardExpressions());
    const single = names(ruleExpressions(rulesFiles[0]!.path, 'single'));
    const fleet = names(ruleExpressions(rulesFiles[1]!.path, 'fleet'));
    const waiting = ['amsync_integrator_key_persisted', 'amsync_suspended', 'amsync_items_expiring'];
    for (const m of [...waiting, 'amsync_pending_approvals', 'amsync_sync_runs_abandoned_total', 'amsync_consecutive_failed_runs']) {
      expect(dashboard, m).toContain(m);
      expect(single, m).toContain(m);
    }
    for (const m of [...waiting, 'amsync_target_pending_approvals', 'amsync_target_sync_runs_abandoned_total', 'amsync_target_consecutive_failed_runs']) {
      expect(dashboard, m).toContain(m);
      expect(fleet, m).toContain(m);
    }
    for (const m of ['amsync_sync_window_open', 'amsync_next_expiry_timestamp_seconds', 'amsync_changes_total', 'amsync_drifted_items', 'amsync_target_drifted_items', 'amsync_target_changes_total']) expect(dashboard, m).toContain(m);
  });

  it('gives every alert of both rules files a severity, a summary and a description', () => {
    for (const { path } of rulesFiles) {
      const rules = rulesSpec(readFileSync(join(root, path), 'utf8')).groups.flatMap((g) => g.rules) as Array<{ alert?: string; labels?: Record<string, string>; annotations?: Record<string, string> }>;
      expect(rules.length, path).toBeGreaterThan(5);
      for (const rule of rules) {
        expect(['critical', 'warning', 'info'], `${path}: ${rule.alert}`).toContain(rule.labels?.severity);
        expect(rule.annotations?.summary, `${path}: ${rule.alert}`).toMatch(/\S/);
        expect(rule.annotations?.description, `${path}: ${rule.alert}`).toMatch(/\S/);
      }
    }
  });

  it('is a Grafana dashboard with a data source variable, a target variable and a row repeated per target', () => {
    interface Panel { id: number; type: string; repeat?: string; datasource?: { uid: string }; panels?: Panel[]; targets?: Array<{ datasource: { uid: string } }> }
    const d = JSON.parse(readFileSync(join(root, dashboardPath), 'utf8')) as { schemaVersion: number; uid: string; templating: { list: Array<{ name: string; type: string; query: unknown }> }; panels: Panel[] };
    expect(d.schemaVersion).toBeGreaterThanOrEqual(36);
    const variables = Object.fromEntries(d.templating.list.map((v) => [v.name, v]));
    expect(variables.datasource).toMatchObject({ type: 'datasource', query: 'prometheus' });
    expect(variables.target).toMatchObject({ type: 'query' });
    const panels = d.panels.flatMap((p) => [p, ...(p.panels ?? [])]);
    expect(new Set(panels.map((p) => p.id)).size).toBe(panels.length);
    expect(panels.some((p) => p.type === 'row' && p.repeat === 'target')).toBe(true);
    // Every query goes to the data source the variable picks: nothing is bound to one Grafana's uid.
    for (const p of panels.filter((q) => q.type !== 'row')) {
      expect(p.datasource?.uid, String(p.id)).toBe('${datasource}');
      for (const t of p.targets ?? []) expect(t.datasource.uid).toBe('${datasource}');
    }
  });

  it('fails on a misspelt metric, a label its series lacks, and a grouping label nothing has', () => {
    const single = scraped.get('single')!;
    const check = (expr: string) => unknownNames({ where: 'x', audience: 'single', expr }, single);
    expect(check('sum by (outcome) (increase(amsync_sync_runs_total{instance=~"$instance"}[$__rate_interval]))')).toEqual([]);
    expect(check('sum(increase(amsync_sync_run_total[5m]))')).toEqual(['x: no series amsync_sync_run_total on /metrics']);
    expect(check('amsync_pending_approvals{target="a"} > 0')).toEqual(['x: amsync_pending_approvals has no label target']);
    expect(check('sum by (target) (amsync_drifted_items)')).toEqual(['x: no series in it has the label target']);
    // The fleet's per-target series are not on a single service's /metrics.
    expect(check('amsync_target_ready == 0')).toEqual(['x: no series amsync_target_ready on /metrics']);
    // The shipped dashboard with one name misspelt.
    const misspelt = dashboardExpressions().map((e) => ({ ...e, expr: e.expr.replace('amsync_pending_approvals', 'amsync_pending_approval') }));
    expect(misspelt.flatMap((e) => unknownNames(e, scraped.get(e.audience)!)).length).toBeGreaterThan(0);
  });
});
