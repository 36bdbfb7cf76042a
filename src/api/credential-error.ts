import { AmsyncError } from '../errors.js';

export type CredentialErrorCode =
  /** The service refused the integrator key (400/401/403 at the token endpoint). */
  | 'integrator_key_rejected'
  /** The integrator key file could not be read, or holds no usable key. */
  | 'integrator_key_unreadable'
  /** The token endpoint answered 200 without an access token amsync can use. */
  | 'integrator_key_bad_answer';

/**
 * The integrator key (refresh token) could not be turned into an access token. Not an
 * ApiError on purpose: a listing that meets it fails with it as is, so the user reads
 * "integrator key rejected: …" and not a listing error. Exit 1.
 */
export class CredentialError extends AmsyncError {
  declare readonly code: CredentialErrorCode;

  constructor(code: CredentialErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = 'CredentialError';
  }
}
