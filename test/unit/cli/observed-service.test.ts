import { describe, expect, it } from 'vitest';
import type { AmClient } from '../../../src/api/index.js';
import type { ServiceWriter } from '../../../src/apply/service-writer.js';
import { observedClient, observedService, type WriteStart } from '../../../src/cli/observed-service.js';

describe('the service as the live output sees it', () => {
  it('reports each write as it starts: a create by name, the others by id; the call itself goes through unchanged', async () => {
    const calls: string[] = [];
    const service = {
      listSshUsers: async () => [],
      listApikeys: async () => [],
      createSshUser: async (body: { username: string }) => (calls.push(`create ${body.username}`), { id: 5, accepted: false }),
      updateSshUser: async (id: number) => (calls.push(`update ${id}`), { id, accepted: false }),
      deleteSshUser: async (id: number) => void calls.push(`delete ${id}`),
      createApikey: async (body: { name: string }) => (calls.push(`create ${body.name}`), { id: 9, accepted: true }),
      updateApikey: async (id: number) => (calls.push(`update ${id}`), { id, accepted: false }),
      deleteApikey: async (id: number) => void calls.push(`delete ${id}`),
    } as unknown as ServiceWriter;
    const started: WriteStart[] = [];
    const observed = observedService(service, { onWriteStart: (w) => started.push(w) });
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

  it('counts each listed page and its items as it arrives', async () => {
    async function* pages<T>(sizes: number[], make: (i: number) => T) {
      for (const n of sizes) yield { items: Array.from({ length: n }, (_, i) => make(i)) };
    }
    const client = { listSshUsers: () => pages([100, 100, 7], (i) => ({ id: i })), listApikeys: () => pages([3], (i) => ({ id: i })) } as unknown as AmClient;
    const seen: string[] = [];
    const observed = observedClient(client, { onPage: (kind, items) => seen.push(`${kind} ${items}`) });
    let users = 0;
    for await (const page of observed.listSshUsers()) users += page.items.length;
    for await (const page of observed.listApikeys()) void page;
    expect(users).toBe(207);
    expect(seen).toEqual(['sshUser 100', 'sshUser 100', 'sshUser 7', 'apikey 3']);
  });
});
