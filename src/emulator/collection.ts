import { decodeCursor, encodeCursor, MAX_CURSOR_ID } from './cursor-codec.js';
import { EmulatorError } from './errors.js';

export interface Page<T> {
  items: T[];
  current: number;
  next: number | null;
  previous: number | null;
  /** Position of the page's first item, for faults that bend the cursor. */
  position: number;
}

/**
 * Items of one kind: a Map by id for O(1) access, and the ids in ascending order for paging.
 * Ids are handed out increasing, so a create is an append; a page is a binary search plus a
 * slice, O(log n + page size) at any n.
 */
export class Collection<T extends { id: number }> {
  private readonly byId = new Map<number, T>();
  private ids: number[] = [];
  private nextId = 1;

  constructor(private readonly cursorKey: number) {}

  get size(): number {
    return this.byId.size;
  }

  /** The id the next created item gets; ids are never reused until reset. */
  get upcomingId(): number {
    return this.nextId;
  }

  get(id: number): T | undefined {
    return this.byId.get(id);
  }

  allocateId(): number {
    const id = this.nextId;
    if (id > MAX_CURSOR_ID) throw new EmulatorError('emulator_id_space', `The emulator ran out of ids (more than ${MAX_CURSOR_ID} items created since reset).`);
    this.nextId += 1;
    return id;
  }

  insert(item: T): void {
    if (this.byId.has(item.id)) throw new RangeError(`duplicate id ${item.id}`);
    this.byId.set(item.id, item);
    const last = this.ids[this.ids.length - 1];
    if (last === undefined || item.id > last) this.ids.push(item.id);
    else this.ids.splice(lowerBound(this.ids, item.id), 0, item.id);
    if (item.id >= this.nextId) this.nextId = item.id + 1;
  }

  remove(id: number): T | undefined {
    const item = this.byId.get(id);
    if (item === undefined) return undefined;
    this.byId.delete(id);
    this.ids.splice(lowerBound(this.ids, id), 1);
    return item;
  }

  /** Every item in id order. */
  values(): T[] {
    const out: T[] = [];
    for (const id of this.ids) out.push(this.byId.get(id) as T);
    return out;
  }

  clear(): void {
    this.byId.clear();
    this.ids = [];
    this.nextId = 1;
  }

  /** Restores the id counter of a loaded data file, so ids of deleted items stay unused. */
  setUpcomingId(id: number): void {
    if (id > this.nextId) this.nextId = id;
  }

  /**
   * One page. `cursor` 0 is the first page; any other value must be a cursor this collection
   * made (else null: a bad cursor). `advance` is how far `next` moves; less than `size` makes
   * overlapping pages (a fault).
   */
  page(cursor: number, size: number, advance = size): Page<T> | null {
    let position = 0;
    if (cursor !== 0) {
      const id = decodeCursor(cursor, this.cursorKey);
      if (id === null) return null;
      // The first item at or after the named id: the page survives deletion of that item.
      position = lowerBound(this.ids, id);
    }
    const end = Math.min(position + size, this.ids.length);
    const items: T[] = [];
    for (let i = position; i < end; i += 1) items.push(this.byId.get(this.ids[i] as number) as T);
    const nextPosition = position + Math.max(1, Math.min(advance, end - position));
    return {
      items,
      current: cursor,
      next: end < this.ids.length || nextPosition < end ? this.cursorAt(nextPosition) : null,
      previous: position > 0 ? this.cursorAt(Math.max(0, position - size)) : null,
      position,
    };
  }

  /** The cursor of the page starting at `position`; the first page is always 0. */
  cursorAt(position: number): number {
    if (position <= 0) return 0;
    const id = this.ids[position];
    return id === undefined ? 0 : encodeCursor(id, this.cursorKey);
  }

  /**
   * The `cursorLoop` fault: a `next` that names an earlier page than the one at `position`
   * (the previous one, or the first page itself). Never 0, even for the first page: a client
   * that follows `next` while it is truthy (the vendor's own) must see a cursor, not the end.
   */
  loopCursor(position: number, size: number): number | null {
    const id = this.ids[Math.max(0, position - size)] ?? this.ids[0];
    // An empty collection has no page to point back to: the listing simply ends.
    return id === undefined ? null : encodeCursor(id, this.cursorKey);
  }
}

/** Index of the first element >= value in an ascending array. */
export function lowerBound(sorted: readonly number[], value: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((sorted[mid] as number) < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
