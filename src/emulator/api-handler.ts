import type { Access } from './auth.js';
import type { Page } from './collection.js';
import type { ListMode } from './faults.js';
import { errorReply, oneError, type Reply } from './reply.js';
import { allowedMethods, isWrite, resolveRoute } from './routes.js';
import type { ListedKind, Prepared, Store, StoreResult } from './store.js';
import type { AnotherClientRequest } from './types.js';

/** One authenticated API request, as the HTTP layer hands it over. */
export interface ApiRequest {
  /** Upper case; HEAD is answered as GET (node drops the body). */
  method: string;
  path: string;
  query: URLSearchParams;
  /** The raw body; empty when none was sent. */
  body: string;
  access: Access;
  listMode: ListMode;
  /** The `concurrentWrite` fault: another client's write to the same item, done first. */
  concurrentWrite?: 'create' | 'delete';
  /** The `shiftPage` fault: an item renamed by another client as this page is served. */
  shiftPage?: { id: number; to: string };
  /** Sends an interim 102 Processing; used when a read waits for an accepted write. */
  sendProcessing(): void;
}

/** What the handler needs besides the store: page sizes, and how writes take effect. */
export interface ApiDeps {
  store: Store;
  /** '' or a tenant's `/t/<name>`: messages name the path the client sent. */
  pathPrefix: string;
  pageSizeDefault: number;
  pageSizeMax: number;
  asyncWrites(): boolean;
  /** Applies `apply` later (async writes); `item` names the item it touches, if it exists. */
  enqueue(item: string | null, apply: () => void): void;
  /** Resolves once no accepted write for this item is pending; null when none is. */
  pendingFor(item: string): Promise<void> | null;
  /** Resolves once the state after the last write is persisted (a no-op in memory). */
  persist(): Promise<void>;
  /** The seeded generator of the faults (the `reorderPage` shuffle). */
  random(): number;
}

export async function handleApi(req: ApiRequest, deps: ApiDeps): Promise<Reply> {
  const route = resolveRoute(req.path);
  const shown = `${deps.pathPrefix}${req.path}`;
  if (route === null) return oneError(404, 'path', 'not_found', `no API at ${shown}`);
  const method = req.method === 'HEAD' ? 'GET' : req.method;
  const allowed = allowedMethods(route);
  if (!allowed.includes(req.method)) {
    return oneError(405, 'method', 'rule', `${req.method} is not supported on ${shown}`, { Allow: allowed.join(', ') });
  }
  if (isWrite(method) && req.access === 'read-only') {
    return oneError(403, 'authorization', 'rule', `the access token may not ${method} ${shown}`);
  }
  const { store } = deps;
  if (route.resource === 'roles') return list('roles', req, deps);
  if (route.resource === 'userInfo') return { status: 200, body: userInfo(req.access) };
  if (req.concurrentWrite !== undefined) await interfere(req.concurrentWrite, route.resource, route.id, req.body, deps);

  if (route.id === undefined) {
    if (method === 'GET') return list(route.resource, req, deps);
    const body = parseBody(req.body);
    if (!body.ok) return body.reply;
    const create = (): Prepared<unknown> => (route.resource === 'sshUsers' ? store.prepareCreateSshUser(body.value) : store.prepareCreateApikey(body.value));
    return write(create, null, deps);
  }

  const id = route.id;
  const item = `${route.resource}/${id}`;
  if (method === 'GET') {
    const pending = deps.pendingFor(item);
    if (pending) {
      // The item has an accepted write in flight: say so, then answer once it has landed.
      req.sendProcessing();
      await pending;
    }
    return answer<unknown>(route.resource === 'sshUsers' ? store.getSshUser(id) : store.getApikey(id));
  }
  if (method === 'DELETE') {
    // Named as it was, for the request log: what a DELETE removed.
    const before = route.resource === 'sshUsers' ? store.getSshUser(id) : store.getApikey(id);
    const reply = await write((): Prepared<unknown> => (route.resource === 'sshUsers' ? store.prepareDeleteSshUser(id) : store.prepareDeleteApikey(id)), item, deps);
    return reply.status === 200 && before.ok ? { ...reply, item: itemOf(before.value) ?? { id, name: '' } } : reply;
  }
  const body = parseBody(req.body);
  if (!body.ok) return body.reply;
  const update = (): Prepared<unknown> => (route.resource === 'sshUsers' ? store.prepareUpdateSshUser(id, body.value) : store.prepareUpdateApikey(id, body.value));
  return write(update, item, deps);
}

const listKeys: Record<ListedKind, string> = { sshUsers: 'users', apikeys: 'apikeys', roles: 'roles' };

async function list(resource: ListedKind, req: ApiRequest, deps: ApiDeps): Promise<Reply> {
  const cursor = intParam(req.query, 'cursor', 0, 0);
  if (typeof cursor !== 'number') return cursor;
  // An empty `size` means the server's default: the vendor's client always sends the
  // parameter (`?cursor=0&size=`) and leaves it empty unless its caller chose a size.
  const requested = intParam(req.query, 'size', deps.pageSizeDefault, 1, true);
  if (typeof requested !== 'number') return requested;
  // Larger sizes are clamped rather than refused, as paginated services commonly do.
  const size = Math.min(requested, deps.pageSizeMax);
  const advance = req.listMode === 'duplicatePage' ? Math.ceil(size / 2) : size;
  const { store } = deps;
  const result: StoreResult<Page<unknown>> =
    resource === 'sshUsers' ? store.listSshUsers(cursor, size, advance) : resource === 'apikeys' ? store.listApikeys(cursor, size, advance) : store.listRolePage(cursor, size, advance);
  if (!result.ok) return errorReply(result.status, result.errors);
  const page = result.value;
  let next = page.next;
  if (req.listMode === 'cursorLoop') next = store.loopCursor(resource, page.position, size);
  let items: readonly unknown[] = req.listMode === 'reorderPage' ? shuffled<unknown>(page.items, deps.random) : page.items;
  if (req.shiftPage !== undefined && resource !== 'roles') items = await shift(resource, req.shiftPage, page as Page<{ id: number }>, items, deps);
  const body = { cursor: { current: page.current, next, previous: page.previous }, [listKeys[resource]]: items };
  return { status: 200, body };
}

/**
 * `GET /api/user/info`: who the token belongs to and what it may do. Scopes follow the
 * token's access, the one permission model the emulator enforces.
 */
function userInfo(access: Access): { owner_type: string; scopes: { name: string; read: boolean; write: boolean }[] } {
  const write = access === 'read-write';
  return {
    owner_type: 'integrator',
    scopes: [
      { name: 'sshusers', read: true, write },
      { name: 'apikeys', read: true, write },
      { name: 'roles', read: true, write: false },
    ],
  };
}

/**
 * The `shiftPage` fault: another client renames an item as this page is served. A service that
 * sorts by name (keyset paging) then shows the renamed item again on this page when it lay on
 * an earlier one, so the listing holds one id under two names. The page here is in id order,
 * so "an earlier page" is an id below this page's first (or any, past the last page).
 */
async function shift(resource: 'sshUsers' | 'apikeys', rename: { id: number; to: string }, page: Page<{ id: number }>, items: readonly unknown[], deps: ApiDeps): Promise<readonly unknown[]> {
  const { store } = deps;
  const prepared = resource === 'sshUsers' ? store.prepareUpdateSshUser(rename.id, { username: rename.to }) : store.prepareUpdateApikey(rename.id, { name: rename.to });
  if (!prepared.ok) return items;
  const renamed = prepared.value();
  await deps.persist();
  const first = page.items[0]?.id;
  const passed = page.position > 0 && (first === undefined || rename.id < first);
  return passed ? [...items, renamed] : items;
}

/** Fisher-Yates with the seeded generator, so a seed replays the same order. */
function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i -= 1) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

/**
 * The `concurrentWrite` fault: another client gets there first. `create` on a list URL posts
 * the same body (with a password of its own); `delete` on an item URL deletes that item. A
 * change the store refuses (a bad body, an item already gone) is simply not made.
 */
async function interfere(kind: 'create' | 'delete', resource: 'sshUsers' | 'apikeys', id: number | undefined, rawBody: string, deps: ApiDeps): Promise<void> {
  const { store } = deps;
  let prepared: Prepared<unknown> | null = null;
  if (kind === 'delete' && id !== undefined) {
    prepared = resource === 'sshUsers' ? store.prepareDeleteSshUser(id) : store.prepareDeleteApikey(id);
  } else if (kind === 'create' && id === undefined) {
    const body = parseBody(rawBody);
    if (!body.ok || typeof body.value !== 'object' || body.value === null || Array.isArray(body.value)) return;
    prepared =
      resource === 'sshUsers'
        ? store.prepareCreateSshUser({ ...(body.value as Record<string, unknown>), password: 'set-by-another-client' })
        : store.prepareCreateApikey(body.value);
  }
  if (prepared === null || !prepared.ok) return;
  prepared.value();
  await deps.persist();
}

async function write<T>(prepare: () => Prepared<T>, item: string | null, deps: ApiDeps): Promise<Reply> {
  const prepared = prepare();
  if (!prepared.ok) return errorReply(prepared.status, prepared.errors);
  if (deps.asyncWrites()) {
    // Checked now, so a bad request still gets its 400/404/409; checked again when it lands,
    // because the state may have moved on by then (a write that no longer fits is dropped).
    deps.enqueue(item, () => {
      const again = prepare();
      if (again.ok) again.value();
    });
    return { status: 202, body: { status: 'accepted' } };
  }
  const value = prepared.value();
  await deps.persist();
  const acted = itemOf(value);
  return acted ? { status: 200, body: value, item: acted } : { status: 200, body: value };
}

/** `{id, name}` of an SSH user or apikey view; undefined for anything else. */
function itemOf(value: unknown): { id: number; name: string } | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as { id?: unknown; username?: unknown; name?: unknown };
  const name = typeof v.username === 'string' ? v.username : v.name;
  return typeof v.id === 'number' && typeof name === 'string' ? { id: v.id, name } : undefined;
}

/**
 * The `anotherClient` fault: another client's request, made with full access before the one
 * the rule fired on. Its answer goes nowhere; one the service refuses changes nothing.
 */
export async function anotherClient(request: AnotherClientRequest, deps: ApiDeps): Promise<void> {
  await handleApi(
    {
      method: request.method,
      path: request.path,
      query: new URLSearchParams(),
      body: request.body === undefined ? '' : JSON.stringify(request.body),
      access: 'read-write',
      listMode: 'normal',
      sendProcessing: () => undefined,
    },
    deps,
  );
}

function answer<T>(result: StoreResult<T>): Reply {
  return result.ok ? { status: 200, body: result.value } : errorReply(result.status, result.errors);
}

type ParsedBody = { ok: true; value: unknown } | { ok: false; reply: Reply };

function parseBody(raw: string): ParsedBody {
  if (raw.trim() === '') return { ok: true, value: undefined };
  try {
    return { ok: true, value: JSON.parse(raw) as unknown };
  } catch (error) {
    return { ok: false, reply: oneError(400, 'body', 'invalid', `malformed JSON: ${(error as Error).message}`) };
  }
}

function intParam(query: URLSearchParams, name: string, fallback: number, min: number, emptyIsDefault = false): number | Reply {
  const raw = query.get(name);
  if (raw === null || (emptyIsDefault && raw === '')) return fallback;
  const value = /^\d{1,15}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min) {
    return oneError(400, name, 'invalid', `${name} must be an integer${min > 0 ? ` from ${min} upwards` : ''}, got '${raw}'`);
  }
  return value;
}

