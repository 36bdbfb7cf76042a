import { AmsyncError } from '../errors.js';

export type CredentialErrorCode =
  /** The service refused the integrator key (400/401/403 at the token endpoint). */
  | 'integrator_key_rejected'
  /** The integrator key file could not be read, or holds no usable key. */
  | 'integrator_key_unreadable'
  /** The token endpoint answered 200 without an access token amsync can use. */
  | 'integrator_key_bad_answer'
  /**
   * The key file's folder takes no new file, so a key the service rotates could not be written
   * back (found at start, before anything is sent).
   */
  | 'integrator_key_not_writable'
  /** The service rotated the key and the new one could not be kept: the key in use is lost when the run ends. */
  | 'integrator_key_not_persisted'
  /** The service answered 401 to the bearer token, and no other token was at hand or it was refused too. */
  | 'token_rejected'
  /** No token that can be sent: none given, the token file unreadable, or characters a header cannot hold. */
  | 'token_unusable';

/** The request a credential failure stopped, when one did. */
export interface CredentialRequest {
  readonly method: string;
  readonly path: string;
  readonly route: string;
  /** The service's answer (401), when it gave one. */
  readonly status?: number;
  /** Attempts made, the one with a second token included. */
  readonly attempts: number;
}

/**
 * A credential amsync cannot log in with: an access token or token file the service refused or
 * that cannot be sent, an integrator key that could not be turned into an access token or kept.
 * Not an ApiError on purpose: a listing that meets it fails with it as is, so the user reads
 * its code and message (`token_rejected`: "token rejected (401): …") and not a listing error.
 * Exit 1.
 */
export class CredentialError extends AmsyncError {
  declare readonly code: CredentialErrorCode;
  readonly method: string | undefined;
  readonly path: string | undefined;
  readonly route: string | undefined;
  readonly status: number | undefined;
  readonly attempts: number | undefined;

  constructor(code: CredentialErrorCode, message: string, options?: { cause?: unknown; request?: CredentialRequest }) {
    super(code, message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'CredentialError';
    this.method = options?.request?.method;
    this.path = options?.request?.path;
    this.route = options?.request?.route;
    this.status = options?.request?.status;
    this.attempts = options?.request?.attempts;
  }
}
