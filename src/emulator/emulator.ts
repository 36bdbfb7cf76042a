import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EmulatorError } from './errors.js';
import { FaultController } from './faults.js';
import { answerProtocolEdges } from './http-server.js';
import { createInstance, type EmulatorControl, type Instance, type InstanceEnvironment } from './instance.js';
import { resolveOptions, type EmulatorOptions, type ResolvedOptions } from './options.js';
import { loadDataFile } from './persistence.js';
import { createRng } from './rng.js';
import { TenantRouter } from './tenant-router.js';
import { tenantPrefix, tenantSeed } from './tenants.js';

export interface RunningEmulator extends EmulatorControl {
  /** `http://HOST:PORT`, no trailing slash. */
  url: string;
  port: number;
  /** The seed of the fault generator, to replay a run. */
  seedValue: number;
  /** Stops listening, cuts open connections, drops pending async writes, flushes the data file. */
  close(): Promise<void>;
}

/** One tenant of a multi-tenant emulator: its base URL and its control, as a lone emulator's. */
export interface TenantEmulator extends EmulatorControl {
  readonly name: string;
  /** `http://HOST:PORT/t/<name>`, no trailing slash: what a client takes as the service's URL. */
  readonly url: string;
  /** The seed of this tenant's fault generator (derived from the emulator's seed and the name). */
  readonly seedValue: number;
}

/** An emulator started with `tenants`: many independent services on one port, under `/t/<name>/`. */
export interface RunningTenants {
  /** `http://HOST:PORT`, no trailing slash; un-prefixed paths answer 404. */
  url: string;
  port: number;
  /** The seed every tenant's fault seed derives from, to replay a run. */
  seedValue: number;
  /** Every tenant's name, in the order given (`t1` … `tN` for a number). */
  readonly tenantNames: readonly string[];
  /** A tenant's URL and control; its state is built now if no request has built it yet. Throws for an unknown name. */
  tenant(name: string): TenantEmulator;
  /** How many tenants have state so far (a tenant's state is built on its first request or handle). */
  activeTenants(): number;
  /** Stops listening, cuts open connections, drops every tenant's pending async writes. */
  close(): Promise<void>;
}

/**
 * Starts an emulator on node:http; resolves once it is listening. With `tenants` it serves many
 * services under `/t/<name>/` and answers their handles; without, one service at the root.
 */
export function startEmulator(options: EmulatorOptions & { tenants: number | readonly string[] }): Promise<RunningTenants>;
export function startEmulator(options?: EmulatorOptions & { tenants?: undefined }): Promise<RunningEmulator>;
export async function startEmulator(options: EmulatorOptions = {}): Promise<RunningEmulator | RunningTenants> {
  const o = resolveOptions(options);
  const initialData = o.dataFile === undefined ? null : await loadDataFile(o.dataFile);
  checkFaults(o);
  const host = new EmulatorHost(o);
  if (o.tenants === null) {
    const instance = createInstance(host.env, { pathPrefix: '', seed: o.seed, initialData, persistTo: o.dataFile });
    const { url, port } = await host.listen((req, res) => instance.handle(req, res, req.url ?? '/'));
    return { ...instance.control, url, port, seedValue: o.seed, close: () => host.close([instance]) };
  }
  // Every tenant starts from the data file; none writes back (they would overwrite each other).
  const tenants = new TenantRouter(o.tenants, (name) => createInstance(host.env, { pathPrefix: tenantPrefix(name), seed: tenantSeed(o.seed, name), initialData, persistTo: undefined }));
  const { url, port } = await host.listen((req, res) => tenants.listen(req, res));
  return {
    url,
    port,
    seedValue: o.seed,
    tenantNames: tenants.names,
    tenant(name) {
      const instance = tenants.has(name) ? tenants.instance(name) : undefined;
      if (instance === undefined) throw new EmulatorError('emulator_options', `Expected the name of a tenant of this emulator, got '${name}'`);
      return { ...instance.control, name, url: `${url}${tenantPrefix(name)}`, seedValue: tenantSeed(o.seed, name) };
    },
    activeTenants: () => tenants.active,
    close: () => host.close(tenants.built()),
  };
}

/** Checked now: a tenant's faults are built on its first request, too late to refuse them. */
function checkFaults(o: ResolvedOptions): void {
  try {
    new FaultController(o.faults, createRng(o.seed), Date.now);
  } catch (error) {
    throw new EmulatorError('emulator_options', (error as Error).message, { cause: error });
  }
}

/**
 * The node:http server the instances sit behind, and what its close takes down: their pending
 * writes, their timers (latency, delayed answers), the open connections.
 */
class EmulatorHost {
  readonly #o: ResolvedOptions;
  readonly #timers = new Set<NodeJS.Timeout>();
  #closed = false;
  #server: Server | undefined;
  #edges: { closeAll(): void } | undefined;
  /** What every instance shares with the host. */
  readonly env: InstanceEnvironment;

  constructor(o: ResolvedOptions) {
    this.#o = o;
    this.env = { options: o, sleep: (ms) => this.#sleep(ms), isClosed: () => this.#closed };
  }

  /** Resolves once listening; throws EmulatorError when the address cannot be bound. */
  async listen(listener: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ url: string; port: number }> {
    const o = this.#o;
    const server = createServer(listener);
    this.#server = server;
    this.#edges = answerProtocolEdges(server, listener);
    await new Promise<void>((resolve, reject) => {
      server.once('error', (error: NodeJS.ErrnoException) => {
        reject(new EmulatorError('emulator_listen', `Cannot listen on ${o.host}:${o.port}: ${error.code ?? error.message}`, { cause: error }));
      });
      server.listen(o.port, o.host, () => resolve());
    });
    const port = (server.address() as AddressInfo).port;
    const hostInUrl = o.host.includes(':') ? `[${o.host}]` : o.host;
    return { url: `http://${hostInUrl}:${port}`, port };
  }

  /** Once: drops the instances' pending writes, cuts the connections, then flushes their data files. */
  async close(instances: Instance[]): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const i of instances) i.dropPending();
    for (const t of this.#timers) clearTimeout(t);
    this.#timers.clear();
    const server = this.#server!;
    const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    this.#edges?.closeAll();
    await stopped;
    await Promise.all(instances.map((i) => i.flush()));
  }

  #sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const t = setTimeout(() => {
        this.#timers.delete(t);
        resolve();
      }, ms);
      this.#timers.add(t);
    });
  }
}
