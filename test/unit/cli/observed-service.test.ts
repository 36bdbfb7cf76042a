import { describe, expect, it } from 'vitest';
import { EventEmitter } from 'node:events';
import type { AmClient, ClientEventMap } from '../../../src/api/index.js';
import { observedService, type WriteStart } from '../../../src/app/observed-service.js';

describe('the service as the live output sees it', () => {
  it('reports each write as it starts: a create by name, the others by id; the call itself goes through unchanged', async () => {
    const calls: string[] = [];
    const service = {
      events: new EventEmitter<ClientEventMap>(),
      listSshUsers: async () => [],
      listApikeys: async () => [],
      createSshUser: async (body: { username: string }) => (calls.push(`create ${body.username}`), { id: 5, accepted: false }),
      updateSshUser: async (id: number) => (calls.push(`update ${id}`), { id, accepted: false }),
      deleteSshUser: async (id: number) => void calls.push(`delete ${id}`),
      createApikey: async (body: { name: string }) => (calls.push(`create ${body.name}`), { id: 9, accepted: true }),
      updateApikey: async (id: number) => (calls.push(`update ${id}`), { id, accepted: false }),
      deleteApikey: async (id: number) => void calls.push(`delete ${id}`),
    } as unknown as AmClient;
    const started: WriteStart[] = [];
    const observed = observedService(service, { onWriteStart: (w) => started.push(w), onPage: () => undefined });
    expect(await observed.createSshUser({ username: 'deploy', level: 'n1', password: undefined as never })).toEqual({ id: 5, accepted: false });
    await observed.updateSshUser(3, {});
    await observed.deleteSshUser(4);
    expect(await observed.createApikey({ name: 'ci', superuser: false, roles: [] })).toEqual({ id: 9, accepted: true });
    await observed.updateApikey(7, {});
    await observed.deleteApikey(8);
    expect(calls).toEqual(['create deploy', 'update 3', 'delete 4', 'create ci', 'update 7', 'delete 8']);
    expect(started).toEqual([
      { kind: 'sshUser', action: 'create', key: 'deploy' },
      { kind: 'sshUser', action: 'update', id: 3 },
      { kind: 'sshUser', action: 'delete', id: 4 },
      { kind: 'apikey', action: 'create', key: 'ci' },
      { kind: 'apikey', action: 'update', id: 7 },
      { kind: 'apikey', action: 'delete', id: 8 },
    ]);
  });

  it('counts each page once as it arrives, in order, while a listing of its kind runs, and passes the listing through', async () => {
    const events = new EventEmitter<ClientEventMap>();
    const listing = (kind: 'sshUser' | 'apikey', sizes: number[]) => async () => {
      for (const items of sizes) {
        await Promise.resolve();
        events.emit('page', { kind, items });
      }
      return [{ id: sizes.length }];
    };
    const client = { events, listSshUsers: listing('sshUser', [100, 100, 7]), listApikeys: listing('apikey', [3]) } as unknown as AmClient;
    const seen: string[] = [];
    const observed = observedService(client, { onPage: (kind, items) => seen.push(`${kind} ${items}`), onWriteStart: () => undefined });
    events.emit('page', { kind: 'apikey', items: 9 }); // no observed listing runs: not counted
    expect(await observed.listSshUsers()).toEqual([{ id: 3 }]);
    expect(await observed.listApikeys()).toEqual([{ id: 1 }]);
    events.emit('page', { kind: 'sshUser', items: 50 }); // after the listing: not counted
    expect(seen).toEqual(['sshUser 100', 'sshUser 100', 'sshUser 7', 'apikey 3']);
  });

  it('two listings of one kind at once (drift re-reads): each page counted once, one listener however many listings', async () => {
    const events = new EventEmitter<ClientEventMap>();
    const listSshUsers = async () => {
      for (const items of [10, 10, 10]) {
        await Promise.resolve();
        events.emit('page', { kind: 'sshUser', items });
      }
      return [];
    };
    const client = { events, listSshUsers } as unknown as AmClient;
    const seen: number[] = [];
    const observed = observedService(client, { onPage: (_kind, items) => seen.push(items), onWriteStart: () => undefined });
    await Promise.all(Array.from({ length: 12 }, () => observed.listSshUsers()));
    expect(seen).toHaveLength(36);
    expect(events.listenerCount('page')).toBe(1);
  });
});
