import type { Kind, Plan } from '../model/index.js';

/** A scope as `GET /api/user/info` answers it: what the token may do on one part of the API. */
export interface TokenScope {
  readonly name: string;
  readonly read: boolean;
  readonly write: boolean;
}

/** Scope names of each kind (`sshusers`, `apikeys`, `3rdparty.apikeys`...), matched loosely. */
const scopeOf: Record<Kind, RegExp> = {
  sshUser: /ssh[-_.]?users?/i,
  apikey: /api[-_.]?keys?/i,
};

/**
 * The kinds the plan writes that the token's scopes say it may not write. Pure. A kind with
 * no scope of its name in the answer is left alone: scope names are not promised by the
 * spec, and a guess must never stop a run that the service would allow.
 */
export function kindsWithoutWriteScope(plan: Plan, scopes: readonly TokenScope[]): Kind[] {
  const written = new Set(plan.changes.map((c) => c.kind));
  return (['sshUser', 'apikey'] as const).filter((kind) => {
    if (!written.has(kind)) return false;
    const matching = scopes.filter((s) => scopeOf[kind].test(s.name));
    return matching.length > 0 && !matching.some((s) => s.write);
  });
}
