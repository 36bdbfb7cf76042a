import { InterruptedError } from '../errors.js';
import type { ServiceContext } from './app-context.js';

/** How the command's body ended: nothing thrown, or this error (already the interrupt when it was one). */
export type BodyEnd = { readonly error: unknown } | undefined;

/**
 * The end of a one-shot command after its body (sync, apply): the context's finish (a key
 * renewal in flight, the notifier, the client), then the body's error if it had one.
 *
 * After an interrupt the exit stays 130 / 143 with its closing line: a key the service rotated
 * and amsync could not keep (`integrator_key_not_persisted`) is added to that line, never put in
 * its place. And the end waits for a renewal only as long as one request on the wire can take
 * (the client's timeout): after the interrupt no renewal starts and none is retried, so a
 * longer wait serves nobody (Ctrl-C would hang for up to a minute).
 */
export async function finishRun(context: Pick<ServiceContext, 'finish' | 'settings'>, notifyGraceMs: number, ended: BodyEnd, interrupted: boolean): Promise<void> {
  try {
    await context.finish(notifyGraceMs, interrupted ? context.settings.http.timeoutMs : undefined);
  } catch (lost) {
    if (!(ended?.error instanceof InterruptedError)) throw lost;
    const line = lost instanceof Error ? lost.message : String(lost);
    throw new InterruptedError(ended.error.signal, `${ended.error.message}; and ${line}`);
  }
  if (ended !== undefined) throw ended.error;
}
