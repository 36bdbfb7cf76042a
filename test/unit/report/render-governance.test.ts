import { describe, expect, it } from 'vitest';
import type { ApprovalStatus, Plan } from '../../../src/model/index.js';
import { renderJson, renderMarkdown, renderText, type Report } from '../../../src/report/index.js';

/** DESIGN.md §10 in the reports: which file asks for each change, and which need approval. */

const plan: Plan = {
  changes: [
    { kind: 'apikey', action: 'create', key: 'ops-root', id: null, source: { file: 'teams/ops.yaml', line: 12, col: 5 }, fields: { name: { before: null, after: 'ops-root' }, superuser: { before: null, after: true }, roles: { before: null, after: [] } } },
    { kind: 'apikey', action: 'delete', key: 'stale', id: 9, reason: 'prune: not declared', source: { file: 'teams/policy.yaml', line: 7, col: 1 }, fields: { name: { before: 'stale', after: null }, superuser: { before: false, after: null }, roles: { before: [], after: null } } },
  ],
  unchanged: 1,
  unmanaged: [],
  protected: [],
  problems: [],
  notes: [],
};
const approval: ApprovalStatus = {
  review: { gates: [{ index: 0, hash: '3f9c0a1be27d4410', rules: ['superuser'] }], setHash: '9a8b7c6d5e4f3a2b', violations: [], warnings: [{ rule: 'maxSuperuserKeys', message: 'the service has 3 superuser apikeys' }] },
  approved: [],
  withheld: [0],
};
const report: Report = { plan, dryRun: true, file: 'teams', sources: true, approval };

describe('reports of a state made of several files', () => {
  it('text: `# from FILE:LINE:COL` under each change, the gate with its hash, and how to approve', () => {
    const text = renderText(report, { color: false });
    expect(text).toContain('  # apikey "ops-root" will be created\n  # from teams/ops.yaml:12:5\n  # needs approval (superuser): 3f9c0a1be27d4410\n  + apikey "ops-root" {');
    expect(text).toContain('  # apikey "stale" (id 9) will be deleted (prune: not declared)\n  # from teams/policy.yaml:7:1\n');
    expect(text).toContain('Needs approval: 1 of the changes escalates privilege; amsync applies it only when approved.\n  3f9c0a1be27d4410  create apikey "ops-root" (superuser)\n  To approve: --approve 9a8b7c6d5e4f3a2b');
    expect(text).toContain('Policy: maxSuperuserKeys: the service has 3 superuser apikeys');
  });

  it('JSON: "source" and "approval" on each change, the set hash and what is pending', () => {
    const doc = JSON.parse(renderJson(report));
    expect(doc.changes[0]).toMatchObject({ source: 'teams/ops.yaml:12:5', approval: { hash: '3f9c0a1be27d4410', rules: ['superuser'], approved: false } });
    expect(doc.changes[1]).toMatchObject({ source: 'teams/policy.yaml:7:1' });
    expect(doc.changes[1].approval).toBeUndefined();
    expect(doc.approvals).toEqual({ setHash: '9a8b7c6d5e4f3a2b', approved: [], pending: ['3f9c0a1be27d4410'], withheld: [{ kind: 'apikey', action: 'create', key: 'ops-root', id: null }] });
    expect(doc.policyWarnings).toEqual([{ rule: 'maxSuperuserKeys', message: 'the service has 3 superuser apikeys' }]);
  });

  it('Markdown: a source column and an approval column, and the set hash to approve', () => {
    const md = renderMarkdown(report);
    expect(md).toContain('| action | kind | key | id | source | approval | fields |');
    expect(md).toContain('| ➕ create | apikey | `ops-root` |  | `teams/ops.yaml:12:5` | 🔐 needs approval `3f9c0a1be27d4410` (superuser) | ');
    expect(md).toContain('approve them all with `--approve 9a8b7c6d5e4f3a2b`');
  });

  it('without several files and without a policy, nothing changes', () => {
    const plain: Report = { plan, dryRun: true, file: 'access.yaml' };
    expect(renderText(plain, { color: false })).not.toContain('# from');
    expect(JSON.parse(renderJson(plain)).changes[0]).toEqual({ kind: 'apikey', action: 'create', key: 'ops-root', id: null, fields: plan.changes[0]!.fields });
    expect(renderMarkdown(plain)).toContain('| action | kind | key | id | fields |');
  });
});
