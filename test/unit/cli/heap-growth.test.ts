import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { holdsLiveData } from '../../../src/cli/commands.js';
import { heapGrowingPercent, limitHeapGrowth, smallHeapBytes, smallHeapGrowingPercent, watchFullCollections, type FullCollectionWatch } from '../../../src/cli/heap-growth.js';

describe("the CLI bounds its heap's growth by the live data, unless the user sized the heap", () => {
  /** The flags set, and a hand on the full collections the limiter watches. */
  const limited = (execArgv: string[], nodeOptions: string) => {
    const set: string[] = [];
    const watchers: ((usedBytes: number) => boolean)[] = [];
    const watch: FullCollectionWatch = (after) => watchers.push(after);
    const applied = limitHeapGrowth(execArgv, nodeOptions, (flags) => set.push(flags), watch);
    // Reports a full collection to the watcher still listening, as the observer does.
    const collected = (usedBytes: number): void => {
      const after = watchers[0];
      if (after?.(usedBytes)) watchers.shift();
    };
    return { set, applied, collected, watching: () => watchers.length };
  };
  const run = (execArgv: string[], nodeOptions: string): string[] => limited(execArgv, nodeOptions).set;

  it('lets a small heap grow freely, and holds its growth once a full collection leaves it large', () => {
    const heap = limited([], '');
    expect(heap.applied).toBe(true);
    expect(heap.set).toEqual([`--heap-growing-percent=${smallHeapGrowingPercent}`]);
    heap.collected(smallHeapBytes - 1);
    expect(heap.set).toHaveLength(1);
    expect(heap.watching()).toBe(1);
    heap.collected(smallHeapBytes);
    expect(heap.set).toEqual([`--heap-growing-percent=${smallHeapGrowingPercent}`, `--heap-growing-percent=${heapGrowingPercent}`]);
    // Held for the rest of the run: the watch is over, a later small heap changes nothing.
    expect(heap.watching()).toBe(0);
    heap.collected(1);
    expect(heap.set).toHaveLength(2);
  });

  it('never lets the small-heap growth take a heap past twice the threshold, nor hold it below the large-heap bound', () => {
    expect(smallHeapGrowingPercent).toBeLessThanOrEqual(100);
    expect(heapGrowingPercent).toBeLessThan(smallHeapGrowingPercent);
    // Doubling from just below the threshold stays under the 256 MB the 100k runs are held to.
    expect((smallHeapBytes * (1 + smallHeapGrowingPercent / 100)) / 2 ** 20).toBeLessThan(128);
  });

  it('sets the growth factor when nothing else sizes the heap', () => {
    expect(run([], '')).toEqual([`--heap-growing-percent=${smallHeapGrowingPercent}`]);
    expect(run(['--enable-source-maps'], '--trace-warnings')).toHaveLength(1);
  });

  it("leaves a user's own heap sizing alone, from node flags or NODE_OPTIONS, in either spelling", () => {
    expect(run(['--max-old-space-size=512'], '')).toEqual([]);
    expect(run([], '--max_old_space_size=512')).toEqual([]);
    expect(run([], '--require x --max-semi-space-size=64')).toEqual([]);
    expect(run(['--heap-growing-percent=50'], '')).toEqual([]);
    const sized = limited(['--max-old-space-size=512'], '');
    expect(sized.applied).toBe(false);
    expect(sized.watching()).toBe(0);
  });

  it("hears this process's real full collections, with the heap's used bytes, until told it is done", async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const reports: number[] = [];
    const done = new Promise<void>((resolve) => {
      watchFullCollections((usedBytes) => {
        reports.push(usedBytes);
        if (reports.length === 2) resolve();
        return reports.length === 2;
      });
    });
    // Each forced collection is a full one; the observer reports it a moment after.
    while (reports.length < 2) {
      gc();
      await new Promise((resolve) => setImmediate(resolve));
    }
    await done;
    gc();
    await new Promise((resolve) => setImmediate(resolve));
    expect(reports).toHaveLength(2);
    for (const used of reports) expect(used).toBeGreaterThan(1024 * 1024);
  });
});

describe('which runs bound the heap', () => {
  it('the commands that may hold a listing or large state, and not validate, schema, version or help', () => {
    for (const command of ['plan', 'sync', 'apply', 'export', 'daemon', 'emulator', 'demo', 'audit', 'pln']) expect(holdsLiveData([command, '-f', 'x'])).toBe(true);
    for (const args of [['validate', '-f', 'x'], ['schema'], ['version'], ['help', 'sync'], ['--version'], ['-v'], ['--help'], []]) expect(holdsLiveData(args)).toBe(false);
  });
});
