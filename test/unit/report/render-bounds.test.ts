import { describe, expect, it } from 'vitest';
import type { ChangeResult } from '../../../src/model/index.js';
import { plan } from '../../../src/plan/index.js';
import { renderMarkdown, renderText } from '../../../src/report/index.js';
import { actual, desired, policyFor, secret, user } from '../../helpers/plan-fixtures.js';

/** 1,700 users to create and 2,000 by hand on the service: the sizes the field report met. */
const d = desired({ sshUsers: Array.from({ length: 1_700 }, (_, i) => user(`new-user-with-a-longish-name-${String(i).padStart(4, '0')}`, { password: secret('pw') })) });
const remote = actual(Array.from({ length: 2_000 }, (_, i) => ({ id: 10_000 + i, username: `hand-made-${i}`, level: 'n1' })));
const big = plan(d, remote, policyFor(d));
const results: ChangeResult[] = big.changes.map((c) => ({ kind: c.kind, key: c.key, action: c.action, status: 'applied' }));

describe('output that fits where it goes', () => {
  it('the plan is as big as the field report said (unbounded it would not fit a GitHub comment)', () => {
    expect(big.changes).toHaveLength(1_700);
    expect(big.unmanaged).toHaveLength(2_000);
    expect(renderMarkdown({ plan: big, dryRun: true }).length).toBeGreaterThan(65_536);
  });

  it('Markdown stays under 60,000 characters, and says exactly how many changes were left out and where they are', () => {
    const md = renderMarkdown({ plan: big, dryRun: true, file: 'access.yaml', planFile: 'plan.json' }, { maxChars: 60_000, reportFile: 'report.json' });
    expect(md.length).toBeLessThanOrEqual(60_000);
    const rows = md.split('\n').filter((l) => l.startsWith('| ➕ create |')).length;
    expect(rows).toBeGreaterThan(100);
    expect(md).toContain(`**${(1_700 - rows).toLocaleString('en-US')} of 1,700 changes are not shown** to keep this summary under GitHub's size limit; every one is in the saved plan \`plan.json\` and in the report \`report.json\`.`);
    // The summary line and the count of unmanaged items survive the cut.
    expect(md).toContain('**1700 to create, 0 to update, 0 to delete**');
    expect(md).toContain('<details><summary>2,000 unmanaged (not in the file, not pruned)</summary>');
    expect(md).toContain('- … and 2,000 more; every one is in the saved plan');
  });

  it('with results too, and without a saved plan it says how to get everything', () => {
    const md = renderMarkdown({ plan: big, dryRun: false, results }, { maxChars: 60_000 });
    expect(md.length).toBeLessThanOrEqual(60_000);
    expect(md).toMatch(/\*\*[\d,]+ of 1,700 changes are not shown\*\*.*run `amsync plan --json` \(or add `--report FILE`\) for every one\./);
    expect(md).toContain('**1,700 of 1,700 results are not shown**');
  });

  it('a plan that fits is not cut', () => {
    const small = plan(desired({ sshUsers: [user('a', { password: secret('pw') })] }), actual([{ id: 1, username: 'b', level: 'n1' }]), policyFor(desired()));
    const md = renderMarkdown({ plan: small, dryRun: true }, { maxChars: 60_000 });
    expect(md).toBe(renderMarkdown({ plan: small, dryRun: true }));
    expect(md).not.toContain('not shown');
  });

  it('text lists the unmanaged one a line, and cuts after 50 with a count', () => {
    const text = renderText({ plan: big, dryRun: true }, { color: false });
    const lines = text.split('\n');
    const start = lines.indexOf('Unmanaged (not in the file, not pruned):');
    expect(lines.slice(start + 1, start + 3)).toEqual(['  sshUser "hand-made-0" (id 10000)', '  sshUser "hand-made-1" (id 10001)']);
    expect(lines[start + 51]).toBe('  … and 1,950 more (all of them: --json, or --report FILE)');
    expect(Math.max(...lines.map((l) => l.length))).toBeLessThan(200);
  });

  it('text lists the protected the same way', () => {
    const withProtect = desired({ protect: { sshUsers: ['hand-made-*'], apikeys: [] }, prune: { sshUsers: true, apikeys: false } });
    const p = plan(withProtect, remote, policyFor(withProtect));
    expect(p.protected).toHaveLength(2_000);
    const text = renderText({ plan: p, dryRun: true }, { color: false, listLimit: 3 });
    // Sorted by name, as the planner lists them.
    expect(text).toContain('Protected (left alone by a protect glob):\n  sshUser "hand-made-0" (id 10000)\n  sshUser "hand-made-1" (id 10001)\n  sshUser "hand-made-10" (id 10010)\n  … and 1,997 more');
  });
});
