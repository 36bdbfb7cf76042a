import { setFlagsFromString } from 'node:v8';

/**
 * How far V8 lets the old space grow past what survived its last full collection before it
 * collects again, in percent. V8 picks 10–300 % by itself, the more the more memory it sees:
 * on a host with GBs free, a sync at 100k items per kind (a live set of ~80–110 MB) peaked at
 * ~375 MB RSS, nearly all of it garbage not yet collected. At 20 % it peaks near 250 MB, for
 * ~10–15 % more CPU in the collector (docs/performance.md).
 */
export const heapGrowingPercent = 20;

// Flags by which a user sizes the heap: then their choice stands. V8 takes - and _ alike.
const userHeapFlag = /--(max-old-space-size|max-semi-space-size|max-heap-size|heap-growing-percent)\b/;

/**
 * Bounds the heap's growth by the live data rather than by the host's memory, for the CLI
 * process, unless the user sized the heap (NODE_OPTIONS or node flags). A growth factor, not
 * a size limit: a desired state larger than any fixed limit still runs, only collected sooner.
 * V8 reads the flag each time it sets the next collection's threshold, so setting it at start,
 * before the work, takes effect. Returns whether it was set.
 */
export function limitHeapGrowth(
  execArgv: readonly string[] = process.execArgv,
  nodeOptions: string = process.env.NODE_OPTIONS ?? '',
  setFlags: (flags: string) => void = setFlagsFromString,
): boolean {
  if ([...execArgv, nodeOptions].some((arg) => userHeapFlag.test(arg.replace(/_/g, '-')))) return false;
  setFlags(`--heap-growing-percent=${heapGrowingPercent}`);
  return true;
}
