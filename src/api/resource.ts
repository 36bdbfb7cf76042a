import type { z } from 'zod';
import type { Kind, WriteOutcome } from '../model/index.js';
import { isApiError } from './api-error.js';
import { emitSafely, type ClientEvents } from './client-events.js';
import type { Call, ParseResult, RequestExecutor } from './request-executor.js';
import { paginate } from './paginate.js';
import { callSignals, type RunSignals } from './run-signals.js';
import type { Timers } from '../time/index.js';
import type { Page, PageCursor } from './types.js';

export interface ResourceDefinition<T, TNew, TChanges> {
  readonly kind: Kind;
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
  /** What a 200 answer to a create tells the caller (the id; an apikey's token). */
  readonly createdOutcome: (item: T) => WriteOutcome;
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
  /** Where each listed page is told (`page`: the live output's progress). */
  readonly events?: ClientEvents;
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
  readonly #run: RunSignals;
  /** What each call carries, made once from the run's signals. */
  readonly #calls: RunSignals;

  constructor(definition: ResourceDefinition<T, TNew, TChanges>, executor: RequestExecutor, settings: ResourceSettings, memory: ListingMemory = { serverMax: undefined }, run: RunSignals = {}) {
    this.#def = definition;
    this.#executor = executor;
    this.#settings = settings;
    this.#memory = memory;
    this.#run = run;
    this.#calls = callSignals(run);
  }

  /** The same resource (and what its listings learnt), its calls cancelled by `signal`. */
  withSignal(signal: AbortSignal): Resource<T, TNew, TChanges> {
    return new Resource(this.#def, this.#executor, this.#settings, this.#memory, { ...this.#run, signal });
  }

  /** The same resource, its calls stopped short of the wire once `stop` fires (see Call.stop). */
  withStop(stop: AbortSignal): Resource<T, TNew, TChanges> {
    return new Resource(this.#def, this.#executor, this.#settings, this.#memory, { ...this.#run, stop });
  }

  /**
   * The pages of a listing. It asks for `pageSize` items per page until a page shows the
   * service's own largest (shorter than asked, and not the last), then for exactly that: the
   * fewest round trips the service allows, ceil(N / its largest page).
   */
  async *list(): AsyncGenerator<Page<T>, void, undefined> {
    const { kind } = this.#def;
    const { events } = this.#settings;
    for await (const page of this.#pages()) {
      if (events !== undefined) emitSafely(events, 'page', { kind, items: page.items.length });
      yield page;
    }
  }

  #pages(): AsyncIterable<Page<T>> {
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

  #signalled(): RunSignals {
    return this.#calls;
  }

  /**
   * Every item, or ListingIncompleteError: never a partial list. `keep` converts each item as
   * its page arrives (an apikey without its token), so what is dropped is never held.
   */
  async listAll<R = T>(keep?: (item: T) => R): Promise<R[]> {
    const all: R[] = [];
    for await (const page of this.list()) {
      if (keep === undefined) all.push(...(page.items as unknown as readonly R[]));
      else for (const item of page.items) all.push(keep(item));
    }
    return all;
  }

  /** The item as it is now; undefined when the service answers 404. */
  async fetch(id: number): Promise<T | undefined> {
    const { itemSchema } = this.#def;
    try {
      return await this.#executor.run(
        this.#itemCall('GET', id, undefined, (status, body) => (status === 200 ? parseWith(itemSchema, body) : { ok: false, problem: 'a fetch must answer 200' })),
      );
    } catch (error) {
      if (isApiError(error, 'not_found')) return undefined;
      throw error;
    }
  }

  /** 200: the created item's id (and token); 202: accepted for later, the next listing confirms it. */
  create(body: TNew): Promise<WriteOutcome> {
    const { route, itemSchema, createdOutcome } = this.#def;
    const wire = this.#def.serialiseNew(body);
    return this.#executor.run<WriteOutcome>({
      method: 'POST',
      path: route,
      route,
      body: wire.json,
      secrets: wire.secrets,
      parse: (status, text) => (status === 202 ? { ok: true, value: { accepted: true } } : outcome(parseWith(itemSchema, text), createdOutcome)),
      ...this.#signalled(),
    });
  }

  /** 200: done; 202: accepted for later. The answer's item is checked, then not needed. */
  update(id: number, changes: TChanges): Promise<WriteOutcome> {
    const { itemSchema } = this.#def;
    const wire = this.#def.serialiseChanges(changes);
    return this.#executor.run(
      this.#itemCall<WriteOutcome>('PUT', id, wire, (status, text) =>
        status === 202 ? { ok: true, value: { id, accepted: true } } : outcome(parseWith(itemSchema, text), () => ({ id, accepted: false })),
      ),
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

function outcome<T>(parsed: ParseResult<T>, toOutcome: (item: T) => WriteOutcome): ParseResult<WriteOutcome> {
  return parsed.ok ? { ok: true, value: toOutcome(parsed.value) } : parsed;
}
