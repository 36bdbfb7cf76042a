import type { Diagnostic } from '../model/index.js';
import { diagnosticCodes } from '../model/index.js';
import { didYouMean, formatPath, limits, quote, type DocPath, type YamlSource } from '../yaml/index.js';
import { asList, asRecord } from './check-desired.js';
import { labelKeyPattern, labelValuePattern, selectorMatches, targetNamePattern, type SelectableTarget } from './target-selector.js';

/**
 * `targets:` keys against the fleet they select from (README, "Fleet: one access file, many services"). Without a targets file
 * (`fleet` undefined), any `targets:` is an error: it would silently mean nothing. With one,
 * a name the file does not have is an error, and a selector that selects no target a warning
 * (an item that goes nowhere is likely a typo, but a label meant for targets to come is not).
 * Run on the raw document, like checkDesired; values of the wrong shape are the schema's.
 */
export function checkTargets(raw: unknown, source: YamlSource, fleet: readonly SelectableTarget[] | undefined): Diagnostic[] {
  const out: Diagnostic[] = [];
  const root = asRecord(raw);
  if (!root) return out;
  const diag = (severity: Diagnostic['severity'], code: string, message: string, path: DocPath, at: 'value' | 'key' = 'value'): void => {
    if (out.length >= limits.maxDiagnostics) return;
    out.push({ severity, code, message, path: formatPath(path), position: source.locate(path, at) });
  };
  const check = (path: DocPath, value: unknown): void => {
    if (value === undefined) return;
    if (fleet === undefined) {
      diag('error', diagnosticCodes.targetsNeedFleet, '`targets:` selects targets of a fleet: give a targets file with --targets FILE (or AMSYNC_TARGETS), or remove it', path, 'key');
      return;
    }
    checkSelector(path, value, fleet, diag);
  };
  check(['targets'], root.targets);
  for (const kind of ['sshUsers', 'apikeys'] as const) {
    asList(root[kind]).forEach((item, i) => check([kind, i, 'targets'], asRecord(item)?.targets));
  }
  return out;
}

type Diag = (severity: Diagnostic['severity'], code: string, message: string, path: DocPath, at?: 'value' | 'key') => void;

function checkSelector(path: DocPath, value: unknown, fleet: readonly SelectableTarget[], diag: Diag): void {
  const names = fleet.map((t) => t.name);
  if (Array.isArray(value)) {
    if (value.length === 0) {
      diag('warning', diagnosticCodes.noTargetSelected, '`targets: []` selects no target: this goes nowhere', path);
      return;
    }
    value.forEach((name, j) => {
      if (typeof name !== 'string' || !targetNamePattern.test(name) || names.includes(name)) return;
      diag('error', diagnosticCodes.unknownTarget, `unknown target ${quote(name)}${didYouMean(name, names) || ` (the targets file has ${listed(names)})`}`, [...path, j]);
    });
    return;
  }
  const labels = asRecord(value);
  if (!labels) return;
  const entries = Object.entries(labels);
  // A malformed key or value is the schema's to report.
  if (!entries.every(([k, v]) => labelKeyPattern.test(k) && typeof v === 'string' && labelValuePattern.test(v))) return;
  const selector = { labels: labels as Record<string, string> };
  if (fleet.some((t) => selectorMatches(selector, t))) return;
  const known = [...new Set(fleet.flatMap((t) => Object.keys(t.labels)))];
  const unknownKey = entries.find(([k]) => !known.includes(k));
  const hint = unknownKey ? ` (no target has the label ${quote(unknownKey[0])}${didYouMean(unknownKey[0], known)})` : '';
  diag('warning', diagnosticCodes.noTargetSelected, `selector {${entries.map(([k, v]) => `${k}: ${v}`).join(', ')}} selects none of the ${fleet.length} targets${hint}: this goes nowhere`, path);
}

function listed(names: readonly string[]): string {
  const shown = names.slice(0, 8).join(', ');
  return names.length > 8 ? `${shown}, … ${names.length - 8} more` : shown;
}
