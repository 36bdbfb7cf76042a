import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { StatusSnapshot } from '../../src/report/index.js';
import { forms } from '../helpers/encodings.js';
import type { InProcessDaemon } from '../helpers/in-process.js';
import { expiresAt, fleetScenario, hostileName, singleServiceScenario, statusTokens, trickyName } from '../helpers/status-scenario.js';

/**
 * Issue 31 item 1: `GET /status` and `/status.json` of a real daemon (in process, through the
 * CLI) against the emulator over 127.0.0.1, for one service and for a fleet. The page says what
 * the emulator's request log says happened; remote names that are markup stay text; no token
 * or password is in either body.
 */

let dir: string;
const cleanups: (() => Promise<void>)[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'amsync-status-page-'));
});
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
  await rm(dir, { recursive: true, force: true, maxRetries: 20, retryDelay: 50 });
});

type StatusDoc = StatusSnapshot & { formatVersion: number };

async function both(daemon: InProcessDaemon): Promise<{ html: string; doc: StatusDoc; csp: string | null }> {
  const res = await fetch(`${daemon.url}/status`);
  expect(res.status).toBe(200);
  const html = await res.text();
  const json = await daemon.get('/status.json');
  expect(json.status).toBe(200);
  return { html, doc: JSON.parse(json.text) as StatusDoc, csp: res.headers.get('content-security-policy') };
}

function expectNoSecret(...bodies: string[]): void {
  for (const body of bodies) for (const form of forms([statusTokens.token, statusTokens.password])) expect(body).not.toContain(form);
}

const escapedHostile = '&lt;img src=x onerror=alert(1)&gt;';

describe('the status page of one service', () => {
  it('shows the last run, its changes (as the emulator saw them), the failure and why, the pending approval, the next expiry and the audit tail; every name escaped, no secret', async () => {
    const { emulator, daemon } = await singleServiceScenario(dir);
    cleanups.push(() => daemon.stop(), () => emulator.close());
    const { html, doc, csp } = await both(daemon);

    expect(csp).toMatch(/^default-src 'none'; style-src 'sha256-/);
    expect(html).not.toMatch(/<script|<img/i);
    expect(html).toContain(escapedHostile);
    expect(html).not.toContain('\u202e');
    expectNoSecret(html, JSON.stringify(doc));

    const [t] = doc.targets;
    expect(doc.daemon).toMatchObject({ fleet: false, file: 'teams', mode: 'apply', writes: true, suspended: null });
    expect(t!.lastRun).toMatchObject({ trigger: ['start'], outcome: 'partial', dryRun: false, applied: 3 });

    // What the page says was applied is what the emulator answered 2xx to, and nothing else.
    const writes = emulator.requests().filter((r) => r.method !== 'GET');
    const deleted = emulator.requests().filter((r) => r.method === 'DELETE' && r.status < 300).length;
    expect(t!.lastRun!.changes.filter((c) => c.action === 'delete').map((c) => c.key).sort()).toEqual([hostileName, trickyName].sort());
    expect(deleted).toBe(2);
    expect(emulator.state().apikeys.map((k) => k.name)).not.toContain(hostileName);
    expect(t!.lastRun!.changes.filter((c) => c.action === 'create').map((c) => c.key)).toEqual(['deploy']);
    // The refused create: the emulator's 422, its one-line reason on the page.
    expect(writes.filter((r) => r.status === 422)).toHaveLength(1);
    expect(t!.lastRun!.failures).toEqual([{ kind: 'sshUser', action: 'create', key: 'zz-refused', reason: expect.stringContaining('422') }]);
    expect(html).toMatch(/<li>create sshUser <code class="key">zz-refused<\/code>: <span class="bad">[^<]*422[^<]*refused by the status scenario\)<\/span><\/li>/);

    // The pending grant, with the hash to approve it by; never written.
    const hash = t!.pending.changes[0]!.hash;
    expect(t!.pending.changes).toEqual([{ hash, kind: 'apikey', action: 'create', key: 'ops-root', rules: ['superuser'] }]);
    expect(html).toContain(`<code class="hash">${hash}</code>`);
    expect(emulator.state().apikeys.map((k) => k.name)).not.toContain('ops-root');

    expect(t!.nextExpiry).toBe(expiresAt);
    expect(html).toContain(`<span class="next-expiry">${expiresAt}</span>`);

    // The audit tail is the audit log's lines (here all of them: fewer than 50).
    const fileLines = (await readFile(join(dir, 'audit.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as { key: string });
    expect(doc.audit!.lines.map((l) => l.key)).toEqual(fileLines.map((l) => l.key));
    expect(html).toContain(`<td><code>${escapedHostile}</code></td><td>applied</td>`);
  });
});

describe('the status page of a fleet', () => {
  it('one section per target, each with its own run; the hostile name of one target escaped; no token', async () => {
    const { emulator, daemon } = await fleetScenario(dir);
    cleanups.push(() => daemon.stop(), () => emulator.close());
    const { html, doc } = await both(daemon);

    expect(html).toContain('<title>amsync fleet status (2 targets)</title>');
    expect(doc.daemon.fleet).toBe(true);
    expect(doc.targets.map((t) => [t.name, t.url, t.lastRun?.outcome])).toEqual([
      ['blue', emulator.tenant('blue').url, 'partial'],
      ['green', emulator.tenant('green').url, 'success'],
    ]);
    expect(html).toMatch(/<h2 class="target-name">blue<\/h2>[\s\S]*<h2 class="target-name">green<\/h2>/);
    const [blue, green] = doc.targets;
    expect(blue!.lastRun!.changes.map((c) => c.key)).toContain(hostileName);
    expect(green!.lastRun!.changes.map((c) => c.key).sort()).toEqual(['deploy', 'zz-refused']);
    expect(blue!.lastRun!.failures.map((f) => f.key)).toEqual(['zz-refused']);
    expect(green!.lastRun!.failures).toEqual([]);
    // Each target's page section agrees with its tenant's request log.
    expect(emulator.tenant('green').requests().filter((r) => r.method === 'POST' && r.status < 300)).toHaveLength(2);
    expect(emulator.tenant('blue').requests().filter((r) => r.method === 'DELETE' && r.status < 300)).toHaveLength(1);
    expect(html).toContain(escapedHostile);
    expect(html).not.toMatch(/<script|<img/i);
    expect(doc.audit!.lines.map((l) => l.target)).toEqual(expect.arrayContaining(['blue', 'green']));
    expectNoSecret(html, JSON.stringify(doc));
  });
});
