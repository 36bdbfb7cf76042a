/**
 * Slots for work that runs at most `size` at a time (`--target-concurrency`). A holder can give
 * its slot back while it waits for something else and take one again (a saved fleet plan's
 * targets wait for each other's checks without holding slots others need to get there).
 */
export class Semaphore {
  readonly #size: number;
  #used = 0;
  readonly #waiting: (() => void)[] = [];

  constructor(size: number) {
    if (!Number.isInteger(size) || size < 1) throw new RangeError(`Expected \`size\` to be an integer from 1 upwards, got ${size}`);
    this.#size = size;
  }

  /** Slots in use. */
  get used(): number {
    return this.#used;
  }

  acquire(): Promise<void> {
    if (this.#used < this.#size) {
      this.#used += 1;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  release(): void {
    const next = this.#waiting.shift();
    // The slot passes straight to the next in line: `used` stays the same.
    if (next) next();
    else this.#used -= 1;
  }

  async with<T>(work: () => Promise<T>): Promise<T> {
    await this.acquire();
    try {
      return await work();
    } finally {
      this.release();
    }
  }
}

/**
 * Runs `work` for every item, at most `concurrency` at once, started in order; resolves with
 * the results in the items' order. `inOrder` hears of each result as soon as it and every one
 * before it are known, so output streams in a stable order. `work` must not throw: each
 * target's failure is its own outcome, never the fleet's. `work` may give its slot back while
 * it waits (`slots.release()`) if it takes one again (`slots.acquire()`) before it returns.
 */
export async function runPool<T, R>(
  items: readonly T[],
  concurrency: number | Semaphore,
  work: (item: T, index: number, slots: Semaphore) => Promise<R>,
  inOrder?: (result: R, index: number) => void,
): Promise<R[]> {
  const slots = typeof concurrency === 'number' ? new Semaphore(concurrency) : concurrency;
  const results: R[] = new Array<R>(items.length);
  const done: boolean[] = new Array<boolean>(items.length).fill(false);
  let next = 0;
  const flush = () => {
    while (next < items.length && done[next]) {
      inOrder?.(results[next]!, next);
      next += 1;
    }
  };
  await Promise.all(
    items.map(async (item, index) => {
      await slots.acquire();
      try {
        results[index] = await work(item, index, slots);
      } finally {
        slots.release();
      }
      done[index] = true;
      flush();
    }),
  );
  return results;
}
