import { createServer, type Server } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { closedPort } from '../../helpers/ports.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, ClientConfigError, createClient, defaultRetryOptions, ListingIncompleteError, type AmClient, type ClientOptions, type RequestEvent } from '../../../src/api/index.js';
import { Secret } from '../../../src/secrets/secret.js';
import { makeTestCertificates, type KeyPair, type TestCertificates } from '../../helpers/test-certificates.js';
import { VirtualTime } from '../../helpers/virtual-time.js';

/**
 * A service that cannot be reached says so in one line that names the URL, the cause and what
 * to try, and fast: real sockets on 127.0.0.1, virtual time for the backoff (so the figures
 * below are the client's own clock, not a stopwatch).
 */

const user = { id: 7, username: 'deploy', level: 'n1' };
const servers: Server[] = [];
let client: AmClient | undefined;
let certs: TestCertificates;

beforeAll(() => {
  certs = makeTestCertificates();
});
afterAll(() => certs.remove());
afterEach(async () => {
  client?.close();
  client = undefined;
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

async function listen(server: Server): Promise<number> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return (server.address() as AddressInfo).port;
}

/** A plain-http service that answers every request with a user, and counts what arrived. */
async function plainService(): Promise<{ port: number; arrived: () => number }> {
  let arrived = 0;
  const port = await listen(
    createServer((req, res) => {
      arrived += 1;
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(user));
    }),
  );
  return { port, arrived: () => arrived };
}

async function tlsService(pair: KeyPair): Promise<{ port: number; arrived: () => number }> {
  let arrived = 0;
  const port = await listen(
    createTlsServer({ cert: pair.cert, key: pair.key }, (req, res) => {
      arrived += 1;
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(user));
    }),
  );
  return { port, arrived: () => arrived };
}


function connect(url: string, time: VirtualTime, overrides: Partial<ClientOptions> = {}): { client: AmClient; events: RequestEvent[] } {
  client = createClient({ url, token: new Secret('conn-failure-token'), timers: time, random: () => 0.999, initialRate: 1000, ...overrides });
  const events: RequestEvent[] = [];
  client.events.on('request', (event) => events.push(event));
  return { client, events };
}

async function failure(promise: Promise<unknown>): Promise<ApiError> {
  const error = await promise.catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}

describe('nothing listens at the URL', () => {
  it('fails within the two-second connect budget with one line: URL, cause and hint', async () => {
    const port = await closedPort();
    const time = new VirtualTime({ runsByItself: true });
    const { client: c, events } = connect(`http://127.0.0.1:${port}`, time);
    const error = await failure(c.fetchSshUser(7));
    expect(error.code).toBe('network');
    expect(error.message).toMatch(
      new RegExp(`^nothing listens at http://127\\.0\\.0\\.1:${port} \\(connection refused; \\d attempts in [\\d.]+ s\\) — is the emulator running\\? \\(amsync emulator --port ${port}\\)$`),
    );
    // Retried, but only within the connect budget (virtual milliseconds: the client's own clock).
    expect(error.attempts).toBeGreaterThan(1);
    expect(time.now()).toBeLessThanOrEqual(defaultRetryOptions.maxConnectElapsedMs);
    expect(events).toHaveLength(error.attempts);
    expect(events.every((e) => e.error === 'ECONNREFUSED')).toBe(true);
  });

  it('a listing says it once: no route prefix repeated around it', async () => {
    const port = await closedPort();
    const { client: c } = connect(`http://127.0.0.1:${port}`, new VirtualTime({ runsByItself: true }));
    const error = await c.listSshUsers().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ListingIncompleteError);
    const { message } = error as ListingIncompleteError;
    expect(message).toMatch(/^nothing listens at http:\/\/127\.0\.0\.1:\d+ /);
    expect(message).not.toContain('/api/sshusers');
    expect(message).not.toContain('\n');
  });

  it('once the service has answered, a refused connection is a restart: the whole retry budget applies', async () => {
    const service = await plainService();
    const time = new VirtualTime({ runsByItself: true });
    const { client: c } = connect(`http://127.0.0.1:${service.port}`, time, { random: () => 0.5 });
    await c.fetchSshUser(7);
    await new Promise<void>((resolve) => servers[0]!.close(() => resolve()));
    servers[0]!.closeAllConnections();
    servers.splice(0);
    const error = await failure(c.fetchSshUser(7));
    expect(error.code).toBe('network');
    expect(error.attempts).toBe(defaultRetryOptions.maxAttempts);
    expect(time.now()).toBeGreaterThan(defaultRetryOptions.maxConnectElapsedMs);
  });
});

describe('the host name does not resolve', () => {
  // .invalid never resolves (RFC 6761): no network is needed to get the failure.
  it('fails within the connect budget, naming the host and the URL', async () => {
    const time = new VirtualTime({ runsByItself: true });
    const { client: c } = connect('https://amsync-test.invalid', time);
    const error = await failure(c.fetchSshUser(7));
    expect(error.code).toBe('network');
    expect(error.message).toMatch(/^cannot resolve amsync-test\.invalid of https:\/\/amsync-test\.invalid /);
    expect(error.message).toMatch(/\(--url, AMSYNC_URL\)$|is DNS reachable from here\?$/);
    expect(time.now()).toBeLessThanOrEqual(defaultRetryOptions.maxConnectElapsedMs);
  });
});

describe('https:// to a plain-http service', () => {
  it('fails at once (never retried) and suggests http://', async () => {
    const service = await plainService();
    const { client: c } = connect(`https://127.0.0.1:${service.port}`, new VirtualTime({ runsByItself: true }));
    const error = await failure(c.fetchSshUser(7));
    expect(error).toMatchObject({ code: 'tls', attempts: 1 });
    expect(error.message).toBe(
      `TLS handshake with https://127.0.0.1:${service.port} failed (EPROTO) — does it serve plain HTTP? Then use http://127.0.0.1:${service.port}`,
    );
    expect(service.arrived()).toBe(0);
  });
});

describe('certificates that are not trusted fail at once and say why', () => {
  it('self-signed: names the URL and --ca-file; a POST is not an unknown outcome (nothing was sent)', async () => {
    const service = await tlsService(certs.selfSigned);
    const { client: c } = connect(`https://127.0.0.1:${service.port}`, new VirtualTime({ runsByItself: true }));
    const error = await failure(c.fetchSshUser(7));
    expect(error).toMatchObject({ code: 'tls', attempts: 1 });
    expect(error.message).toBe(
      `TLS certificate of https://127.0.0.1:${service.port} not trusted (self-signed): pass the CA that signed it with --ca-file (AMSYNC_CA_FILE)`,
    );
    const post = await failure(c.createApikey({ name: 'k' }));
    expect(post).toMatchObject({ code: 'tls', attempts: 1 });
    expect(service.arrived()).toBe(0);
  });

  it('with the certificate as --ca-file, the same service is trusted', async () => {
    const service = await tlsService(certs.selfSigned);
    const { client: c } = connect(`https://127.0.0.1:${service.port}`, new VirtualTime({ runsByItself: true }), { caFile: certs.selfSigned.certFile });
    await expect(c.fetchSshUser(7)).resolves.toMatchObject({ id: 7 });
  });

  it('issued by a CA that is not given: issuer unknown; with the CA it works', async () => {
    const service = await tlsService(certs.signedByCa);
    const url = `https://127.0.0.1:${service.port}`;
    const error = await failure(connect(url, new VirtualTime({ runsByItself: true })).client.fetchSshUser(7));
    expect(error.message).toBe(`TLS certificate of ${url} not trusted (issued by an unknown CA): pass the CA that signed it with --ca-file (AMSYNC_CA_FILE)`);
    client?.close();
    await expect(connect(url, new VirtualTime({ runsByItself: true }), { caFile: certs.ca.certFile }).client.fetchSshUser(7)).resolves.toMatchObject({ id: 7 });
  });

  it('clients alive at once with different CA files each verify with their own (got instances are shared by settings, never across CAs)', async () => {
    const service = await tlsService(certs.signedByCa);
    const url = `https://127.0.0.1:${service.port}`;
    const time = () => new VirtualTime({ runsByItself: true });
    const trusting = createClient({ url, token: new Secret('t'), timers: time(), caFile: certs.ca.certFile });
    const other = createClient({ url, token: new Secret('t'), timers: time(), caFile: certs.selfSigned.certFile });
    const none = createClient({ url, token: new Secret('t'), timers: time() });
    try {
      await expect(trusting.fetchSshUser(7)).resolves.toMatchObject({ id: 7 });
      expect((await failure(other.fetchSshUser(7))).message).toMatch(/^TLS certificate of .* not trusted/);
      expect((await failure(none.fetchSshUser(7))).message).toMatch(/^TLS certificate of .* not trusted \(issued by an unknown CA\)/);
      await expect(trusting.fetchSshUser(7)).resolves.toMatchObject({ id: 7 });
    } finally {
      for (const c of [trusting, other, none]) c.close();
    }
  });

  it('a CA file rewritten between two clients is read again (a daemon run after the CA was renewed)', async () => {
    const service = await tlsService(certs.signedByCa);
    const url = `https://127.0.0.1:${service.port}`;
    const dir = mkdtempSync(join(tmpdir(), 'amsync-ca-swap-'));
    try {
      const caFile = join(dir, 'ca.pem');
      writeFileSync(caFile, certs.selfSigned.cert);
      const before = createClient({ url, token: new Secret('t'), timers: new VirtualTime({ runsByItself: true }), caFile });
      expect((await failure(before.fetchSshUser(7))).message).toMatch(/not trusted/);
      before.close();
      writeFileSync(caFile, certs.ca.cert);
      const after = createClient({ url, token: new Secret('t'), timers: new VirtualTime({ runsByItself: true }), caFile });
      await expect(after.fetchSshUser(7)).resolves.toMatchObject({ id: 7 });
      after.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a --ca-file that did not sign it is named', async () => {
    const service = await tlsService(certs.selfSigned);
    const url = `https://127.0.0.1:${service.port}`;
    const error = await failure(connect(url, new VirtualTime({ runsByItself: true }), { caFile: certs.ca.certFile }).client.fetchSshUser(7));
    expect(error.message).toBe(`TLS certificate of ${url} not trusted (self-signed): the CA in --ca-file ${certs.ca.certFile} did not sign it; pass the one that did`);
  });

  it('a certificate for another host name says which host it lacks', async () => {
    const service = await tlsService(certs.localhostOnly);
    const url = `https://127.0.0.1:${service.port}`;
    const error = await failure(connect(url, new VirtualTime({ runsByItself: true }), { caFile: certs.localhostOnly.certFile }).client.fetchSshUser(7));
    expect(error).toMatchObject({ code: 'tls', attempts: 1 });
    expect(error.message).toBe(`TLS certificate of ${url} is not issued for 127.0.0.1: use a host name the certificate names in --url`);
  });
});

describe('--ca-file is read and parsed before anything is sent', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'amsync-ca-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const cases: [string, () => string, RegExp][] = [
    ['a file that is not PEM', () => write('notes.txt', 'not a certificate\n'), /holds no PEM certificate/],
    ['a PEM block that does not parse', () => write('broken.pem', '-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydA==\n-----END CERTIFICATE-----\n'), /holds a certificate that does not parse \(the 1st PEM block\)/],
    ['a file that does not exist', () => join(dir, 'absent.pem'), /cannot be read \(ENOENT\)/],
    ['a directory', () => dir, /is a directory/],
  ];
  function write(name: string, text: string): string {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  }

  it.each(cases)('%s: a configuration error naming the file and the flag', async (_name, make, problem) => {
    const service = await plainService();
    const caFile = make();
    let thrown: unknown;
    try {
      createClient({ url: `http://127.0.0.1:${service.port}`, token: new Secret('ca-check-token'), caFile });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ClientConfigError);
    expect(thrown).toMatchObject({ code: 'ca_file' });
    const { message } = thrown as ClientConfigError;
    expect(message).toContain(`the CA file ${caFile} (--ca-file, AMSYNC_CA_FILE, http.caFile)`);
    expect(message).toMatch(problem);
    expect(service.arrived()).toBe(0);
  });
});
