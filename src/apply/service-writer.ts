import type { SecretValue } from '../model/index.js';
import type { RemoteApikey, RemoteSshUser, ServiceReader } from '../state/index.js';

/** The outcome of one write: the item's id when the service answered 200, or accepted (202). */
export interface WriteOutcome {
  readonly id?: number;
  /** 202: the service will apply the write in the background; the next listing confirms it. */
  readonly accepted: boolean;
  /** A created apikey's token. */
  readonly token?: SecretValue;
}

export interface SshUserBody {
  readonly username?: string;
  readonly level?: string;
  readonly password?: SecretValue;
}

export interface ApikeyBody {
  readonly name?: string;
  readonly superuser?: boolean;
  readonly roles?: readonly number[];
}

/**
 * The writes apply needs, plus the listings drift handling re-reads. Errors carry the
 * client's stable codes: `conflict` (409), `not_found` (404), `unknown_outcome` (a POST whose
 * response was lost), and others that simply fail the item.
 */
export interface ServiceWriter extends ServiceReader {
  /** One item as it is now, or undefined when the service answers 404 (verified deletes). */
  fetchSshUser(id: number): Promise<RemoteSshUser | undefined>;
  fetchApikey(id: number): Promise<RemoteApikey | undefined>;
  /**
   * The token's scopes (`GET /api/user/info`); null where the service does not answer it.
   * Absent: the service cannot say.
   */
  userInfo?(): Promise<{ readonly scopes: readonly { readonly name: string; readonly read: boolean; readonly write: boolean }[] } | null>;
  createSshUser(body: Required<SshUserBody>): Promise<WriteOutcome>;
  updateSshUser(id: number, body: SshUserBody): Promise<WriteOutcome>;
  deleteSshUser(id: number): Promise<void>;
  createApikey(body: Required<ApikeyBody>): Promise<WriteOutcome>;
  updateApikey(id: number, body: ApikeyBody): Promise<WriteOutcome>;
  deleteApikey(id: number): Promise<void>;
}

/** Where applied passwords are recorded (the state file's fingerprints). */
export interface PasswordRecorder {
  record(id: number, password: SecretValue): void;
  forget(id: number): void;
}
