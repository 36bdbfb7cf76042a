import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { root } from './paths.js';

/**
 * The PromQL of the shipped dashboard and alert rules, for the tests that check it: every
 * expression parses (promtool, test/slow/) and names only metrics and labels a daemon's
 * /metrics has (test/project/).
 */

/** Which daemon a piece of PromQL is written for. */
export type Audience = 'single' | 'fleet';

export interface Expression {
  /** Where it comes from: the panel's or rule's name, for messages. */
  readonly where: string;
  readonly audience: Audience;
  /** As written (Grafana variables included). */
  readonly expr: string;
  /** A label the expression must find on its metric (a template variable's `label_values`). */
  readonly label?: string;
}

export const dashboardPath = 'examples/grafana/amsync-dashboard.json';
export const rulesFiles: ReadonlyArray<{ readonly path: string; readonly audience: Audience }> = [
  { path: 'examples/kubernetes/prometheus-rules.yaml', audience: 'single' },
  { path: 'examples/kubernetes/fleet/prometheus-rules.yaml', audience: 'fleet' },
];

interface Panel {
  readonly type: string;
  readonly title: string;
  readonly repeat?: string;
  readonly panels?: Panel[];
  readonly targets?: Array<{ readonly expr?: string }>;
}

/**
 * Every query of the dashboard: its panels' (a panel is for the fleet when the row it is in is a
 * fleet row or repeats per target) and its template variables' `label_values(SELECTOR, LABEL)`.
 */
export function dashboardExpressions(text = readFileSync(join(root, dashboardPath), 'utf8')): Expression[] {
  const dashboard = JSON.parse(text) as { panels: Panel[]; templating: { list: Array<{ name: string; type: string; definition?: string }> } };
  const out: Expression[] = [];
  let audience: Audience = 'single';
  const visit = (panel: Panel) => {
    if (panel.type === 'row') audience = panel.repeat !== undefined || /^fleet/i.test(panel.title) ? 'fleet' : 'single';
    for (const t of panel.targets ?? []) if (t.expr !== undefined) out.push({ where: `panel "${panel.title}"`, audience, expr: t.expr });
    for (const inner of panel.panels ?? []) visit(inner);
  };
  for (const panel of dashboard.panels) visit(panel);
  for (const variable of dashboard.templating.list) {
    if (variable.type !== 'query' || variable.definition === undefined) continue;
    const m = /^label_values\((.+),\s*(\w+)\)$/.exec(variable.definition);
    if (!m) throw new Error(`variable ${variable.name}: not label_values(SELECTOR, LABEL): ${variable.definition}`);
    out.push({ where: `variable $${variable.name}`, audience: /target/.test(m[1]!) ? 'fleet' : 'single', expr: m[1]!, label: m[2]! });
  }
  return out;
}

/** Every `expr` of a PrometheusRule's groups. */
export function ruleExpressions(path: string, audience: Audience, text = readFileSync(join(root, path), 'utf8')): Expression[] {
  return rulesSpec(text).groups.flatMap((g) => g.rules.map((r) => ({ where: `${path}: ${r.alert ?? r.record}`, audience, expr: r.expr })));
}

/** The PrometheusRule's `spec`: a plain Prometheus rules file, as promtool reads it. */
export function rulesSpec(text: string): { groups: Array<{ name: string; rules: Array<{ alert?: string; record?: string; expr: string }> }> } {
  return (parse(text) as { spec: ReturnType<typeof rulesSpec> }).spec;
}

/** Grafana's variables replaced by what Prometheus would receive (a range, a regex). */
export function withoutVariables(expr: string): string {
  return expr
    .replace(/\$__(rate_interval|interval|range)\b/g, '5m')
    .replace(/\$\{?\w+\}?/g, '.*');
}

export interface Selector {
  readonly metric: string;
  /** Label names in its matchers. */
  readonly labels: string[];
}

export interface Names {
  readonly selectors: Selector[];
  /** Labels of by / without / on / ignoring / group_left / group_right lists. */
  readonly grouping: string[];
}

const keywords = new Set(['and', 'or', 'unless', 'bool', 'offset', 'inf', 'nan', 'atan2']);
/** Aggregation operators: a grouping clause may come between them and their `(`. */
const aggregations = new Set(['sum', 'min', 'max', 'avg', 'group', 'stddev', 'stdvar', 'count', 'count_values', 'bottomk', 'topk', 'quantile', 'limitk', 'limit_ratio']);
const groupingWords = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right']);

/**
 * The metric names and label names of a PromQL expression: a small scanner, enough for the
 * expressions written here (promtool checks that they parse). A name followed by `(` is a
 * function, an aggregation operator is one wherever its `(` is; one after a grouping word is a list of labels; strings and
 * numbers (durations included) are skipped.
 */
export function promqlNames(expr: string): Names {
  const selectors: Selector[] = [];
  const grouping: string[] = [];
  let i = 0;
  const skipSpace = () => {
    while (i < expr.length && /\s/.test(expr[i]!)) i += 1;
  };
  const skipString = () => {
    const quote = expr[i]!;
    i += 1;
    while (i < expr.length && expr[i] !== quote) i += expr[i] === '\\' ? 2 : 1;
    i += 1;
  };
  const identifier = (): string => {
    const m = /^[a-zA-Z_:][\w:]*/.exec(expr.slice(i));
    if (!m) throw new Error(`expected a name at ${i} in ${expr}`);
    i += m[0].length;
    return m[0];
  };
  /** `{a="x", b=~"y"}`: the label names. */
  const matchers = (): string[] => {
    const labels: string[] = [];
    i += 1;
    for (;;) {
      skipSpace();
      if (expr[i] === '}') break;
      labels.push(identifier());
      skipSpace();
      while (/[=~!]/.test(expr[i] ?? '')) i += 1;
      skipSpace();
      skipString();
      skipSpace();
      if (expr[i] === ',') i += 1;
    }
    i += 1;
    return labels;
  };
  while (i < expr.length) {
    const c = expr[i]!;
    if (/\s/.test(c)) i += 1;
    else if (c === '"' || c === "'" || c === '`') skipString();
    else if (/[0-9.]/.test(c)) i += /^[0-9.]+[a-zA-Z0-9.]*/.exec(expr.slice(i))![0].length;
    else if (c === '{') throw new Error(`a selector without a metric name in ${expr}`);
    else if (/[a-zA-Z_:]/.test(c)) {
      const name = identifier();
      skipSpace();
      if (groupingWords.has(name)) {
        if (expr[i] !== '(') continue; // group_left without labels
        i += 1;
        for (;;) {
          skipSpace();
          if (expr[i] === ')') break;
          grouping.push(identifier());
          skipSpace();
          if (expr[i] === ',') i += 1;
        }
        i += 1;
      } else if (expr[i] === '(' || keywords.has(name.toLowerCase()) || aggregations.has(name)) {
        // a function, an aggregation, or an operator word
      } else selectors.push({ metric: name, labels: expr[i] === '{' ? matchers() : [] });
    } else i += 1;
  }
  return { selectors, grouping };
}
