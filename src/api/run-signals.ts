/**
 * What ends a run's calls. `signal` cancels them, a request in flight included (the daemon's
 * run deadline, a lost Lease); `stop` stops them short of the wire (an interrupt): nothing
 * more is sent, and what was sent is let finish.
 */
export interface RunSignals {
  readonly signal?: AbortSignal;
  readonly stop?: AbortSignal;
}

/**
 * The signals each call of a run carries: its `stop` fires with either of the run's (a call
 * that may not go on at all may certainly not be sent). Made once per run, not per call.
 */
export function callSignals(run: RunSignals): RunSignals {
  const { signal, stop } = run;
  if (signal === undefined) return stop === undefined ? {} : { stop };
  return { signal, stop: stop === undefined ? signal : AbortSignal.any([signal, stop]) };
}
