import { AmsyncError } from '../errors.js';
import type { FieldError } from './types.js';

/** Stable codes of the emulator's own errors; callers branch on these, never on messages. */
export type EmulatorErrorCode =
  | 'emulator_options'
  | 'emulator_seed'
  | 'emulator_faults'
  | 'emulator_data_file'
  | 'emulator_roles_file'
  | 'emulator_listen'
  | 'emulator_id_space';

/** An error of the emulator itself (bad options, bad seed, unreadable data file, port in use). */
export class EmulatorError extends AmsyncError {
  declare readonly code: EmulatorErrorCode;

  constructor(code: EmulatorErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = 'EmulatorError';
  }
}

/** A seed the API's rules refuse (duplicate username, unknown role, bad level); nothing was added. */
export class EmulatorSeedError extends EmulatorError {
  readonly errors: FieldError[];

  constructor(errors: FieldError[]) {
    super('emulator_seed', `Invalid seed: ${errors.map((e) => `${e.field}: ${e.msg}`).join('; ')}`);
    this.name = 'EmulatorSeedError';
    this.errors = errors;
  }
}
