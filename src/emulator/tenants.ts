/**
 * Tenants: one emulator process serving many independent services, each under `/t/<name>/`
 * (README, "Fleet: one access file, many services"), so fleet tests and benchmarks can run hundreds of targets on one port.
 * Pure: names, the path split and the seed of each tenant.
 */

/** A tenant's name: what may stand in `/t/<name>/` unescaped. */
export const TENANT_NAME_PATTERN = /^[a-z0-9][a-z0-9-]{0,62}$/;

/** More tenants than this is a mistake, not a benchmark (each costs a few kB once used). */
export const MAX_TENANTS = 10_000;

/** The path segment before a tenant's name. */
export const TENANT_ROOT = '/t/';

/** `tenants: N` means the tenants `t1` … `tN`. */
export function numberedTenants(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `t${i + 1}`);
}

/**
 * Where a request target goes: `/t/a/api/sshusers?cursor=0` is `{name: 'a', target:
 * '/api/sshusers?cursor=0'}` (`/t/a` alone is the tenant's `/`); a target outside `/t/` is
 * null. The name is not checked here: an unknown one is the router's 404.
 */
export function splitTenantTarget(target: string): { name: string; target: string } | null {
  if (!target.startsWith(TENANT_ROOT)) return null;
  const rest = target.slice(TENANT_ROOT.length);
  const end = rest.search(/[/?]/);
  if (end < 0) return { name: rest, target: '/' };
  const name = rest.slice(0, end);
  const tail = rest.slice(end);
  return { name, target: tail.startsWith('?') ? `/${tail}` : tail };
}

/** The path prefix of a tenant's service: `/t/<name>`, no trailing slash. */
export function tenantPrefix(name: string): string {
  return `${TENANT_ROOT}${name}`;
}

/** `t1 … t500` for numbered tenants, `a, b, c` for a few names, `a, b, … z (26)` for many. */
export function describeTenantNames(names: readonly string[]): string {
  const first = names[0] ?? '';
  const last = names[names.length - 1] ?? '';
  if (names.length > 1 && names.every((n, i) => n === `t${i + 1}`)) return `${first} … ${last}`;
  if (names.length <= 4) return names.join(', ');
  return `${names[0]}, ${names[1]}, … ${last}`;
}

/**
 * The fault seed of one tenant: the emulator's seed mixed with the name (FNV-1a), so one seed
 * replays every tenant's faults and no two tenants draw the same sequence.
 */
export function tenantSeed(seed: number, name: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < name.length; i += 1) {
    hash ^= name.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return ((seed ^ hash) >>> 0) % 2 ** 31;
}
