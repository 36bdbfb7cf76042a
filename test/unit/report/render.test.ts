import { describe, expect, it } from 'vitest';
import type { ChangeResult } from '../../../src/model/index.js';
import { plan } from '../../../src/plan/index.js';
import { applySummary, renderJson, renderMarkdown, renderText } from '../../../src/report/index.js';
import { actual, desired, key, policyFor, secret, user } from '../../helpers/plan-fixtures.js';

const canary = 'CANARY-pw-9f3b1c';
const d = desired({
  sshUsers: [user('deploy', { password: secret(canary) }), user('old-contractor', { ensure: 'absent' })],
  apikeys: [key('billing-integration', { roles: [3, 7] })],
});
const remote = actual(
  [{ id: 5, username: 'old-contractor', level: 'n1' }],
  [{ id: 2, name: 'billing-integration', superuser: false, roles: [1] }, { id: 9, name: 'manual|`key`', superuser: false, roles: [] }],
);
const p = plan(d, remote, policyFor(d));
const results: ChangeResult[] = [
  { kind: 'sshUser', key: 'deploy', action: 'create', status: 'applied' },
  { kind: 'sshUser', key: 'old-contractor', action: 'delete', status: 'failed', error: 'DELETE /api/sshusers/5: 503 unavailable' },
  { kind: 'apikey', key: 'billing-integration', action: 'update', status: 'applied', drift: 'adopted existing apikey id 2' },
];

describe('the text plan', () => {
  it('reads like terraform plan, with markers, field diffs and a summary line', () => {
    expect(renderText({ plan: p, dryRun: true }, { color: false })).toMatchInlineSnapshot(`
      "amsync will perform the following actions:

        # sshUser "deploy" will be created
        + sshUser "deploy" {
            + username = "deploy"
            + level    = "n1"
            + password = (sensitive)
          }

        # sshUser "old-contractor" (id 5) will be deleted (ensure: absent)
        - sshUser "old-contractor" {
            - username = "old-contractor"
            - level    = "n1"
          }

        # apikey "billing-integration" (id 2) will be updated in place
        ~ apikey "billing-integration" {
            ~ roles = [1] -> [3, 7]
          }

      Unmanaged (not in the file, not pruned):
        apikey "manual|\`key\`" (id 9)

      Plan: 1 to create, 1 to update, 1 to delete, 0 unchanged, 1 unmanaged.
      "
    `);
  });

  it('says "No changes" when there are none', () => {
    const none = plan(desired(), actual(), policyFor(desired()));
    expect(renderText({ plan: none, dryRun: true }, { color: false })).toMatch(/^No changes\./m);
  });

  it('colours only when asked', () => {
    expect(renderText({ plan: p, dryRun: true }, { color: true })).toContain('\u001b[32m+\u001b[39m');
    expect(renderText({ plan: p, dryRun: true }, { color: false })).not.toContain('\u001b[');
  });

  it('quotes names so a terminal escape from the service cannot rewrite the screen', () => {
    const evil = actual([{ id: 1, username: 'x\u001b[2Jy', level: 'n1' }]);
    const out = renderText({ plan: plan(desired(), evil, policyFor(desired())), dryRun: true }, { color: false });
    expect(out).not.toContain('\u001b');
    expect(out).toContain('"x\\u001b[2Jy"');
  });

  it('never sends a control character from a message or an error to the terminal', () => {
    const evil = actual([], [{ id: 1, name: 'k\u001b]0;pwned\u0007', superuser: false, roles: [] }, { id: 2, name: 'k\u001b]0;pwned\u0007', superuser: false, roles: [] }]);
    const d2 = desired({ apikeys: [key('k\u001b]0;pwned\u0007')] });
    const out = renderText(
      { plan: plan(d2, evil, policyFor(d2)), dryRun: false, results: [{ kind: 'apikey', key: 'k', action: 'create', status: 'failed', error: 'msg\u001b[2J from the service' }] },
      { color: false },
    );
    // Nothing below a space but the newlines the layout itself puts in.
    expect([...out].filter((ch) => ch !== '\n' && (ch.charCodeAt(0) < 0x20 || ch.charCodeAt(0) === 0x7f))).toEqual([]);
  });

  it('lists results after an apply', () => {
    const out = renderText({ plan: p, dryRun: false, results }, { color: false });
    expect(out).toContain('✓ created sshUser "deploy"');
    expect(out).toContain('✗ failed to delete sshUser "old-contractor": DELETE /api/sshusers/5: 503 unavailable');
    expect(out).toContain('Apply: 2 applied, 1 failed, 0 skipped.');
  });
});

describe('the JSON plan', () => {
  it('has exactly the shape of DESIGN.md §5', () => {
    const doc = JSON.parse(renderJson({ plan: p, dryRun: true }));
    expect(Object.keys(doc)).toEqual(['formatVersion', 'dryRun', 'summary', 'changes', 'unmanaged']);
    expect(doc.summary).toEqual({ create: 1, update: 1, delete: 1, unchanged: 0, unmanaged: 1 });
    expect(doc.changes[0]).toEqual({
      kind: 'sshUser', action: 'create', key: 'deploy', id: null,
      fields: { username: { before: null, after: 'deploy' }, level: { before: null, after: 'n1' }, password: { before: null, after: '(sensitive)' } },
    });
    expect(doc.unmanaged).toEqual([{ kind: 'apikey', key: 'manual|`key`', id: 9 }]);
  });

  it('adds results only when something was applied', () => {
    const doc = JSON.parse(renderJson({ plan: p, dryRun: false, results }));
    expect(doc.results).toEqual([
      { kind: 'sshUser', key: 'deploy', action: 'create', status: 'applied' },
      { kind: 'sshUser', key: 'old-contractor', action: 'delete', status: 'failed', error: 'DELETE /api/sshusers/5: 503 unavailable' },
      { kind: 'apikey', key: 'billing-integration', action: 'update', status: 'applied', drift: 'adopted existing apikey id 2' },
    ]);
  });
});

describe('the Markdown summary', () => {
  it('is a redacted table for pull requests', () => {
    expect(renderMarkdown({ plan: p, dryRun: true, file: 'access.yaml' })).toMatchInlineSnapshot(`
      "### amsync plan for \`access.yaml\`

      **1 to create, 1 to update, 1 to delete**, 0 unchanged, 1 unmanaged.

      | action | kind | key | id | fields |
      |---|---|---|---|---|
      | ➕ create | sshUser | \`deploy\` |  | \`username: "deploy"\`<br>\`level: "n1"\`<br>\`password: (sensitive)\` |
      | ➖ delete | sshUser | \`old-contractor\` | 5 | \`username: "old-contractor"\`<br>\`level: "n1"\` |
      | 🔄 update | apikey | \`billing-integration\` | 2 | \`roles: [1] → [3, 7]\` |

      <details><summary>1 unmanaged (not in the file, not pruned)</summary>

      - apikey \`manual\\| key \` (id 9)

      </details>
      "
    `);
  });
});

describe('every format', () => {
  it('never contains a secret value', () => {
    for (const out of [
      renderText({ plan: p, dryRun: false, results }, { color: false }),
      renderJson({ plan: p, dryRun: false, results }),
      renderMarkdown({ plan: p, dryRun: false, results }),
      JSON.stringify(p),
    ]) {
      expect(out).not.toContain(canary);
    }
  });
});

describe('results after an interrupt: what was never sent is counted, not listed', () => {
  const stopped: ChangeResult[] = [
    { kind: 'sshUser', key: 'deploy', action: 'create', status: 'applied' },
    { kind: 'sshUser', key: 'old-contractor', action: 'delete', status: 'failed', error: 'DELETE /api/sshusers/5: 503 service unavailable; not retried: interrupted (SIGINT)' },
    ...Array.from({ length: 40 }, (_, i): ChangeResult => ({ kind: 'sshUser', key: `u${i}`, action: 'create', status: 'skipped', error: 'not started: interrupted (SIGINT)', notStarted: true })),
    { kind: 'apikey', key: 'billing-integration', action: 'update', status: 'skipped', error: 'waits for the create of sshUser "x", which did not apply' },
  ];

  it('text: one line for the changes not started, and their count in the summary', () => {
    const out = renderText({ plan: p, dryRun: false, results: stopped }, { color: false });
    expect(out.split('\n').filter((l) => l.includes('not started'))).toEqual(['· 40 changes not started: interrupted (SIGINT)', 'Apply: 1 applied, 1 failed, 1 skipped, 40 not started.']);
    expect(out).toContain('· skipped update of apikey "billing-integration": waits for');
    expect(out).not.toContain('sshUser "u0"');
  });

  it('the summary is unchanged when nothing was stopped', () => {
    expect(applySummary(results)).toBe('\nApply: 2 applied, 1 failed, 0 skipped.\n');
  });

  it('JSON: every result is there, those not started marked so', () => {
    const doc = JSON.parse(renderJson({ plan: p, dryRun: false, results: stopped }));
    expect(doc.results).toHaveLength(43);
    expect(doc.results.filter((r: { notStarted?: boolean }) => r.notStarted === true)).toHaveLength(40);
    expect(doc.results[2]).toEqual({ kind: 'sshUser', key: 'u0', action: 'create', status: 'skipped', error: 'not started: interrupted (SIGINT)', notStarted: true });
    expect(doc.results[0]).toEqual({ kind: 'sshUser', key: 'deploy', action: 'create', status: 'applied' });
  });

  it('Markdown: rows for what was sent, one line for what was not', () => {
    const md = renderMarkdown({ plan: p, dryRun: false, results: stopped });
    expect(md).toContain('⏭️ **40 changes** not started: interrupted (SIGINT)');
    expect(md).not.toContain('`u0`');
  });
});
