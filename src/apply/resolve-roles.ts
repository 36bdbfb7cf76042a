import { InvalidInputError } from '../errors.js';
import type { AccessService, DesiredState } from '../model/index.js';
import { resolveRoleNames, usesRoleNames } from '../desired/index.js';

export interface ResolvedRoles {
  /** The desired state with every role as an id. */
  readonly desired: DesiredState;
  /** Role names by id, when the roles listing was read (only when the file names a role). */
  readonly roleNames?: ReadonlyMap<number, string>;
}

/**
 * Role names in the file (`roles: [auditor, 7]`) become ids, through the service's roles
 * listing (every page), read only when a name is used. A name that is unknown or ambiguous,
 * or a service without a roles listing, is InvalidInputError (exit 65) before any write.
 */
export async function resolveRoles(desired: DesiredState, service: Pick<AccessService, 'listRoles'>): Promise<ResolvedRoles> {
  if (!usesRoleNames(desired)) return { desired };
  const roles = await service.listRoles();
  const resolved = resolveRoleNames(desired, roles);
  if (!resolved.ok) throw new InvalidInputError(resolved.message, resolved.diagnostics, 'role_names');
  return { desired: resolved.desired, roleNames: resolved.roleNames };
}
