import type { z } from 'zod';
import type { Call, ParseResult, RequestExecutor } from './request-executor.js';
import { paginate } from './paginate.js';
import type { Timers } from '../time/index.js';
import type { Page, PageCursor } from './types.js';

export interface ResourceDefinition<T, TNew, TChanges> {
  /** e.g. `/api/sshusers`. */
  readonly route: string;
  readonly itemSchema: z.ZodType<T>;
  readonly pageSchema: z.ZodType<{ readonly cursor: PageCursor; readonly items: readonly T[] }>;
  readonly idOf: (item: T) => number;
  /** What two listings of one id must agree on (see PaginateOptions.contentOf). */
  readonly contentOf: (item: T) => string | number;
  /** Request body (secrets revealed) and the secret values in it. */
  readonly serialiseNew: (body: TNew) => WireBody;
  readonly serialiseChanges: (body: TChanges) => WireBody;
}

export interface WireBody {
  readonly json: string;
  readonly secrets: readonly string[];
}

export interface ResourceSettings {
  /** The largest page asked for (`--page-size`); the service's own largest is learned below it. */
  readonly pageSize: number;
  readonly maxPages: number;
  /** A listing must end within this long. */
  readonly listDeadlineMs: number;
  readonly timers: Timers;
}

/** What one kind's listings learn about the service, kept for the client's lifetime. */
interface ListingMemory {
  /** The service's largest page, once a short page followed by another showed it. */
  serverMax: number | undefined;
}

function describeIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (issue === undefined) return 'unexpected shape';
  const path = issue.path.map((part) => (typeof part === 'number' ? `[${part}]` : `.${String(part)}`)).join('');
  // Zod's messages name the expected and received types, never the received value.
  return `${path === '' ? 'body' : path.replace(/^\./, '')}: ${issue.message}`;
}

export function parseWith<T>(schema: z.ZodType<T>, body: string): ParseResult<T> {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return { ok: false, problem: 'the body is not JSON' };
  }
  const result = schema.safeParse(json);
  return result.success ? { ok: true, value: result.data } : { ok: false, problem: describeIssue(result.error) };
}

function checkId(id: number): number {
  if (!Number.isSafeInteger(id) || id < 0) throw new RangeError(`Expected \`id\` to be a non-negative integer, got ${String(id)}`);
  return id;
}

/** The five operations on one kind of item, on top of the executor. */
export class Resource<T, TNew, TChanges> {
  readonly #def: ResourceDefinition<T, TNew, TChanges>;
  readonly #executor: RequestExecutor;
  readonly #settings: ResourceSettings;
  readonly #memory: ListingMemory;
  readonly #signal: AbortSignal | undefined;

  constructor(definition: ResourceDefinition<T, TNew, TChanges>, executor: RequestExecutor, settings: ResourceSettings, memory: ListingMemory = { serverMax: undefined }, signal?: AbortSignal) {
    this.#def = definition;
    this.#executor = executor;
    this.#settings = settings;
    this.#memory = memory;
    this.#signal = signal;
  }

  /** The same resource (and what its listings learnt), its calls cancelled by `signal`. */
  withSignal(signal: AbortSignal): Resource<T, TNew, TChanges> {
    return new Resource(this.#def, this.#executor, this.#settings, this.#memory, signal);
  }

  /**
   * The pages of a listing. It asks for `pageSize` items per page until a page shows the
   * service's own largest (shorter than asked, and not the last), then for exactly that: the
   * fewest round trips the service allows, ceil(N / its largest page).
   */
  list(): AsyncIterable<Page<T>> {
    const { route, pageSchema, idOf, contentOf } = this.#def;
    const memory = this.#memory;
    const { pageSize, maxPages, listDeadlineMs, timers } = this.#settings;
    return paginate({
      route,
      idOf,
      contentOf,
      maxPages,
      pageSize: Math.min(pageSize, memory.serverMax ?? pageSize),
      ...(memory.serverMax === undefined
        ? {
            onServerMax: (size: number) => {
              memory.serverMax = size;
            },
          }
        : {}),
      deadlineMs: listDeadlineMs,
      now: () => timers.now(),
      fetchPage: (cursor, size) =>
        this.#executor.run({
          method: 'GET',
          path: route,
          route,
          searchParams: { cursor: String(cursor), size: String(size) },
          parse: (status, body) => (status === 200 ? parseWith(pageSchema, body) : { ok: false, problem: `a listing must answer 200` }),
          ...this.#signalled(),
        }),
    });
  }

  #signalled(): { signal?: AbortSignal } {
    return this.#signal === undefined ? {} : { signal: this.#signal };
  }

  /** Every item, or ListingIncompleteError: never a partial list. */
  async listAll(): Promise<T[]> {
    const all: T[] = [];
    for await (const page of this.list()) all.push(...page.items);
    return all;
  }

  fetch(id: number): Promise<T> {
    const { itemSchema } = this.#def;
    return this.#executor.run(
      this.#itemCall('GET', id, undefined, (status, body) =>
        status === 200 ? parseWith(itemSchema, body) : { ok: false, problem: 'a fetch must answer 200' },
      ),
    );
  }

  /** The created item, or undefined when the service accepted it for later (202). */
  create(body: TNew): Promise<T | undefined> {
    const { route, itemSchema } = this.#def;
    const wire = this.#def.serialiseNew(body);
    return this.#executor.run<T | undefined>({
      method: 'POST',
      path: route,
      route,
      body: wire.json,
      secrets: wire.secrets,
      parse: (status, text) => (status === 202 ? { ok: true, value: undefined } : parseWith(itemSchema, text)),
      ...this.#signalled(),
    });
  }

  /** The updated item, or undefined when the service accepted it for later (202). */
  update(id: number, changes: TChanges): Promise<T | undefined> {
    const { itemSchema } = this.#def;
    const wire = this.#def.serialiseChanges(changes);
    return this.#executor.run(
      this.#itemCall<T | undefined>('PUT', id, wire, (status, text) => (status === 202 ? { ok: true, value: undefined } : parseWith(itemSchema, text))),
    );
  }

  /** Resolves on any 2xx (202 included); a missing item is ApiError `not_found`. */
  async delete(id: number): Promise<void> {
    await this.#executor.run(this.#itemCall('DELETE', id, undefined, () => ({ ok: true, value: undefined })));
  }

  #itemCall<R>(method: 'GET' | 'PUT' | 'DELETE', id: number, wire: WireBody | undefined, parse: Call<R>['parse']): Call<R> {
    const { route } = this.#def;
    return {
      method,
      path: `${route}/${checkId(id)}`,
      route: `${route}/{id}`,
      ...(wire === undefined ? {} : { body: wire.json, secrets: wire.secrets }),
      parse,
      ...this.#signalled(),
    };
  }
}
