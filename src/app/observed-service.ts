import type { AmClient, PageEvent } from '../api/index.js';
import type { AccessService, Action as ChangeAction, Kind as ItemKind } from '../model/index.js';

/** A write about to be sent: by name for a create, by id otherwise. */
export interface WriteStart {
  readonly kind: ItemKind;
  readonly action: ChangeAction;
  readonly key?: string;
  readonly id?: number;
}

/** What the live output (progress line, "still creating…") learns from the service calls. */
export interface ServiceObserver {
  onPage(kind: ItemKind, items: number): void;
  onWriteStart(write: WriteStart): void;
}

/**
 * The client as the live output sees it: each listed page reported as it arrives, each write
 * as it starts. Everything else (roles, the scope check, fetches) goes straight through.
 * Pages come from the client's `page` events: one listener for this observer, counting a
 * kind's pages while at least one listing of that kind runs through it (so a page is counted
 * once however many listings overlap, and pages of listings it did not start are not).
 */
export function observedService(client: AmClient, observer: ServiceObserver): AccessService {
  const start = (write: WriteStart) => observer.onWriteStart(write);
  const running: Record<ItemKind, number> = { sshUser: 0, apikey: 0 };
  client.events.on('page', (event: PageEvent) => {
    if (running[event.kind] > 0) observer.onPage(event.kind, event.items);
  });
  const counted = async <T>(kind: ItemKind, list: () => Promise<T>): Promise<T> => {
    running[kind] += 1;
    try {
      return await list();
    } finally {
      running[kind] -= 1;
    }
  };
  return {
    listSshUsers: () => counted('sshUser', () => client.listSshUsers()),
    listApikeys: (options) => counted('apikey', () => client.listApikeys(options)),
    listRoles: () => client.listRoles(),
    userInfo: () => client.userInfo(),
    fetchSshUser: (id) => client.fetchSshUser(id),
    fetchApikey: (id) => client.fetchApikey(id),
    createSshUser: (body) => (start({ kind: 'sshUser', action: 'create', key: body.username }), client.createSshUser(body)),
    updateSshUser: (id, body) => (start({ kind: 'sshUser', action: 'update', id }), client.updateSshUser(id, body)),
    deleteSshUser: (id) => (start({ kind: 'sshUser', action: 'delete', id }), client.deleteSshUser(id)),
    createApikey: (body) => (start({ kind: 'apikey', action: 'create', key: body.name }), client.createApikey(body)),
    updateApikey: (id, body) => (start({ kind: 'apikey', action: 'update', id }), client.updateApikey(id, body)),
    deleteApikey: (id) => (start({ kind: 'apikey', action: 'delete', id }), client.deleteApikey(id)),
  };
}
