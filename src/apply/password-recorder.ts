import type { SecretValue } from '../model/index.js';

/** Where applied passwords are recorded (the state file's fingerprints). */
export interface PasswordRecorder {
  record(id: number, password: SecretValue): void;
  forget(id: number): void;
}
