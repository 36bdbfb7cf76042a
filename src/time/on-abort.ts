/** The callbacks waiting on each signal, behind the one listener each signal is given. */
const waiting = new WeakMap<AbortSignal, Set<() => void>>();

/**
 * Calls `callback` once `signal` aborts (not when it has already: the caller checks
 * `signal.aborted` first); returns the unsubscribe. Every callback of one signal shares one
 * listener: an interrupt's signal has as many waiting calls as the queue is deep, and Node
 * warns of a leak past ten listeners on one AbortSignal. Callbacks run in the order they came.
 */
export function onAbort(signal: AbortSignal, callback: () => void): () => void {
  let callbacks = waiting.get(signal);
  if (callbacks === undefined) {
    const fresh = new Set<() => void>();
    callbacks = fresh;
    waiting.set(signal, fresh);
    signal.addEventListener(
      'abort',
      () => {
        waiting.delete(signal);
        for (const call of fresh) call();
        fresh.clear();
      },
      { once: true },
    );
  }
  const own = callbacks;
  own.add(callback);
  return () => {
    own.delete(callback);
  };
}
