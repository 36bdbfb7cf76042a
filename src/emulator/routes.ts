/** The API's URL space: which resource a path names and which methods it supports. */

export type Resource = 'sshUsers' | 'apikeys' | 'roles' | 'userInfo';

export interface Route {
  resource: Resource;
  /** The item id for item URLs; absent for list URLs. */
  id?: number;
}

const LIST_PATHS: Record<string, Resource> = {
  '/api/sshusers': 'sshUsers',
  '/api/3rdparty/apikeys': 'apikeys',
  '/api/roles': 'roles',
  // Not in the service's API specification; the real service answers it.
  '/api/user/info': 'userInfo',
};

const ITEM_PREFIXES: [string, Resource][] = [
  ['/api/sshusers/', 'sshUsers'],
  ['/api/3rdparty/apikeys/', 'apikeys'],
];

/** The route of a path, or null for an unknown path (404). One trailing slash is tolerated. */
export function resolveRoute(rawPath: string): Route | null {
  const path = rawPath.length > 1 && rawPath.endsWith('/') ? rawPath.slice(0, -1) : rawPath;
  const list = LIST_PATHS[path];
  if (list !== undefined) return { resource: list };
  for (const [prefix, resource] of ITEM_PREFIXES) {
    if (!path.startsWith(prefix)) continue;
    const rest = path.slice(prefix.length);
    // An id that is not an integer names no item: the URL does not exist.
    if (!/^\d{1,15}$/.test(rest)) return null;
    return { resource, id: Number(rest) };
  }
  return null;
}

/** Methods a route supports, for dispatch and for the Allow header of a 405. */
export function allowedMethods(route: Route): readonly string[] {
  if (route.resource === 'roles' || route.resource === 'userInfo') return ['GET', 'HEAD'];
  return route.id === undefined ? ['GET', 'HEAD', 'POST'] : ['GET', 'HEAD', 'PUT', 'DELETE'];
}

export function isWrite(method: string): boolean {
  return method === 'POST' || method === 'PUT' || method === 'DELETE';
}
