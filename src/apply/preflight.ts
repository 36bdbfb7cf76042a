import { AmsyncError } from '../errors.js';
import type { AccessService, Plan } from '../model/index.js';
import { kindsWithoutWriteScope } from '../plan/index.js';

const kindWords = { sshUser: 'SSH users', apikey: 'apikeys' } as const;

/**
 * Before the first write: where the service answers `GET /api/user/info`, a token whose
 * scopes do not allow writing a kind the plan changes fails the run at once, in one line,
 * instead of one 403 per item. Where it does not answer (404, or any failure), nothing
 * changes: the writes go ahead and say for themselves what they may not do.
 */
export async function preflightScopes(plan: Plan, service: Pick<AccessService, 'userInfo'>): Promise<void> {
  if (plan.changes.length === 0) return;
  let info;
  try {
    info = await service.userInfo();
  } catch {
    return;
  }
  if (info === null) return;
  const missing = kindsWithoutWriteScope(plan, info.scopes);
  if (missing.length === 0) return;
  const what = missing.map((k) => kindWords[k]).join(' or ');
  throw new AmsyncError(
    'insufficient_scope',
    `the token may not change ${what}: GET /api/user/info gives it no write scope for them (a read-only token?); nothing was changed. Give the integration a role that may write ${what}`,
  );
}
