import type { AuditLine } from '../audit/index.js';
import { escapeHtml } from '../text/index.js';
import type { AuditTail, DaemonFacts, LastRun, PendingApprovals, StatusSnapshot, TargetStatus } from './status-snapshot.js';

/**
 * The page's one style sheet. The daemon's Content-Security-Policy allows this very text by its
 * hash (`style-src 'sha256-…'`) and nothing else: no script, no image, no other style.
 */
export const statusPageStyle = [
  'body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#1b1f23;background:#fff}',
  'h1{font-size:1.4em;margin:0 0 .3em}h2{font-size:1.15em;margin:1.2em 0 .4em}h3{font-size:1em;margin:.8em 0 .3em}',
  'section.target{border:1px solid #d0d7de;border-radius:6px;padding:.4em 1em .8em;margin:.8em 0}',
  'dl{display:grid;grid-template-columns:max-content 1fr;gap:.15em 1em;margin:.4em 0}dt{color:#57606a}dd{margin:0}',
  'table{border-collapse:collapse;font-size:.92em}th,td{text-align:left;padding:.15em .6em;border-bottom:1px solid #eaeef2;vertical-align:top}',
  'code{font:12px ui-monospace,monospace;background:#f6f8fa;padding:0 .2em}',
  '.ok{color:#1a7f37}.bad{color:#cf222e;font-weight:600}.warn{color:#9a6700;font-weight:600}.muted{color:#57606a}',
].join('\n');

export interface StatusHtmlOptions {
  /** `<meta http-equiv=refresh>` every this many seconds; 0: none. @default 30 */
  readonly refreshSeconds?: number;
}

/**
 * The status page: the daemon, each target (last run, result, changes applied, drift, failures
 * with their reason, pending approvals with their hashes, next expiry), the tail of the audit
 * log. Every name goes through escapeHtml; the page has no script and needs none. Pure.
 */
export function renderStatusHtml(snapshot: StatusSnapshot, options: StatusHtmlOptions = {}): string {
  const refresh = options.refreshSeconds ?? 30;
  const title = snapshot.daemon.fleet ? `amsync fleet status (${snapshot.targets.length} target${snapshot.targets.length === 1 ? '' : 's'})` : 'amsync status';
  return [
    '<!DOCTYPE html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    ...(refresh > 0 ? [`<meta http-equiv="refresh" content="${refresh}">`] : []),
    '<meta name="viewport" content="width=device-width,initial-scale=1">',
    '<meta name="referrer" content="no-referrer">',
    `<title>${escapeHtml(title)}</title>`,
    `<style>${statusPageStyle}</style>`,
    '</head>',
    '<body>',
    `<h1>${escapeHtml(title)}</h1>`,
    daemonSection(snapshot.daemon, snapshot.generatedAt),
    ...snapshot.targets.map((t, i) => targetSection(t, i)),
    ...(snapshot.audit === null ? [] : [auditSection(snapshot.audit)]),
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

const e = escapeHtml;
const yesNo = (ok: boolean, yes: string, no: string): string => `<span class="${ok ? 'ok' : 'bad'}">${e(ok ? yes : no)}</span>`;
const row = (term: string, value: string): string => `<dt>${e(term)}</dt><dd>${value}</dd>`;

function daemonSection(d: DaemonFacts, generatedAt: string): string {
  const rows = [
    row('Ready', `${yesNo(d.ready, 'ready', 'not ready')} <span class="muted">${e(d.reason)}</span>`),
    row('Mode', `${e(d.mode)}${d.mode === 'apply' && !d.writes ? ' <span class="warn">(writes held: runs observe only)</span>' : ''}`),
    row('Desired state', `<code>${e(d.file)}</code>`),
    row('Generated', e(generatedAt)),
  ];
  const suspended = d.suspended === null ? [] : [`<p id="suspension" class="warn">Suspended since ${e(d.suspended.since)}${d.suspended.by === null ? '' : ` by ${e(d.suspended.by)}`}: ${e(d.suspended.reason)} (<code>amsync ctl resume</code> ends it)</p>`];
  const window = d.window.windows === 0 ? [] : [`<p id="sync-window" class="${d.window.open ? 'ok' : 'warn'}">Sync windows (${d.window.windows}): ${d.window.open ? 'writes allowed now' : e(d.window.reason)}</p>`];
  return ['<section id="daemon">', `<dl>${rows.join('')}</dl>`, ...suspended, ...window, '</section>'].join('\n');
}

function targetSection(t: TargetStatus, index: number): string {
  const name = t.name ?? 'the service';
  const rows = [
    row('Ready', `${yesNo(t.ready, 'ready', 'not ready')} <span class="muted">${e(t.reason)}</span>`),
    ...(t.url === null ? [] : [row('URL', `<code>${e(t.url)}</code>`)]),
    ...(t.running ? [row('Now', 'a run is in progress')] : []),
    ...lastRunRows(t.lastRun),
    row('Last success', t.lastSuccessAt === null ? '<span class="muted">none yet</span>' : e(t.lastSuccessAt)),
    ...(t.consecutiveFailures > 0 ? [row('Failed runs in a row', `<span class="bad">${t.consecutiveFailures}</span>`)] : []),
    ...(t.nextExpiry === null ? [] : [row('Next expiry', `<span class="next-expiry">${e(t.nextExpiry)}</span>${t.expiringSoon > 0 ? ` <span class="warn">(${t.expiringSoon} within 24 h)</span>` : ''}`)]),
  ];
  return [
    `<section class="target" id="target-${index}">`,
    `<h2 class="target-name">${e(name)}</h2>`,
    `<dl>${rows.join('')}</dl>`,
    ...(t.lastRun === null ? [] : changesList(t.lastRun)),
    ...(t.lastRun === null ? [] : failuresList(t.lastRun)),
    ...pendingTable(t.pending),
    '</section>',
  ].join('\n');
}

function lastRunRows(run: LastRun | null): string[] {
  if (run === null) return [row('Last run', '<span class="muted">none yet</span>')];
  const good = run.outcome === 'success';
  return [
    row('Last run', `${e(run.finishedAt)} <span class="muted">(trigger: ${e(run.trigger.join(', ') || 'unknown')}${run.dryRun ? '; planned only' : ''})</span>`),
    row('Result', `<span class="outcome ${good ? 'ok' : 'bad'}">${e(run.outcome)}</span>${run.error === null ? '' : ` <span class="run-error">${e(run.error)}</span>`}`),
    row('Drift', `<span class="drift">${run.drift}</span> change${run.drift === 1 ? '' : 's'} planned`),
    row('Changes applied', `<span class="applied">${run.applied}</span>`),
  ];
}

const changeText = (c: { kind: string; action: string | null; key: string }): string => `${c.action === null ? '' : `${e(c.action)} `}${e(c.kind)} <code class="key">${e(c.key)}</code>`;

function changesList(run: LastRun): string[] {
  if (run.changes.length === 0) return [];
  const more = run.applied - run.changes.length;
  return ['<h3>Changes applied</h3>', `<ul class="changes">${run.changes.map((c) => `<li>${changeText(c)}</li>`).join('')}${more > 0 ? `<li class="muted">and ${more} more</li>` : ''}</ul>`];
}

function failuresList(run: LastRun): string[] {
  if (run.failures.length === 0) return [];
  return ['<h3>Failures</h3>', `<ul class="failures">${run.failures.map((f) => `<li>${changeText(f)}: <span class="bad">${e(f.reason)}</span></li>`).join('')}</ul>`];
}

function pendingTable(p: PendingApprovals): string[] {
  if (p.changes.length === 0) return [];
  const rows = p.changes.map((c) => `<tr><td><code class="hash">${e(c.hash)}</code></td><td>${changeText(c)}</td><td>${e(c.rules.join(', '))}</td></tr>`);
  return [
    `<h3>Pending approvals (${p.changes.length})</h3>`,
    `<p>To approve them all, list in the approvals file: ${p.approve.map((h) => `<code class="approve">${e(h)}</code>`).join(', ')}</p>`,
    `<table class="pending"><thead><tr><th>Hash</th><th>Change</th><th>Why</th></tr></thead><tbody>${rows.join('')}</tbody></table>`,
  ];
}

function auditSection(audit: AuditTail): string {
  const head = `<h2>Audit log <span class="muted">(last ${audit.lines.length} line${audit.lines.length === 1 ? '' : 's'} of <code>${e(audit.file)}</code>, newest first)</span></h2>`;
  const error = audit.error === null ? [] : [`<p class="bad">${e(audit.error)}</p>`];
  const table =
    audit.lines.length === 0
      ? ['<p class="muted">no lines yet</p>']
      : [
          '<table class="audit"><thead><tr><th>Time</th><th>Target</th><th>Action</th><th>Kind</th><th>Key</th><th>Status</th><th>Trigger</th></tr></thead>',
          `<tbody>${[...audit.lines].reverse().map(auditRow).join('\n')}</tbody></table>`,
        ];
  return ['<section id="audit">', head, ...error, ...table, '</section>'].join('\n');
}

function auditRow(line: AuditLine): string {
  const status = line.phase === 'attempt' ? 'attempt' : `${line.status ?? '?'}${line.error ? ` (${line.error})` : ''}`;
  return `<tr><td>${e(line.time)}</td><td>${e(line.target ?? '-')}</td><td>${e(line.action)}</td><td>${e(line.kind)}</td><td><code>${e(line.key)}</code></td><td>${e(status)}</td><td>${e(line.trigger)}</td></tr>`;
}
