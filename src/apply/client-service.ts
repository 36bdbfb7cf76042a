import type { AmClient } from '../api/index.js';
import type { RemoteApikey, RemoteSshUser } from '../state/index.js';
import { errorCode } from './error-summary.js';
import type { ServiceWriter } from './service-writer.js';

/**
 * The client seen as apply and state need it: complete listings and writes that say whether
 * the service answered 200 (with the item) or 202 (accepted for later).
 */
export function clientService(client: AmClient): ServiceWriter {
  return {
    // Page by page, keeping only what the state needs: at 100k items per kind, the parsed
    // responses (timestamps and all) held to the end of the listing were ~30 MB at the peak
    // of a sync (test/bench). An error on any page still ends the listing: never a partial one.
    async listSshUsers() {
      const users: RemoteSshUser[] = [];
      for await (const page of client.listSshUsers()) for (const u of page.items) users.push({ id: u.id, username: u.username, level: u.level });
      return users;
    },
    async listApikeys(options) {
      const withTokens = options?.tokens ?? true;
      const keys: RemoteApikey[] = [];
      for await (const page of client.listApikeys()) {
        for (const k of page.items) {
          keys.push(withTokens && k.token !== undefined ? { id: k.id, name: k.name, superuser: k.superuser, roles: k.roles, token: k.token } : { id: k.id, name: k.name, superuser: k.superuser, roles: k.roles });
        }
      }
      return keys;
    },
    async fetchSshUser(id) {
      const u = await orNotFound(client.fetchSshUser(id));
      return u && { id: u.id, username: u.username, level: u.level };
    },
    async fetchApikey(id) {
      const k = await orNotFound(client.fetchApikey(id));
      return k && { id: k.id, name: k.name, superuser: k.superuser, roles: k.roles, ...(k.token === undefined ? {} : { token: k.token }) };
    },
    async createSshUser(body) {
      const created = await client.createSshUser(body);
      return created ? { id: created.id, accepted: false } : { accepted: true };
    },
    async updateSshUser(id, body) {
      const updated = await client.updateSshUser(id, body);
      return { id, accepted: updated === undefined };
    },
    deleteSshUser: (id) => client.deleteSshUser(id),
    async createApikey(body) {
      const created = await client.createApikey(body);
      return created ? { id: created.id, accepted: false, token: created.token } : { accepted: true };
    },
    async updateApikey(id, body) {
      const updated = await client.updateApikey(id, body);
      return { id, accepted: updated === undefined };
    },
    deleteApikey: (id) => client.deleteApikey(id),
    listRoles: () => client.listAllRoles(),
    userInfo: () => client.fetchUserInfo(),
  };
}

/** A 404 on a fetch by id means the item is gone: undefined, not an error. */
async function orNotFound<T>(request: Promise<T>): Promise<T | undefined> {
  try {
    return await request;
  } catch (error) {
    if (errorCode(error) === 'not_found') return undefined;
    throw error;
  }
}
