import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { AuditLine } from '../../../src/audit/index.js';
import { renderStatusHtml, renderStatusJson, statusPageStyle, type StatusSnapshot, type TargetStatus } from '../../../src/report/index.js';

const hostile = '<img src=x onerror=alert(1)>';
const script = '</code><script>alert(document.cookie)</script>';

function auditLine(key: string, n: number): AuditLine {
  return {
    time: `2026-01-01T00:00:${String(n).padStart(2, '0')}.000Z`, target: 'blue', kind: 'apikey', key, id: n, action: 'delete', phase: 'result', status: 'applied', error: null,
    fields: [], values: {}, planHash: null, trigger: 'schedule', revision: null, process: { pid: 1, host: 'h', user: 'u' },
  };
}

const busyTarget: TargetStatus = {
  name: `blue ${hostile}`,
  url: 'https://am.example.test/"x"',
  ready: false,
  reason: `the last 3 runs failed: ${script}`,
  running: true,
  lastSuccessAt: '2026-01-01T00:00:00.000Z',
  consecutiveFailures: 3,
  lastRun: {
    startedAt: '2026-01-02T00:00:00.000Z',
    finishedAt: '2026-01-02T00:00:05.000Z',
    trigger: ['schedule', 'file'],
    outcome: 'partial',
    dryRun: false,
    drift: 4,
    applied: 60,
    changes: [{ kind: 'apikey', action: 'delete', key: hostile }],
    failures: [
      { kind: 'sshUser', action: 'create', key: 'o\'brien "&" co', reason: `status 422: ${script}` },
      { kind: 'sshUser', action: null, key: 'gnp\u202e.exe', reason: 'missing_password: no password' },
    ],
    error: 'changes_failed',
  },
  pending: { approve: ['850e007fdc418d4c'], changes: [{ hash: '33aee9e91277d635', kind: 'apikey', action: 'create', key: hostile, rules: ['superuser'] }] },
  nextExpiry: '2099-06-30T12:00:00.000Z',
  expiringSoon: 2,
};

const quietTarget: TargetStatus = {
  name: null, url: null, ready: false, reason: 'no run yet', running: false, lastSuccessAt: null, consecutiveFailures: 0, lastRun: null,
  pending: { approve: [], changes: [] }, nextExpiry: null, expiringSoon: 0,
};

const busy: StatusSnapshot = {
  generatedAt: '2026-01-02T00:01:00.000Z',
  daemon: {
    fleet: true, file: 'access.yaml', mode: 'apply', writes: false, ready: true, reason: 'ok',
    suspended: { reason: `incident ${hostile}`, since: '2026-01-02T00:00:30.000Z', by: 'uid 1000' },
    window: { open: false, reason: 'inside a deny window ("0 22 * * *" UTC) until 2026-01-02T06:00:00.000Z', windows: 1 },
  },
  targets: [busyTarget],
  audit: { file: '/var/log/amsync/audit.jsonl', lines: [auditLine('first', 1), auditLine(hostile, 2)], error: null },
};

const quiet: StatusSnapshot = {
  generatedAt: '2026-01-02T00:01:00.000Z',
  daemon: { fleet: false, file: 'access.yaml', mode: 'observe', writes: false, ready: false, reason: 'no successful sync yet', suspended: null, window: { open: true, reason: 'ok', windows: 0 } },
  targets: [quietTarget],
  audit: null,
};

/** Every element the markup of `html` opens, by name. */
const elements = (html: string): string[] => [...html.matchAll(/<([a-zA-Z][a-zA-Z0-9]*)/g)].map((m) => m[1]!.toLowerCase());

describe('renderStatusHtml: the status page', () => {
  const html = renderStatusHtml(busy);

  it('escapes every name: no element, attribute or quote comes from the snapshot', () => {
    expect(html).not.toContain(hostile);
    expect(html).not.toContain('<script');
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(html).toContain('&lt;/code&gt;&lt;script&gt;alert(document.cookie)&lt;/script&gt;');
    expect(html).toContain('o&#39;brien &quot;&amp;&quot; co');
    expect(html).toContain('gnp\\u202e.exe');
    expect(html).not.toContain('\u202e');
    // Only the renderer's own elements: the busiest snapshot adds none.
    expect(new Set(elements(html))).toEqual(new Set([...elements(renderStatusHtml(quiet)), 'p', 'h3', 'ul', 'li', 'table', 'thead', 'tr', 'th', 'tbody', 'td']));
    expect(elements(html)).not.toContain('img');
  });

  it('has no script, no handler, no external resource; its one style sheet is the one the policy hashes', () => {
    for (const page of [html, renderStatusHtml(quiet)]) {
      // The tags are the renderer's alone (names are text: no `<` of theirs is left).
      const tags = page.match(/<[^>]*>/g) ?? [];
      for (const tag of tags) expect(tag).not.toMatch(/<script|\son[a-z]+=|javascript:|src=|href=|<link|<iframe|<object|<form/i);
      expect(page).toContain(`<style>${statusPageStyle}</style>`);
      expect(page.match(/<style>/g)).toHaveLength(1);
    }
    expect(createHash('sha256').update(statusPageStyle).digest('base64')).toMatch(/=$/);
  });

  it('shows every section of a busy target, with the facts', () => {
    expect(html).toContain('<title>amsync fleet status (1 target)</title>');
    expect(html).toContain('<meta http-equiv="refresh" content="30">');
    expect(html).toMatch(/id="suspension".*since 2026-01-02T00:00:30.000Z by uid 1000: incident &lt;img/);
    expect(html).toMatch(/id="sync-window".*Sync windows \(1\): inside a deny window/);
    expect(html).toContain('(writes held: runs observe only)');
    expect(html).toContain('<h2 class="target-name">blue &lt;img src=x onerror=alert(1)&gt;</h2>');
    expect(html).toContain('<dt>Last run</dt><dd>2026-01-02T00:00:05.000Z <span class="muted">(trigger: schedule, file)</span></dd>');
    expect(html).toContain('<span class="outcome bad">partial</span> <span class="run-error">changes_failed</span>');
    expect(html).toContain('<span class="drift">4</span> changes planned');
    expect(html).toContain('<span class="applied">60</span>');
    expect(html).toContain('<li class="muted">and 59 more</li>');
    expect(html).toContain('<h3>Failures</h3>');
    expect(html).toContain('create sshUser <code class="key">o&#39;brien &quot;&amp;&quot; co</code>: <span class="bad">status 422: &lt;/code&gt;');
    expect(html).toContain('<li>sshUser <code class="key">gnp\\u202e.exe</code>: <span class="bad">missing_password: no password</span></li>');
    expect(html).toContain('<h3>Pending approvals (1)</h3>');
    expect(html).toContain('<code class="approve">850e007fdc418d4c</code>');
    expect(html).toContain('<td><code class="hash">33aee9e91277d635</code></td><td>create apikey <code class="key">&lt;img src=x onerror=alert(1)&gt;</code></td><td>superuser</td>');
    expect(html).toContain('<span class="next-expiry">2099-06-30T12:00:00.000Z</span> <span class="warn">(2 within 24 h)</span>');
    expect(html).toContain('<dt>Failed runs in a row</dt><dd><span class="bad">3</span></dd>');
    expect(html).toContain('<dt>Now</dt><dd>a run is in progress</dd>');
    expect(html).toContain('<code>https://am.example.test/&quot;x&quot;</code>');
  });

  it('lists the audit tail newest first', () => {
    expect(html).toContain('(last 2 lines of <code>/var/log/amsync/audit.jsonl</code>, newest first)');
    expect(html.indexOf('<code>&lt;img src=x onerror=alert(1)&gt;</code></td><td>applied')).toBeLessThan(html.indexOf('<code>first</code>'));
  });

  it('leaves out what does not exist: no suspension, window, run, failures, approvals, expiry or audit log', () => {
    const page = renderStatusHtml(quiet, { refreshSeconds: 0 });
    expect(page).toContain('<title>amsync status</title>');
    expect(page).toContain('<h2 class="target-name">the service</h2>');
    expect(page).toContain('<dt>Last run</dt><dd><span class="muted">none yet</span></dd>');
    for (const absent of ['id="suspension"', 'id="sync-window"', 'id="audit"', 'Failures', 'Pending approvals', 'Changes applied', 'Next expiry', 'http-equiv', 'Failed runs in a row', '<dt>URL</dt>', 'writes held']) {
      expect(page).not.toContain(absent);
    }
  });

  it('an audit log with no lines, or one that cannot be read, says so', () => {
    const empty = renderStatusHtml({ ...quiet, audit: { file: 'a.jsonl', lines: [], error: null } });
    expect(empty).toContain('<p class="muted">no lines yet</p>');
    const broken = renderStatusHtml({ ...quiet, audit: { file: 'a.jsonl', lines: [], error: 'cannot read the audit log <a.jsonl>: EACCES' } });
    expect(broken).toContain('<p class="bad">cannot read the audit log &lt;a.jsonl&gt;: EACCES</p>');
  });

  it('a run that only planned says so; a success has no error', () => {
    const planned = renderStatusHtml({ ...quiet, targets: [{ ...quietTarget, lastRun: { ...busyTarget.lastRun!, outcome: 'success', dryRun: true, error: null, changes: [], failures: [] } }] });
    expect(planned).toContain('(trigger: schedule, file; planned only)');
    expect(planned).toContain('<span class="outcome ok">success</span></dd>');
  });
});

describe('renderStatusJson: the same facts for scripts', () => {
  it('is the snapshot with formatVersion 1; names raw as JSON strings, bidi and controls as \\u escapes', () => {
    const text = renderStatusJson(busy);
    expect(text.endsWith('}\n')).toBe(true);
    expect(JSON.parse(text)).toEqual({ formatVersion: 1, ...busy });
    expect(text).not.toContain('\u202e');
    expect(text).toContain('gnp\\u202e.exe');
  });
});
