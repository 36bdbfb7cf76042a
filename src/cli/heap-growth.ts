import { constants, PerformanceObserver } from 'node:perf_hooks';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';

/**
 * How far V8 lets the old space grow past what survived its last full collection before it
 * collects again, in percent, once the heap is large. V8 picks 10–300 % by itself, the more
 * the more memory it sees: on a host with GBs free, a sync at 100k items per kind (a live set
 * of ~80–110 MB) peaked at ~375 MB RSS, nearly all of it garbage not yet collected. At 20 %
 * it peaks near 230 MB (docs/performance.md).
 */
export const heapGrowingPercent = 20;

/**
 * The growth while the live heap is small. Each full collection marks the whole live heap, so
 * a listing that builds up 100 MB through 20 % steps is marked ~13 times (~600 MB of marking
 * in all); doubling while the heap is small takes a few collections to get there, and costs
 * no memory at the peak, which comes when the heap is large. `amsync plan` at 100k + 100k,
 * medians of three alternating runs, twice: 5.07 and 5.02 s of CPU against 5.41 and 5.30 s
 * at 20 % throughout, peak RSS 225–229 MB against 224–226 MB (docs/performance.md).
 */
export const smallHeapGrowingPercent = 100;

/**
 * The live heap (after a full collection) from which growth is held to heapGrowingPercent:
 * below it, doubling reaches at most twice this, less than the peak of the runs it is for.
 */
export const smallHeapBytes = 48 * 1024 * 1024;

// Flags by which a user sizes the heap: then their choice stands. V8 takes - and _ alike.
const userHeapFlag = /--(max-old-space-size|max-semi-space-size|max-heap-size|heap-growing-percent)\b/;

/** Calls `after` with the heap's used bytes after each full collection until it returns true. */
export type FullCollectionWatch = (after: (usedBytes: number) => boolean) => void;

/**
 * Bounds the heap's growth by the live data rather than by the host's memory, for the CLI
 * process, unless the user sized the heap (NODE_OPTIONS or node flags): generous while the
 * heap is small, held once it is large. A growth factor, not a size limit: a desired state
 * larger than any fixed limit still runs, only collected sooner. V8 reads the flag each time
 * it sets the next collection's threshold, so setting it at start, and again after a full
 * collection, takes effect. Returns whether it was set.
 */
export function limitHeapGrowth(
  execArgv: readonly string[] = process.execArgv,
  nodeOptions: string = process.env.NODE_OPTIONS ?? '',
  setFlags: (flags: string) => void = setFlagsFromString,
  watch: FullCollectionWatch = watchFullCollections,
): boolean {
  if ([...execArgv, nodeOptions].some((arg) => userHeapFlag.test(arg.replace(/_/g, '-')))) return false;
  setFlags(`--heap-growing-percent=${smallHeapGrowingPercent}`);
  watch((usedBytes) => {
    if (usedBytes < smallHeapBytes) return false;
    setFlags(`--heap-growing-percent=${heapGrowingPercent}`);
    return true;
  });
  return true;
}

/**
 * Full (mark-compact) collections, as node's performance timeline reports them, a moment
 * after each. The observer does not keep the process alive and is dropped once `after` is done.
 */
export function watchFullCollections(after: (usedBytes: number) => boolean): void {
  const observer = new PerformanceObserver((list) => {
    const full = list.getEntries().some((entry) => (entry as { readonly detail?: { readonly kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR);
    if (full && after(getHeapStatistics().used_heap_size)) observer.disconnect();
  });
  observer.observe({ entryTypes: ['gc'] });
}
