import { InvalidInputError, UsageError } from '../errors.js';
import type { ServiceContext } from './service-context.js';

/** How long a command's exit waits for queued notifications. */
export const notifyGraceMs = 5_000;

/** A run that failed (not a bad command line or file, which nothing was sent for) is a `failure` event. */
export function notifyFailure(context: Pick<ServiceContext, 'notify'>, error: unknown): void {
  if (error instanceof UsageError || error instanceof InvalidInputError) return;
  context.notify({ event: 'failure', message: error instanceof Error ? error.message : String(error) });
}
