import { AmsyncError } from '../errors.js';

export type DaemonErrorCode =
  /** A daemon option is out of range or malformed (listen address, schedule, durations). */
  | 'daemon_options'
  /** The HTTP endpoint could not bind its address. */
  | 'daemon_listen'
  /** `amsync ctl`: no daemon answers on the control socket. */
  | 'ctl_unreachable';

/** The daemon could not start. Exit 1, or 64 when the command maps a bad flag to a UsageError. */
export class DaemonError extends AmsyncError {
  constructor(code: DaemonErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = 'DaemonError';
  }
}
