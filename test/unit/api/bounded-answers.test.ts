import { afterEach, describe, expect, it } from 'vitest';
import { createClient, ListingIncompleteError, type AmClient } from '../../../src/api/index.js';
import { Transport } from '../../../src/api/transport.js';
import { runSync } from '../../../src/sync/run-sync.js';
import { Secret } from '../../../src/secrets/secret.js';
import { desired, secret, user } from '../../helpers/plan-fixtures.js';
import { cursor, json, startHostileServer, streamForever, type HostileServer } from '../../helpers/hostile-server.js';

/**
 * Every wait bounded (issue 12): answers that never end, listings that never end or shift
 * while read. Against a hostile fake on 127.0.0.1, not the emulator, which cannot misbehave so.
 */

let server: HostileServer | undefined;
let client: AmClient | undefined;
afterEach(async () => {
  client?.close();
  client = undefined;
  await server?.close();
  server = undefined;
});

const token = new Secret('bounded-token-c0ffee');
const connect = (url: string, options: { maxResponseBytes?: number; pageSize?: number } = {}) => {
  client = createClient({ url, token, initialRate: 1000, random: () => 0.5, retry: { baseDelayMs: 1, maxDelayMs: 5 }, ...options });
  return client;
};
const u = (id: number, username = `user-${id}`) => ({ id, username, level: 'n1' });

/** The apikeys listing of these tests: one key nobody declares, so prune would delete it. */
function oneStrayKey(res: Parameters<typeof json>[0]): void {
  json(res, { cursor: cursor(0, null), apikeys: [{ id: 9, name: 'stray', superuser: false, roles: [], token: 'tok-stray' }] });
}

describe('an answer larger than maxResponseBytes is an error, read as a stream and never buffered past it', () => {
  it('a listing answer that streams forever ends in response_too_large, and the run plans nothing (no delete)', async () => {
    const written = { bytes: 0 };
    server = await startHostileServer((_req, res, arrival) => {
      if (arrival.path === '/api/sshusers') streamForever(res, '{"cursor":{"current":0,"next":null,"previous":null},"users":[', '{"id":1,"username":"u","level":"n1"},', written);
      else oneStrayKey(res);
    });
    const c = connect(server.url, { maxResponseBytes: 1024 * 1024 });
    const d = desired({ sshUsers: [user('alice')], prune: { sshUsers: true, apikeys: true } });
    const error = await runSync({ desired: d, service: c, maxDeletes: 10, dryRun: false }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ListingIncompleteError);
    expect((error as ListingIncompleteError).cause).toMatchObject({ code: 'response_too_large', attempts: 1 });
    expect((error as Error).message).toContain('the answer passed the limit of 1 MiB (http.maxResponseBytes); it was not read further');
    // Not retried, nothing written: one GET per kind, and no DELETE of the stray key.
    expect(server.arrivals.map((a) => `${a.method} ${a.path}`).sort()).toEqual(['GET /api/3rdparty/apikeys', 'GET /api/sshusers']);
  });

  it('the transport stops reading at the limit: bytes read are at most the limit and one chunk', async () => {
    const written = { bytes: 0 };
    server = await startHostileServer((_req, res) => streamForever(res, '[', '"x",', written));
    const limit = 256 * 1024;
    const transport = new Transport({ baseUrl: new URL(`${server.url}/`), timeoutMs: 30_000, userAgent: 't', maxSockets: 1, maxResponseBytes: limit });
    try {
      const outcome = await transport.send({ method: 'GET', path: '/api/sshusers' }, token);
      expect(outcome).toMatchObject({ kind: 'failure', failure: 'too_large' });
      if (outcome.kind !== 'failure' || outcome.failure !== 'too_large') return;
      expect(outcome.bytesRead).toBeGreaterThan(limit);
      expect(outcome.bytesRead).toBeLessThanOrEqual(limit + outcome.lastChunkBytes);
      // One chunk is a socket read, not a megabyte.
      expect(outcome.lastChunkBytes).toBeLessThanOrEqual(256 * 1024);
    } finally {
      transport.close();
    }
  });

  it('an answer that announces a body over the limit is refused before its body is read', async () => {
    server = await startHostileServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(64 * 1024 * 1024) });
      res.write('{"cursor":');
    });
    const error = await connect(server.url, { maxResponseBytes: 1024 }).fetchSshUser(1).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'response_too_large', message: expect.stringContaining('the answer announced 64 MiB, above the limit of 1024 bytes') });
  });

  it('an answer within the limit is read as before', async () => {
    server = await startHostileServer((_req, res) => json(res, u(1)));
    await expect(connect(server.url, { maxResponseBytes: 1024 }).fetchSshUser(1)).resolves.toMatchObject({ id: 1, username: 'user-1' });
  });
});

describe('a listing that keeps offering new cursors is incomplete long before the page bound', () => {
  it('a fresh next on every empty page: stopped after a few dozen pages, not 100,000', async () => {
    server = await startHostileServer((_req, res, arrival) => {
      const at = Number(arrival.query.cursor);
      json(res, { cursor: cursor(at, at + 1), users: [] });
    });
    const error = await connect(server.url).listSshUsers().catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'listing_unbounded', itemsRead: 0 });
    expect(server.arrivals.length).toBeLessThanOrEqual(16);
  });

  it('a fresh next on every page repeating the same items: stopped just as soon', async () => {
    server = await startHostileServer((_req, res, arrival) => {
      const at = Number(arrival.query.cursor);
      json(res, { cursor: cursor(at, at + 1), users: [u(1), u(2), u(3)] });
    });
    const error = await connect(server.url).listSshUsers().catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'listing_unbounded', itemsRead: 3 });
    expect(server.arrivals.length).toBeLessThanOrEqual(18);
  });
});

describe('a listing that shifts while it is read is read again once, then counts as incomplete', () => {
  // A service sorting by name, with pages of 2: someone renames id 50 from "old-contractor" to
  // "alice" between the pages, so it is listed on page 1 under its old name and on page 2
  // under the new one.
  function shiftingService(shifts: number) {
    let listings = 0;
    return startHostileServer((_req, res, arrival) => {
      if (arrival.path === '/api/3rdparty/apikeys') return json(res, { cursor: cursor(0, null), apikeys: [] });
      if (arrival.method !== 'GET') return json(res, {});
      if (arrival.query.cursor === '0') {
        listings += 1;
        return json(res, { cursor: cursor(0, 1), users: [u(10, 'aaron'), u(50, 'old-contractor')] });
      }
      const renamed = listings <= shifts;
      return json(res, { cursor: cursor(1, null), users: renamed ? [u(50, 'alice'), u(60, 'zed')] : [u(60, 'zed')] });
    });
  }

  it('shifted twice: the run fails as an incomplete listing, and nothing is deleted', async () => {
    server = await shiftingService(2);
    const d = desired({ sshUsers: [user('alice', { password: secret('pw') }), user('old-contractor', { ensure: 'absent' })], prune: { sshUsers: true, apikeys: false } });
    const error = await runSync({ desired: d, service: connect(server.url, { pageSize: 2 }), maxDeletes: 10, dryRun: false }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'listing_inconsistent', message: expect.stringContaining('id 50 was listed twice with different contents') });
    expect((error as Error).message).toContain('read again, it shifted again');
    expect(server.arrivals.filter((a) => a.method !== 'GET')).toEqual([]);
    expect(server.arrivals.filter((a) => a.path === '/api/sshusers' && a.query.cursor === '0')).toHaveLength(2);
  });

  it('shifted once: the second reading is whole and the plan is made from it', async () => {
    server = await shiftingService(1);
    const d = desired({ sshUsers: [user('aaron'), user('old-contractor'), user('zed')] });
    const outcome = await runSync({ desired: d, service: connect(server.url, { pageSize: 2 }), maxDeletes: 10, dryRun: true });
    expect(outcome.actual.sshUsers.map((x) => [x.id, x.username])).toEqual([
      [10, 'aaron'],
      [50, 'old-contractor'],
      [60, 'zed'],
    ]);
    expect(outcome.plan.changes).toEqual([]);
  });

  it('an item listed twice with the same content still counts once, silently', async () => {
    server = await startHostileServer((_req, res, arrival) =>
      json(res, arrival.query.cursor === '0' ? { cursor: cursor(0, 1), users: [u(1), u(2)] } : { cursor: cursor(1, null), users: [u(2), u(3)] }),
    );
    await expect(connect(server.url, { pageSize: 2 }).listSshUsers()).resolves.toHaveLength(3);
  });
});

describe("a client's calls carry the run's signal: once it aborts, nothing more is sent", () => {
  it('the request in flight is aborted, retries stop, and later calls are refused without a request', async () => {
    server = await startHostileServer(() => {
      // never answers
    });
    const controller = new AbortController();
    const scoped = connect(server.url).withSignal(controller.signal);
    const listing = scoped.listSshUsers().catch((e: unknown) => e);
    await waitUntil(() => server!.arrivals.length === 1);
    controller.abort();
    const error = await listing;
    expect(error).toBeInstanceOf(ListingIncompleteError);
    expect((error as ListingIncompleteError).cause).toMatchObject({ code: 'cancelled' });
    await expect(scoped.createApikey({ name: 'k' })).rejects.toMatchObject({ code: 'cancelled', attempts: 0 });
    // The service-wide reads too: the roles listing and the scope check.
    await expect(scoped.listRoles()).rejects.toMatchObject({ cause: expect.objectContaining({ code: 'cancelled' }) });
    await expect(scoped.userInfo()).rejects.toMatchObject({ code: 'cancelled', attempts: 0 });
    expect(server.arrivals).toHaveLength(1);
  });
});

async function waitUntil(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 5));
}
