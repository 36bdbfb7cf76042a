export type DaemonSignal = 'SIGTERM' | 'SIGINT' | 'SIGHUP';

/** Where signals come from: `process`, or an EventEmitter in tests. */
export interface SignalSource {
  on(signal: DaemonSignal, listener: (signal: NodeJS.Signals) => void): unknown;
  off(signal: DaemonSignal, listener: (signal: NodeJS.Signals) => void): unknown;
}

export interface SignalHandlers {
  /** SIGTERM, SIGINT. */
  stop(signal: 'SIGTERM' | 'SIGINT'): void;
  /** SIGHUP. */
  reload(): void;
}

/** Subscribes; returns the unsubscribe. */
export function onSignals(source: SignalSource, handlers: SignalHandlers): () => void {
  const stop = (signal: NodeJS.Signals) => handlers.stop(signal === 'SIGINT' ? 'SIGINT' : 'SIGTERM');
  const reload = () => handlers.reload();
  source.on('SIGTERM', stop);
  source.on('SIGINT', stop);
  source.on('SIGHUP', reload);
  return () => {
    source.off('SIGTERM', stop);
    source.off('SIGINT', stop);
    source.off('SIGHUP', reload);
  };
}
