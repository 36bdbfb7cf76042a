import { describe, expect, it } from 'vitest';
import { plan } from '../../../src/plan/index.js';
import { renderJson, renderMarkdown, renderText } from '../../../src/report/index.js';
import { actual, desired, key, policyFor } from '../../helpers/plan-fixtures.js';

/** Plans and reports show role names beside ids when they are known: `roles = [3 auditor, 7 billing]`. */

const d = desired({ apikeys: [key('billing-integration', { roles: [3, 7] }), key('new-key', { roles: [3, 12] })] });
const remote = actual([], [{ id: 2, name: 'billing-integration', superuser: false, roles: [1] }]);
const p = plan(d, remote, policyFor(d));
const roleNames = new Map([
  [1, 'viewer'],
  [3, 'auditor'],
  [7, 'billing ops'],
]);

describe('role names in plans and reports', () => {
  it('the text plan names the roles it knows; an id without a name stays an id; odd names are quoted', () => {
    const text = renderText({ plan: p, dryRun: true, roleNames }, { color: false });
    expect(text).toContain('~ roles = [1 viewer] -> [3 auditor, 7 "billing ops"]');
    expect(text).toContain('+ roles     = [3 auditor, 12]');
  });

  it('without names, ids as before', () => {
    expect(renderText({ plan: p, dryRun: true }, { color: false })).toContain('~ roles = [1] -> [3, 7]');
  });

  it('Markdown too', () => {
    expect(renderMarkdown({ plan: p, dryRun: true, roleNames })).toContain('`roles: [1 viewer] → [3 auditor, 7 "billing ops"]`');
  });

  it('JSON keeps ids in the fields and adds the names of the roles the changes mention', () => {
    const doc = JSON.parse(renderJson({ plan: p, dryRun: true, roleNames })) as Record<string, unknown>;
    expect(doc.roleNames).toEqual({ 1: 'viewer', 3: 'auditor', 7: 'billing ops' });
    expect(JSON.stringify(doc.changes)).toContain('"after":[3,7]');
    expect(JSON.parse(renderJson({ plan: p, dryRun: true }))).not.toHaveProperty('roleNames');
  });

  it('a name holding control characters cannot forge a line', () => {
    const text = renderText({ plan: p, dryRun: true, roleNames: new Map([[3, 'x\n  + fake = 1']]) }, { color: false });
    expect(text).toContain('[3 "x\\n  + fake = 1", 7]');
  });
});
