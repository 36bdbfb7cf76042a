import type { Logger } from '../obs/index.js';

/** Lets buffered log lines out before the entry exits; bounded, so a stuck transport cannot hold the exit. */
export function flushLogger(logger: Logger): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, 1000);
    try {
      logger.flush(() => {
        clearTimeout(timer);
        resolve();
      });
    } catch {
      clearTimeout(timer);
      resolve();
    }
  });
}
