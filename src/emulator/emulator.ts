import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EmulatorError } from './errors.js';
import { FaultController } from './faults.js';
import { answerProtocolEdges } from './http-server.js';
import { createInstance, type EmulatorControl, type Instance, type InstanceEnvironment } from './instance.js';
import { resolveOptions, type EmulatorOptions } from './options.js';
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
  try {
    // Checked now: a tenant's faults are built on its first request, too late to refuse them.
    new FaultController(o.faults, createRng(o.seed), Date.now);
  } catch (error) {
    throw new EmulatorError('emulator_options', (error as Error).message, { cause: error });
  }

  let closed = false;
  const timers = new Set<NodeJS.Timeout>();
  const env: InstanceEnvironment = {
    options: o,
    sleep: (ms) =>
      new Promise<void>((resolve) => {
        const t = setTimeout(() => {
          timers.delete(t);
          resolve();
        }, ms);
        timers.add(t);
      }),
    isClosed: () => closed,
  };

  let single: Instance | null = null;
  let router: TenantRouter | null = null;
  let listener: (req: IncomingMessage, res: ServerResponse) => void;
  if (o.tenants === null) {
    const instance = createInstance(env, { pathPrefix: '', seed: o.seed, initialData, persistTo: o.dataFile });
    single = instance;
    listener = (req, res) => instance.handle(req, res, req.url ?? '/');
  } else {
    // Every tenant starts from the data file; none writes back (they would overwrite each other).
    const tenants = new TenantRouter(o.tenants, (name) => createInstance(env, { pathPrefix: tenantPrefix(name), seed: tenantSeed(o.seed, name), initialData, persistTo: undefined }));
    router = tenants;
    listener = (req, res) => tenants.listen(req, res);
  }

  const server = createServer(listener);
  const edges = answerProtocolEdges(server, listener);
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      reject(new EmulatorError('emulator_listen', `Cannot listen on ${o.host}:${o.port}: ${error.code ?? error.message}`, { cause: error }));
    });
    server.listen(o.port, o.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const hostInUrl = o.host.includes(':') ? `[${o.host}]` : o.host;
  const url = `http://${hostInUrl}:${port}`;

  const close = async (instances: Instance[]) => {
    if (closed) return;
    closed = true;
    for (const i of instances) i.dropPending();
    for (const t of timers) clearTimeout(t);
    timers.clear();
    const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    edges.closeAll();
    await stopped;
    await Promise.all(instances.map((i) => i.flush()));
  };

  if (single !== null) {
    const instance = single;
    return { ...instance.control, url, port, seedValue: o.seed, close: () => close([instance]) };
  }
  const tenants = router as TenantRouter;
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
    close: () => close(tenants.built()),
  };
}
