import type { AccessPolicy, DesiredApikey, DesiredState, Diagnostic, SourcePosition } from '../model/index.js';
import { diagnosticCodes } from '../model/index.js';
import { compileNamePattern, namePatternProblem } from '../glob/index.js';
import { quote } from '../yaml/index.js';

/**
 * The desired state against its own `policy:` (README, "Teams and governance"): every declared item that breaks
 * a rule is an error at the item's position, naming the rule. Pure. `validate` runs it offline,
 * where role names cannot be compared with role ids yet; `plan` and `sync` run it again once
 * names are resolved, so a name and an id of one forbidden role are both caught.
 *
 * Only what the file declares is checked here: what is already on the service (an unmanaged
 * superuser key) is the plan's business (reviewPlan). Items with `ensure: absent` are being
 * deleted and break no rule.
 */
export function checkDesiredPolicy(desired: DesiredState): Diagnostic[] {
  const policy = desired.policy;
  if (!policy) return [];
  const out: Diagnostic[] = [];
  const where = policyWhere(desired);
  const violation = (rule: string, message: string, path: string, position: SourcePosition | undefined): void => {
    out.push({ severity: 'error', code: diagnosticCodes.policyViolation, rule, message: `${message} (policy rule ${rule}${where})`, path, ...(position ? { position } : {}) });
  };
  const usernameOk = matcher(policy.usernamePattern);
  const nameOk = matcher(policy.apikeyNamePattern);
  const levels = policy.levels === undefined ? undefined : new Set(policy.levels);

  const userPath = indexer('sshUsers');
  for (const u of desired.sshUsers) {
    const path = userPath(u.source);
    if (u.ensure !== 'present') continue;
    if (usernameOk && !usernameOk(u.username)) {
      violation('usernamePattern', `username ${quote(u.username)} does not match the usernamePattern ${quote(policy.usernamePattern!)}`, `${path}.username`, u.source);
    }
    if (levels && !levels.has(u.level)) {
      violation('levels', `SSH user ${quote(u.username)} has level ${quote(u.level)}; the policy allows ${[...levels].map((l) => quote(l)).join(', ')}`, `${path}.level`, u.source);
    }
  }

  const keyPath = indexer('apikeys');
  const superusers: { key: DesiredApikey; path: string }[] = [];
  for (const k of desired.apikeys) {
    const path = keyPath(k.source);
    if (k.ensure !== 'present') continue;
    if (nameOk && !nameOk(k.name)) {
      violation('apikeyNamePattern', `apikey name ${quote(k.name)} does not match the apikeyNamePattern ${quote(policy.apikeyNamePattern!)}`, `${path}.name`, k.source);
    }
    if (k.superuser) {
      superusers.push({ key: k, path });
      if (policy.superuser === 'forbid') violation('superuser', `apikey ${quote(k.name)} has superuser: true, which the policy forbids (superuser: forbid)`, `${path}.superuser`, k.source);
    }
    const forbidden = forbiddenRolesOf(k, policy);
    if (forbidden.length > 0) {
      violation('forbiddenRoles', `apikey ${quote(k.name)} has the forbidden role${forbidden.length === 1 ? '' : 's'} ${forbidden.join(', ')}`, `${path}.roles`, k.source);
    }
  }
  const max = policy.maxSuperuserKeys;
  if (max !== undefined && superusers.length > max) {
    const first = superusers[max]!;
    violation(
      'maxSuperuserKeys',
      `${superusers.length} apikeys declare superuser: true (${superusers.map((s) => quote(s.key.name)).join(', ')}); the policy allows ${max} (maxSuperuserKeys: ${max})`,
      `${first.path}.superuser`,
      first.key.source,
    );
  }
  return out;
}

/** A pattern's matcher; none for a pattern the file check refused already (invalid_pattern). */
function matcher(pattern: string | undefined): ((name: string) => boolean) | undefined {
  if (pattern === undefined || namePatternProblem(pattern) !== undefined) return undefined;
  return compileNamePattern(pattern);
}

/** The key's roles the policy forbids, by id, or by name where both are names (before they are resolved). */
function forbiddenRolesOf(k: DesiredApikey, policy: AccessPolicy): string[] {
  const out: string[] = [];
  const ids = new Set(policy.forbiddenRoles);
  for (const id of k.roles) if (ids.has(id)) out.push(String(id));
  const names = new Set((policy.forbiddenRoleNames ?? []).map((r) => r.name));
  for (const r of k.roleNames ?? []) if (names.has(r.name)) out.push(quote(r.name));
  return out;
}

/** ` in teams/policy.yaml:3:1`, when the state comes from several files; else nothing (it is the same file). */
function policyWhere(desired: DesiredState): string {
  const at = desired.origin?.policy;
  return at === undefined || (desired.origin?.files.length ?? 0) < 2 ? '' : ` in ${at.file}:${at.line}:${at.col}`;
}

/**
 * `sshUsers[3]`: the item's index in its own file. Several files are concatenated in load
 * order, so the index is the count of the file's items before it.
 */
function indexer(kind: 'sshUsers' | 'apikeys'): (source: SourcePosition | undefined) => string {
  const seen = new Map<string, number>();
  return (source) => {
    const file = source?.file ?? '';
    const i = seen.get(file) ?? 0;
    seen.set(file, i + 1);
    return `${kind}[${i}]`;
  };
}
