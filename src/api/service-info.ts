import * as z from 'zod';
import { isApiError } from './api-error.js';
import { ListingIncompleteError } from './listing-incomplete-error.js';
import { paginate } from './paginate.js';
import type { RequestExecutor } from './request-executor.js';
import type { RunSignals } from './run-signals.js';
import { parseWith, type ResourceSettings } from './resource.js';
import { pageCursorSchema } from './schemas.js';

/**
 * What the real service answers beyond the service's API specification: the roles listing and the
 * caller's own scopes. Neither is promised, so both say "not here" (null) on a 404 instead of
 * failing, and callers use them only where they answer.
 */

/** What a role or a token may do on one part of the API. */
export interface ApiScope {
  readonly name: string;
  readonly read: boolean;
  readonly write: boolean;
}

export interface ApiRole {
  readonly id: number;
  readonly name: string;
  readonly scopes: readonly ApiScope[];
}

export interface ApiUserInfo {
  readonly ownerType: string | undefined;
  readonly scopes: readonly ApiScope[];
}

const wireScope = z.object({ name: z.string(), read: z.boolean().optional(), write: z.boolean().optional() });
const toScope = (s: z.output<typeof wireScope>): ApiScope => ({ name: s.name, read: s.read === true, write: s.write === true });

const rolePageSchema = z
  .object({
    cursor: pageCursorSchema,
    // Scopes only inform; a role whose scopes do not parse is still a role.
    roles: z.array(z.object({ id: z.number().int(), name: z.string(), scopes: z.array(wireScope).optional().catch(undefined) })),
  })
  .transform((page) => ({ cursor: page.cursor, items: page.roles.map((r): ApiRole => ({ id: r.id, name: r.name, scopes: (r.scopes ?? []).map(toScope) })) }));

const userInfoSchema = z
  .object({ owner_type: z.string().optional().catch(undefined), scopes: z.array(wireScope) })
  .transform((raw): ApiUserInfo => ({ ownerType: raw.owner_type, scopes: raw.scopes.map(toScope) }));

const rolesRoute = '/api/roles';
const userInfoRoute = '/api/user/info';

/** Every role, following every page; null when the service has no roles listing (404). */
export async function listAllRoles(executor: RequestExecutor, settings: ResourceSettings, signals: RunSignals = {}): Promise<ApiRole[] | null> {
  const roles: ApiRole[] = [];
  try {
    for await (const page of paginate({
      route: rolesRoute,
      idOf: (role: ApiRole) => role.id,
      contentOf: (role: ApiRole) => role.name,
      maxPages: settings.maxPages,
      pageSize: settings.pageSize,
      deadlineMs: settings.listDeadlineMs,
      now: () => settings.timers.now(),
      fetchPage: (cursor, size) =>
        executor.run({
          method: 'GET',
          path: rolesRoute,
          route: rolesRoute,
          searchParams: { cursor: String(cursor), size: String(size) },
          parse: (status, body) => (status === 200 ? parseWith(rolePageSchema, body) : { ok: false, problem: 'a listing must answer 200' }),
          ...signals,
        }),
    })) {
      roles.push(...page.items);
    }
  } catch (error) {
    if (error instanceof ListingIncompleteError && error.pagesRead === 0 && isApiError(error.cause, 'not_found')) return null;
    throw error;
  }
  return roles;
}

/** The caller's owner type and scopes; null when the service does not answer it (404). */
export async function fetchUserInfo(executor: RequestExecutor, signals: RunSignals = {}): Promise<ApiUserInfo | null> {
  try {
    return await executor.run({
      method: 'GET',
      path: userInfoRoute,
      route: userInfoRoute,
      parse: (status, body) => (status === 200 ? parseWith(userInfoSchema, body) : { ok: false, problem: 'user info must answer 200' }),
      ...signals,
    });
  } catch (error) {
    if (isApiError(error, 'not_found')) return null;
    throw error;
  }
}
