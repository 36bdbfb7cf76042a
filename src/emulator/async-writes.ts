/**
 * Accepted writes (202) waiting to take effect. They land in the order they were accepted,
 * each no sooner than its delay; a read of an item with a write in flight can wait for it.
 */
interface Entry {
  due: number;
  item: string | null;
  apply: () => void;
}

interface Waiter {
  count: number;
  promise: Promise<void>;
  resolve: () => void;
}

export class AsyncWriteQueue {
  private readonly entries: Entry[] = [];
  private readonly waiters = new Map<string, Waiter>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly nowMs: () => number,
    /** Called after each write has landed (persisting it). */
    private readonly onApplied: () => void,
  ) {}

  get size(): number {
    return this.entries.length;
  }

  enqueue(item: string | null, delayMs: number, apply: () => void): void {
    this.entries.push({ due: this.nowMs() + delayMs, item, apply });
    if (item !== null) {
      const w = this.waiters.get(item);
      if (w) w.count += 1;
      else {
        let resolve = () => {};
        const promise = new Promise<void>((r) => (resolve = r));
        this.waiters.set(item, { count: 1, promise, resolve });
      }
    }
    this.schedule();
  }

  pendingFor(item: string): Promise<void> | null {
    return this.waiters.get(item)?.promise ?? null;
  }

  /** Drops every pending write (reset, close) and releases readers waiting on them. */
  clear(): void {
    this.entries.length = 0;
    for (const w of this.waiters.values()) w.resolve();
    this.waiters.clear();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private schedule(): void {
    if (this.timer !== null) return;
    const head = this.entries[0];
    if (!head) return;
    this.timer = setTimeout(() => this.run(), Math.max(0, head.due - this.nowMs()));
  }

  private run(): void {
    this.timer = null;
    let applied = false;
    while (this.entries.length > 0 && (this.entries[0] as Entry).due <= this.nowMs()) {
      const entry = this.entries.shift() as Entry;
      entry.apply();
      applied = true;
      if (entry.item !== null) this.release(entry.item);
    }
    if (applied) this.onApplied();
    this.schedule();
  }

  private release(item: string): void {
    const w = this.waiters.get(item);
    if (!w) return;
    w.count -= 1;
    if (w.count === 0) {
      this.waiters.delete(item);
      w.resolve();
    }
  }
}
