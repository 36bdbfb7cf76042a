/**
 * Indexes remote items by id and by key. Keys are not always unique remotely (apikey names
 * are not), so the key index keeps every item that carries the key.
 */
export interface ActualIndex<T extends { id: number }> {
  readonly byId: ReadonlyMap<number, T>;
  readonly byKey: ReadonlyMap<string, readonly T[]>;
}

export function indexActual<T extends { id: number }>(items: readonly T[], keyOf: (item: T) => string): ActualIndex<T> {
  const byId = new Map<number, T>();
  const byKey = new Map<string, T[]>();
  for (const item of items) {
    if (byId.has(item.id)) continue;
    byId.set(item.id, item);
    const key = keyOf(item);
    const list = byKey.get(key);
    if (list) list.push(item);
    else byKey.set(key, [item]);
  }
  return { byId, byKey };
}
