import { describe, expect, it } from 'vitest';
import { SafetyError } from '../../../src/errors.js';
import type { Change, Plan } from '../../../src/model/index.js';
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

describe('the fleet summary line', () => {
  it('counts what is not 0', () => {
    const outcomes = [...Array.from({ length: 3 }, (_, i) => outcome(`c${i}`, 'changed')), outcome('f', 'failed'), ...Array.from({ length: 8 }, (_, i) => outcome(`u${i}`, 'unchanged'))];
    expect(fleetSummaryLine(summarizeFleet(outcomes))).toBe('Fleet: 12 targets — 3 with changes, 1 failed, 8 unchanged\n');
    expect(fleetSummaryLine(summarizeFleet([outcome('a', 'refused')]))).toBe('Fleet: 1 target — 1 refused\n');
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
