import type { IncomingMessage, ServerResponse } from 'node:http';
import { send } from './http-server.js';
import type { Instance } from './instance.js';
import { oneError } from './reply.js';
import { describeTenantNames, splitTenantTarget, TENANT_ROOT } from './tenants.js';

/**
 * Routes `/t/<name>/…` to the tenant's own service, built on its first request (or first
 * handle), so idle tenants cost a map entry. Anything else answers 404 in the API's error
 * shape: an unknown tenant, or a path without a tenant.
 */
export class TenantRouter {
  readonly #names: readonly string[];
  readonly #instances = new Map<string, Instance | null>();
  readonly #build: (name: string) => Instance;

  constructor(names: readonly string[], build: (name: string) => Instance) {
    this.#names = names;
    for (const name of names) this.#instances.set(name, null);
    this.#build = build;
  }

  get names(): readonly string[] {
    return this.#names;
  }

  has(name: string): boolean {
    return this.#instances.has(name);
  }

  /** The tenant's service, built now if it has not been; undefined for an unknown name. */
  instance(name: string): Instance | undefined {
    const existing = this.#instances.get(name);
    if (existing !== null) return existing;
    const built = this.#build(name);
    this.#instances.set(name, built);
    return built;
  }

  /** Tenants whose service has been built (by a request or a handle). */
  get active(): number {
    let n = 0;
    for (const instance of this.#instances.values()) if (instance !== null) n += 1;
    return n;
  }

  /** Every tenant built so far, for close. */
  built(): Instance[] {
    return [...this.#instances.values()].filter((i): i is Instance => i !== null);
  }

  /** The node:http listener of the whole server. */
  listen(req: IncomingMessage, res: ServerResponse): void {
    const target = req.url ?? '/';
    const split = splitTenantTarget(target);
    const path = target.split('?')[0] ?? target;
    if (split === null) return this.#notFound(req, res, `no API at ${path}: this emulator serves ${this.#served()}`);
    const instance = this.#instances.has(split.name) ? this.instance(split.name) : undefined;
    if (instance === undefined) return this.#notFound(req, res, `no tenant '${split.name}' (${path}): this emulator serves ${this.#served()}`);
    instance.handle(req, res, split.target);
  }

  #served(): string {
    return `${this.#names.length} tenant(s) (${describeTenantNames(this.#names)}) under ${TENANT_ROOT}<name>/`;
  }

  #notFound(req: IncomingMessage, res: ServerResponse, msg: string): void {
    // The body is read and dropped, so the connection stays usable for the next request.
    req.once('error', () => res.destroy());
    req.once('end', () => send(res, oneError(404, 'path', 'not_found', msg)));
    req.resume();
  }
}
