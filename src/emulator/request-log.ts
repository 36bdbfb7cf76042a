import type { RequestLogEntry } from './types.js';

/**
 * The log of API requests that tests and benchmarks assert on. Bounded: past `limit` entries
 * the oldest tenth is dropped at once (amortised O(1); shifting one at a time is O(n)).
 */
export class RequestLog {
  private entries: RequestLogEntry[] = [];
  private seq = 0;
  private droppedCount = 0;

  constructor(private readonly limit = 200_000) {}

  /** Numbers a request on arrival; `finish` records it once answered. */
  nextSeq(): number {
    this.seq += 1;
    return this.seq;
  }

  finish(entry: RequestLogEntry): void {
    this.entries.push(entry);
    if (this.entries.length > this.limit) {
      const drop = Math.ceil(this.limit / 10);
      this.entries = this.entries.slice(drop);
      this.droppedCount += drop;
    }
  }

  /** Entries in the order they were answered, optionally only those with seq > since. */
  list(since = 0): RequestLogEntry[] {
    return since > 0 ? this.entries.filter((e) => e.seq > since) : [...this.entries];
  }

  get dropped(): number {
    return this.droppedCount;
  }

  clear(): void {
    this.entries = [];
    this.droppedCount = 0;
  }
}
