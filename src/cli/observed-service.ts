import type { AmClient } from '../api/index.js';
import type { ServiceWriter } from '../apply/index.js';
import type { Action as ChangeAction, Kind as ItemKind } from '../model/index.js';

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

/** The client, with every listed page reported as it arrives. */
export function observedClient(client: AmClient, observer: Pick<ServiceObserver, 'onPage'>): AmClient {
  async function* counted<P extends { readonly items: readonly unknown[] }>(kind: ItemKind, pages: AsyncIterable<P>): AsyncGenerator<P> {
    for await (const page of pages) {
      observer.onPage(kind, page.items.length);
      yield page;
    }
  }
  return { ...client, listSshUsers: () => counted('sshUser', client.listSshUsers()), listApikeys: () => counted('apikey', client.listApikeys()) };
}

/** The service, with every write reported as it starts. */
export function observedService(service: ServiceWriter, observer: Pick<ServiceObserver, 'onWriteStart'>): ServiceWriter {
  const start = (write: WriteStart) => observer.onWriteStart(write);
  return {
    // Everything else as it is (reads, roles, the scope check): only writes are observed.
    ...service,
    createSshUser: (body) => (start({ kind: 'sshUser', action: 'create', key: body.username }), service.createSshUser(body)),
    updateSshUser: (id, body) => (start({ kind: 'sshUser', action: 'update', id }), service.updateSshUser(id, body)),
    deleteSshUser: (id) => (start({ kind: 'sshUser', action: 'delete', id }), service.deleteSshUser(id)),
    createApikey: (body) => (start({ kind: 'apikey', action: 'create', key: body.name }), service.createApikey(body)),
    updateApikey: (id, body) => (start({ kind: 'apikey', action: 'update', id }), service.updateApikey(id, body)),
    deleteApikey: (id) => (start({ kind: 'apikey', action: 'delete', id }), service.deleteApikey(id)),
  };
}
