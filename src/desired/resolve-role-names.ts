import type { AccessPolicy, DesiredApikey, DesiredState, Diagnostic, NamedRole, RoleNameRef } from '../model/index.js';
import { quote, didYouMean } from '../yaml/index.js';
import { diagnosticCodes } from '../model/index.js';

export type RoleNameResolution =
  | { readonly ok: true; readonly desired: DesiredState; readonly roleNames: ReadonlyMap<number, string> }
  | { readonly ok: false; readonly message: string; readonly diagnostics: readonly Diagnostic[] };

/** Whether any apikey names a role (only then is the roles listing read). */
export function usesRoleNames(desired: DesiredState): boolean {
  const policy = desired.policy;
  return desired.apikeys.some((k) => (k.roleNames?.length ?? 0) > 0) || (policy?.forbiddenRoleNames?.length ?? 0) > 0 || (policy?.approveRoleNames?.length ?? 0) > 0;
}

/** At most this many roles are listed in a message; a service may have hundreds. */
const maxListedRoles = 20;

/**
 * Turns role names into ids with the service's roles, every name at once: each must name
 * exactly one role, or it is an error positioned where it was written, which lists the roles
 * there are. `roles` null: the service has no roles listing. Pure.
 */
export function resolveRoleNames(desired: DesiredState, roles: readonly NamedRole[] | null): RoleNameResolution {
  const policy = desired.policy;
  const refs = [
    ...desired.apikeys.flatMap((k, i) => (k.roleNames ?? []).map((ref) => ({ ...ref, path: `apikeys[${i}].roles` }))),
    ...(policy?.forbiddenRoleNames ?? []).map((ref) => ({ ...ref, path: 'policy.forbiddenRoles' })),
    ...(policy?.approveRoleNames ?? []).map((ref) => ({ ...ref, path: 'policy.approveRoles' })),
  ];
  if (refs.length === 0) return { ok: true, desired, roleNames: roles === null ? new Map() : namesOf(roles) };
  if (roles === null) {
    const diagnostics = refs.map(
      (r): Diagnostic => ({
        severity: 'error',
        code: diagnosticCodes.roleNamesUnsupported,
        message: `role ${quote(r.name)} is a name, but this service has no roles listing (GET /api/roles answered 404), so names cannot be resolved: write the role's id instead (roles: [3, 7])`,
        path: r.path,
        ...(r.source ? { position: r.source } : {}),
      }),
    );
    return { ok: false, message: `${refs.length} role name${refs.length === 1 ? '' : 's'} cannot be resolved: the service has no roles listing; use role ids; nothing was sent`, diagnostics };
  }

  const byName = new Map<string, number[]>();
  for (const role of roles) byName.set(role.name, [...(byName.get(role.name) ?? []), role.id]);
  const existing = describeRoles(roles);
  const diagnostics: Diagnostic[] = [];
  for (const r of refs) {
    const ids = byName.get(r.name) ?? [];
    if (ids.length === 1) continue;
    const message =
      ids.length === 0
        ? `no role named ${quote(r.name)}${didYouMean(r.name, [...byName.keys()])}; the service has ${existing}`
        : `role name ${quote(r.name)} is ambiguous: roles ${ids.join(' and ')} are all named so; write the id instead`;
    diagnostics.push({
      severity: 'error',
      code: ids.length === 0 ? diagnosticCodes.unknownRole : diagnosticCodes.ambiguousRole,
      message,
      path: r.path,
      ...(r.source ? { position: r.source } : {}),
    });
  }
  if (diagnostics.length > 0) {
    return { ok: false, message: `${diagnostics.length} role name${diagnostics.length === 1 ? '' : 's'} cannot be resolved; nothing was written`, diagnostics };
  }

  const idOf = (r: RoleNameRef) => (byName.get(r.name) as number[])[0] as number;
  const apikeys = desired.apikeys.map((k): DesiredApikey => {
    if (k.roleNames === undefined) return k;
    const { roleNames, ...rest } = k;
    const ids = new Set([...k.roles, ...roleNames.map(idOf)]);
    return { ...rest, roles: [...ids].sort((a, b) => a - b) };
  });
  const resolvedPolicy = policy === undefined ? undefined : resolvePolicy(policy, idOf);
  return { ok: true, desired: { ...desired, apikeys, ...(resolvedPolicy ? { policy: resolvedPolicy } : {}) }, roleNames: namesOf(roles) };
}

/** The policy's role lists as ids only. */
function resolvePolicy(policy: AccessPolicy, idOf: (r: RoleNameRef) => number): AccessPolicy {
  const { forbiddenRoleNames, approveRoleNames, ...rest } = policy;
  const merge = (ids: readonly number[], names: readonly RoleNameRef[] | undefined) => [...new Set([...ids, ...(names ?? []).map(idOf)])].sort((a, b) => a - b);
  return { ...rest, forbiddenRoles: merge(policy.forbiddenRoles, forbiddenRoleNames), approveRoles: merge(policy.approveRoles, approveRoleNames) };
}

/** Id -> name for the roles whose name is theirs alone (an ambiguous name explains nothing). */
export function namesOf(roles: readonly NamedRole[]): ReadonlyMap<number, string> {
  const count = new Map<string, number>();
  for (const r of roles) count.set(r.name, (count.get(r.name) ?? 0) + 1);
  return new Map(roles.filter((r) => count.get(r.name) === 1).map((r) => [r.id, r.name]));
}

function describeRoles(roles: readonly NamedRole[]): string {
  if (roles.length === 0) return 'no roles';
  const shown = [...roles].sort((a, b) => a.id - b.id).slice(0, maxListedRoles).map((r) => `${r.id} ${quote(r.name)}`);
  const more = roles.length > maxListedRoles ? ` and ${roles.length - maxListedRoles} more` : '';
  return `these roles: ${shown.join(', ')}${more}`;
}
