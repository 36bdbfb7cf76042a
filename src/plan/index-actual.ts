/**
 * Indexes remote items by id and by key. Keys are not always unique remotely (apikey names
 * are not), so the key index keeps every item that carries the key.
 */
export interface ActualIndex<T extends { id: number }> {
  readonly byId: ReadonlyMap<number, T>;
  /** Every item that carries `key`, in listing order. */
  carriers(key: string): readonly T[];
}

const none: readonly never[] = Object.freeze([]);

export function indexActual<T extends { id: number }>(items: readonly T[], keyOf: (item: T) => string): ActualIndex<T> {
  const byId = new Map<number, T>();
  // A key carried once maps to its item, not to a list of one: at 100k items, 100k arrays
  // held for the whole plan (test/bench).
  const byKey = new Map<string, T | T[]>();
  for (const item of items) {
    if (byId.has(item.id)) continue;
    byId.set(item.id, item);
    const key = keyOf(item);
    const held = byKey.get(key);
    if (held === undefined) byKey.set(key, item);
    else if (Array.isArray(held)) held.push(item);
    else byKey.set(key, [held, item]);
  }
  return {
    byId,
    carriers(key) {
      const held = byKey.get(key);
      return held === undefined ? none : Array.isArray(held) ? held : [held];
    },
  };
}
