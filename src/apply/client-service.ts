import type { AmClient } from '../api/index.js';
import type { ServiceWriter } from './service-writer.js';

/**
 * The client seen as apply and state need it: complete listings and writes that say whether
 * the service answered 200 (with the item) or 202 (accepted for later).
 */
export function clientService(client: AmClient): ServiceWriter {
  return {
    listSshUsers: () => client.listAllSshUsers(),
    listApikeys: () => client.listAllApikeys(),
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
  };
}
