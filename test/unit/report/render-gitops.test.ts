import { describe, expect, it } from 'vitest';
import { reportDocument } from '../../../src/app/index.js';
import type { ChangeResult } from '../../../src/model/index.js';
import { diffActualStates, renderStaleMarkdown } from '../../../src/saved-plan/index.js';
import { plan } from '../../../src/plan/index.js';
import { renderMarkdown } from '../../../src/report/index.js';
import { actual, desired, key, policyFor, secret, user } from '../../helpers/plan-fixtures.js';

const canary = 'CANARY-pw-77e0';
const d = desired({
  sshUsers: [user('deploy', { password: secret(canary) }), user('old-contractor', { ensure: 'absent' })],
  apikeys: [key('billing-integration', { roles: [3, 7] })],
});
const remote = actual([{ id: 5, username: 'old-contractor', level: 'n1' }], [{ id: 2, name: 'billing-integration', superuser: false, roles: [1] }]);
const p = plan(d, remote, policyFor(d));
const results: ChangeResult[] = [
  { kind: 'sshUser', key: 'deploy', action: 'create', status: 'applied', id: 6 },
  { kind: 'sshUser', key: 'old-contractor', action: 'delete', status: 'applied', id: 5, drift: 'was already deleted' },
  { kind: 'apikey', key: 'billing-integration', action: 'update', status: 'failed', id: 2, error: 'PUT /api/3rdparty/apikeys/2: 503 unavailable' },
];

describe('the Markdown summary of a saved plan', () => {
  it('says where the plan was saved and what `amsync apply` will do with it', () => {
    expect(renderMarkdown({ plan: p, dryRun: true, file: 'access.yaml', planFile: 'plan.json' })).toMatchInlineSnapshot(`
      "### amsync plan for \`access.yaml\`

      Saved as \`plan.json\`: \`amsync apply\` applies exactly these changes, and refuses if the file or the service changed first.

      **1 to create, 1 to update, 1 to delete**, 0 unchanged, 0 unmanaged.

      | action | kind | key | id | fields |
      |---|---|---|---|---|
      | ➕ create | sshUser | \`deploy\` |  | \`username: "deploy"\`<br>\`level: "n1"\`<br>\`password: (sensitive)\` |
      | ➖ delete | sshUser | \`old-contractor\` | 5 | \`username: "old-contractor"\`<br>\`level: "n1"\` |
      | 🔄 update | apikey | \`billing-integration\` | 2 | \`roles: [1] → [3, 7]\` |
      "
    `);
  });

  it('shows an apply of it with its results, drift and failures', () => {
    expect(renderMarkdown({ plan: p, dryRun: false, results, file: 'access.yaml', command: 'apply', planFile: 'plan.json' })).toMatchInlineSnapshot(`
      "### amsync apply for \`access.yaml\`

      Applied from the saved plan \`plan.json\`, exactly as reviewed.

      **1 to create, 1 to update, 1 to delete**, 0 unchanged, 0 unmanaged.

      | action | kind | key | id | fields |
      |---|---|---|---|---|
      | ➕ create | sshUser | \`deploy\` |  | \`username: "deploy"\`<br>\`level: "n1"\`<br>\`password: (sensitive)\` |
      | ➖ delete | sshUser | \`old-contractor\` | 5 | \`username: "old-contractor"\`<br>\`level: "n1"\` |
      | 🔄 update | apikey | \`billing-integration\` | 2 | \`roles: [1] → [3, 7]\` |

      | result | kind | key | action | detail |
      |---|---|---|---|---|
      | ✅ applied | sshUser | \`deploy\` | create |  |
      | ✅ applied | sshUser | \`old-contractor\` | delete | drift: was already deleted |
      | ❌ failed | apikey | \`billing-integration\` | update | PUT /api/3rdparty/apikeys/2: 503 unavailable |
      "
    `);
  });

  it('keeps its old title when no command is given (plan and sync output is unchanged)', () => {
    expect(renderMarkdown({ plan: p, dryRun: false, results }).split('\n')[0]).toBe('### amsync sync');
    expect(renderMarkdown({ plan: p, dryRun: true }).split('\n')[0]).toBe('### amsync plan');
  });
});

describe('the Markdown summary of a stale plan', () => {
  it('lists what changed on the service, escaped', () => {
    const after = actual([{ id: 9, username: 'carol|`x`', level: 'n1' }], [{ id: 2, name: 'billing-integration', superuser: false, roles: [1, 4] }]);
    expect(renderStaleMarkdown('plan.json', { reason: 'service', changes: diffActualStates(remote, after) })).toMatchInlineSnapshot(`
      "### amsync apply: refused, the saved plan is stale

      The service changed since \`plan.json\` was made (3 items). **Nothing was written.** Plan again and review the new plan.

      | kind | key | id | what changed |
      |---|---|---|---|
      | sshUser | \`carol\\| x \` | 9 | created |
      | sshUser | \`old-contractor\` | 5 | deleted |
      | apikey | \`billing-integration\` | 2 | \`roles: [1] → [1, 4]\` |
      "
    `);
  });

  it('says so when the desired file changed', () => {
    expect(renderStaleMarkdown('plan.json', { reason: 'desired_file', desiredFile: 'access.yaml' })).toContain('`access.yaml` changed since `plan.json` was made. **Nothing was written.**');
  });
});

describe('the --report document', () => {
  it('is the --json document with a timestamp, and the refusal when there was one', () => {
    const doc = reportDocument({ plan: p, dryRun: false, results }, new Date('2025-01-02T03:04:05Z'), { code: 'deletion_budget', message: 'refusing' });
    expect(Object.keys(doc)).toEqual(['formatVersion', 'timestamp', 'dryRun', 'summary', 'changes', 'unmanaged', 'results', 'refusal']);
    expect(doc.timestamp).toBe('2025-01-02T03:04:05.000Z');
    expect(JSON.stringify(doc)).not.toContain(canary);
  });
});
