import { describe, expect, it } from 'vitest';
import { AmsyncError, SafetyError } from '../../../src/errors.js';
import type { Change, ChangeResult, Plan } from '../../../src/model/index.js';
import {
  classifyRun,
  fleetExitCode,
  fleetSummaryLine,
  outcomeOfError,
  perTargetStateFile,
  renderFleetMarkdown,
  summarizeFleet,
  targetSettings,
  toFleetJsonDocument,
  type Target,
  type TargetOutcome,
  type TargetStatus,
} from '../../../src/fleet/index.js';
import { defaultSettings } from '../../../src/settings/index.js';
import { Secret } from '../../../src/secrets/index.js';

const emptyPlan: Plan = { changes: [], unchanged: 3, unmanaged: [], protected: [], problems: [], notes: [] };
const create = (key: string): Change => ({ kind: 'sshUser', action: 'create', key, id: null, fields: { username: { before: null, after: key } } });
const planWith = (n: number): Plan => ({ ...emptyPlan, changes: Array.from({ length: n }, (_, i) => create(`user-${i}`)) });
const outcome = (name: string, status: TargetStatus, plan?: Plan): TargetOutcome => ({ name, url: `https://${name}.example.com`, status, ...(plan ? { plan } : {}), ...(status === 'failed' || status === 'refused' ? { error: { code: 'x', message: `${name} went wrong` } } : {}) });

describe('the fleet exit code: 1 if any failed, else 3 if any refused, else 2 (--detailed-exitcode, dry-run) if any changes, else 0', () => {
  const code = (statuses: TargetStatus[], dryRun = true, detailedExitcode = true) => fleetExitCode(summarizeFleet(statuses.map((s, i) => outcome(`t${i}`, s))), { dryRun, detailedExitcode });

  it.each([
    [['unchanged', 'unchanged'], 0],
    [['changed', 'unchanged'], 2],
    [['changed', 'refused', 'unchanged'], 3],
    [['refused', 'failed', 'changed'], 1],
    [['failed'], 1],
    [['skipped', 'unchanged'], 0],
    [['refused', 'skipped'], 3],
  ] as [TargetStatus[], number][])('%j -> %i', (statuses, expected) => {
    expect(code(statuses)).toBe(expected);
  });

  it('changes give 2 only for a dry-run with --detailed-exitcode', () => {
    expect(code(['changed'], true, false)).toBe(0);
    expect(code(['changed'], false, true)).toBe(0);
  });
});

describe('a target run becomes an outcome by the rules sync exits by', () => {
  const t = { name: 'sp-1', url: 'https://sp-1' };
  it('a state file refused mid-run: the line names the path, its setting, the errno and its fix, not Node\'s raw message (issue 27, deliverable 6)', () => {
    const erofs = Object.assign(new Error("EROFS: read-only file system, open '/s/.state.sp-1.json.tmp'"), { code: 'EROFS' });
    const outcome = classifyRun(t, { plan: planWith(1), results: [], stateSaveError: erofs }, '/s/state.sp-1.json');
    expect(outcome).toMatchObject({ status: 'failed', error: { code: 'state_not_saved' } });
    const message = outcome.error!.message;
    expect(message).toContain('/s/state.sp-1.json');
    expect(message).toMatch(/--state-file, AMSYNC_STATE_FILE, stateFile/);
    expect(message).toContain('the file system is read-only (EROFS)');
    expect(message).toContain('point --state-file at a writable file system');
    expect(message).not.toContain('EROFS: read-only file system, open');
  });
  it('refused, failed (problems, failed changes, token files, state file), changed, unchanged', () => {
    expect(classifyRun(t, { plan: planWith(2), refusal: new SafetyError('deletion_budget', 'too many') }).status).toBe('refused');
    expect(classifyRun(t, { plan: { ...emptyPlan, problems: [{ kind: 'sshUser', key: 'a', code: 'missing_password', message: 'm' }] } })).toMatchObject({ status: 'failed', error: { code: 'plan_problems' } });
    expect(classifyRun(t, { plan: planWith(1), results: [{ kind: 'sshUser', key: 'user-0', action: 'create', status: 'failed', error: 'e' }] })).toMatchObject({ status: 'failed', error: { code: 'changes_failed' } });
    expect(classifyRun(t, { plan: planWith(1), results: [{ kind: 'sshUser', key: 'user-0', action: 'create', status: 'applied' }], tokenErrors: [{ key: 'ci', error: 'a FIFO' }] })).toMatchObject({ status: 'failed', notes: ['error: apikey "ci": a FIFO'] });
    expect(classifyRun(t, { plan: planWith(1), results: [], stateSaveError: new Error('ENOSPC') }, '/s/state.sp-1.json')).toMatchObject({ status: 'failed', error: { code: 'state_not_saved' } });
    expect(classifyRun(t, { plan: planWith(1) }).status).toBe('changed');
    expect(classifyRun(t, { plan: emptyPlan }).status).toBe('unchanged');
    expect(outcomeOfError(t, new SafetyError('stale_plan', 's')).status).toBe('refused');
    expect(outcomeOfError(t, new Error('boom'))).toMatchObject({ status: 'failed', error: { code: 'unexpected', message: 'boom' } });
  });
});

describe('a target the interrupt stopped mid-run: what it sent is applied, what it never sent is not started, not failed', () => {
  const t = { name: 'sp-1', url: 'https://sp-1' };
  const applied = (i: number): ChangeResult => ({ kind: 'sshUser', key: `user-${i}`, action: 'create', status: 'applied' });
  const notStarted = (i: number): ChangeResult => ({ kind: 'sshUser', key: `user-${i}`, action: 'create', status: 'skipped', error: 'not started: interrupted (SIGINT)', notStarted: true });
  const failed = (i: number): ChangeResult => ({ kind: 'sshUser', key: `user-${i}`, action: 'create', status: 'failed', error: '400' });
  const results = (...r: ChangeResult[]) => ({ plan: planWith(r.length), results: r });

  it('nothing failed: interrupted, with the counts of applied and never sent', () => {
    expect(classifyRun(t, results(applied(0), applied(1), notStarted(2), notStarted(3), notStarted(4)), undefined, { interrupted: true })).toMatchObject({
      status: 'interrupted',
      error: { code: 'interrupted', message: 'interrupted: 2 of 5 changes applied, 3 not started (never sent)' },
    });
    // The interrupt came before any write: still interrupted (the target had listed), nothing applied.
    expect(classifyRun(t, results(notStarted(0)), undefined, { interrupted: true })).toMatchObject({ status: 'interrupted', error: { message: 'interrupted: 0 of 1 changes applied, 1 not started (never sent)' } });
  });

  it('a change that failed fails the target; the not started ones are not counted as failed', () => {
    expect(classifyRun(t, results(failed(0), applied(1), notStarted(2), notStarted(3)), undefined, { interrupted: true })).toMatchObject({
      status: 'failed',
      error: { code: 'changes_failed', message: '1 of 4 changes did not apply; 1 applied, 2 not started (never sent)' },
    });
  });

  it('every change sent before the interrupt: changed, as without one', () => {
    expect(classifyRun(t, results(applied(0), applied(1)), undefined, { interrupted: true }).status).toBe('changed');
  });

  it('not started without an interrupt (the writer lock lost mid-run) is a failure, with the lock\'s own message', () => {
    expect(classifyRun(t, results(applied(0), notStarted(1)))).toMatchObject({ status: 'failed', error: { code: 'changes_not_started', message: '1 of 2 changes were not started (never sent); 1 applied' } });
    const lost = new AmsyncError('writer_lock_lost', 'the writer lock was taken over');
    expect(classifyRun(t, { ...results(applied(0), notStarted(1)), lockLost: lost }, undefined, { interrupted: true })).toMatchObject({ status: 'failed', error: { code: 'writer_lock_lost' } });
  });

  it('the exit code counts an interrupted target as no failure (the interrupt\'s 130 / 143 wins)', () => {
    expect(fleetExitCode(summarizeFleet([outcome('a', 'interrupted'), outcome('b', 'skipped')]), { dryRun: false })).toBe(0);
  });
});

describe('the fleet summary line', () => {
  it('counts what is not 0', () => {
    const outcomes = [...Array.from({ length: 3 }, (_, i) => outcome(`c${i}`, 'changed')), outcome('f', 'failed'), ...Array.from({ length: 8 }, (_, i) => outcome(`u${i}`, 'unchanged'))];
    expect(fleetSummaryLine(summarizeFleet(outcomes))).toBe('Fleet: 12 targets — 3 with changes, 1 failed, 8 unchanged\n');
    expect(fleetSummaryLine(summarizeFleet([outcome('a', 'refused')]))).toBe('Fleet: 1 target — 1 refused\n');
    expect(fleetSummaryLine(summarizeFleet([outcome('a', 'changed'), outcome('b', 'interrupted'), outcome('c', 'skipped'), outcome('d', 'skipped')]))).toBe('Fleet: 4 targets — 1 with changes, 1 interrupted, 2 skipped\n');
  });
  it('the JSON summary counts interrupted targets only when there are some', () => {
    expect(summarizeFleet([outcome('a', 'changed')])).toEqual({ targets: 1, changed: 1, failed: 0, refused: 0, skipped: 0, unchanged: 0 });
    expect(summarizeFleet([outcome('a', 'interrupted'), outcome('b', 'skipped')])).toEqual({ targets: 2, changed: 0, failed: 0, refused: 0, skipped: 1, unchanged: 0, interrupted: 1 });
  });
});

describe('the fleet JSON document', () => {
  it('a target never planned has summary null, empty lists and its error', () => {
    const doc = toFleetJsonDocument([outcome('a', 'failed'), outcome('b', 'changed', planWith(1))], { command: 'plan', dryRun: true });
    expect(doc).toMatchObject({ formatVersion: 1, fleet: true, dryRun: true, summary: { targets: 2, changed: 1, failed: 1, refused: 0, skipped: 0, unchanged: 0 } });
    expect((doc.targets as unknown[])[0]).toEqual({ name: 'a', url: 'https://a.example.com', status: 'failed', summary: null, changes: [], unmanaged: [], error: { code: 'x', message: 'a went wrong' } });
    expect((doc.targets as Record<string, unknown>[])[1]).toMatchObject({ name: 'b', status: 'changed', summary: { create: 1 }, error: null });
  });
});

describe('the fleet Markdown summary stays under GitHub\'s comment limit', () => {
  it('500 targets of 200 changes each: cut, with the exact count left out', () => {
    const outcomes = Array.from({ length: 500 }, (_, i) => outcome(`target-${i}`, 'changed', planWith(200)));
    const md = renderFleetMarkdown(outcomes, { command: 'plan', dryRun: true, file: 'access.yaml' }, { maxChars: 60_000 });
    expect(md.length).toBeLessThanOrEqual(60_000);
    expect(md).toContain('**Fleet: 500 targets — 500 with changes**');
    expect(md).toMatch(/The changes of [\d,]+ more targets are not shown to keep this summary under GitHub's size limit/);
  });

  it('so many targets that not every row fits: the rows are cut too, counted', () => {
    const outcomes = Array.from({ length: 3000 }, (_, i) => outcome(`target-${i}`, 'failed'));
    const md = renderFleetMarkdown(outcomes, { command: 'plan', dryRun: true }, { maxChars: 60_000, reportFile: 'report.json' });
    expect(md.length).toBeLessThanOrEqual(60_000);
    expect(md).toMatch(/\*\*[\d,]+ of 3,000 targets are not shown\*\* to keep this summary under GitHub's size limit; every one is in the report `report\.json`\./);
  });

  it('a name cannot inject Markdown', () => {
    const md = renderFleetMarkdown([{ ...outcome('a', 'failed'), error: { code: 'x', message: '<img src=x> | `code`' } }], { command: 'plan', dryRun: true });
    expect(md).not.toMatch(/(?<!\\)<img/);
    expect(md).toContain('\\<img src=x\\> \\| \\`code\\`');
  });
});

describe('each target runs with its own settings', () => {
  const target: Target = {
    name: 'sp-1',
    url: 'https://sp-1.example.com',
    labels: {},
    credentials: { kind: 'token', token: new Secret('t-sp-1') },
    overrides: { rate: 5, caFile: '/ca.pem' },
  };
  it('its URL and credential instead of the command\'s, its overrides, its own state file and token folder', () => {
    const s = targetSettings({ ...defaultSettings, url: 'https://other', tokenFile: '/tok', tokensDir: '/tokens', rate: 50, concurrency: 9 }, target);
    expect(s.url).toBe('https://sp-1.example.com');
    expect(s.tokenFile).toBeUndefined();
    expect(s.token?.reveal()).toBe('t-sp-1');
    expect([s.rate, s.concurrency, s.http.caFile]).toEqual([5, 9, '/ca.pem']);
    expect(s.stateFile).toBe('.amsync/state.sp-1.json');
    expect(s.tokensDir).toBe('/tokens/sp-1');
  });

  it("its own Secret for tokens and generated passwords (NAME-<target>); the command's integrator-key Secret is not the target's", () => {
    const s = targetSettings({ ...defaultSettings, url: 'https://other', kubernetesSecret: 'amsync/tokens', integratorKeySecret: 'amsync/creds/integrator-key' }, target);
    expect(s.kubernetesSecret).toBe('amsync/tokens-sp-1');
    expect(s.integratorKeySecret).toBeUndefined();
    expect(s.token?.reveal()).toBe('t-sp-1');
  });

  it('state files: one per target beside the configured one', () => {
    expect(perTargetStateFile('/var/lib/amsync/state.json', 'rj-2')).toBe('/var/lib/amsync/state.rj-2.json');
    expect(perTargetStateFile('state', 'rj-2')).toBe('state.rj-2');
  });
});
