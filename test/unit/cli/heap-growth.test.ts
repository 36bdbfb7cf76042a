import { describe, expect, it } from 'vitest';
import { holdsLiveData } from '../../../src/cli/commands.js';
import { heapGrowingPercent, limitHeapGrowth } from '../../../src/cli/heap-growth.js';

describe("the CLI bounds its heap's growth by the live data, unless the user sized the heap", () => {
  const run = (execArgv: string[], nodeOptions: string): string[] => {
    const set: string[] = [];
    limitHeapGrowth(execArgv, nodeOptions, (flags) => set.push(flags));
    return set;
  };

  it('sets the growth factor when nothing else sizes the heap', () => {
    expect(run([], '')).toEqual([`--heap-growing-percent=${heapGrowingPercent}`]);
    expect(run(['--enable-source-maps'], '--trace-warnings')).toHaveLength(1);
  });

  it("leaves a user's own heap sizing alone, from node flags or NODE_OPTIONS, in either spelling", () => {
    expect(run(['--max-old-space-size=512'], '')).toEqual([]);
    expect(run([], '--max_old_space_size=512')).toEqual([]);
    expect(run([], '--require x --max-semi-space-size=64')).toEqual([]);
    expect(run(['--heap-growing-percent=50'], '')).toEqual([]);
  });
});

describe('which runs bound the heap', () => {
  it('the commands that may hold a listing or large state, and not validate, schema, version or help', () => {
    for (const command of ['plan', 'sync', 'apply', 'export', 'daemon', 'emulator', 'demo', 'audit', 'pln']) expect(holdsLiveData([command, '-f', 'x'])).toBe(true);
    for (const args of [['validate', '-f', 'x'], ['schema'], ['version'], ['help', 'sync'], ['--version'], ['-v'], ['--help'], []]) expect(holdsLiveData(args)).toBe(false);
  });
});
