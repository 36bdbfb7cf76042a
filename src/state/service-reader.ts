import type { NamedRole, SecretValue } from '../model/index.js';

/** A remote SSH user as the reader needs it (the client's parsed response). */
export interface RemoteSshUser {
  readonly id: number;
  readonly username: string;
  readonly level: string;
}

/** A remote apikey; `roles` as ids or Role objects, `token` as a secret. */
export interface RemoteApikey {
  readonly id: number;
  readonly name: string;
  readonly superuser: boolean;
  readonly roles: readonly (number | { readonly id: number })[];
  readonly token?: SecretValue;
}

export interface ListApikeysOptions {
  /** @default true */
  readonly tokens?: boolean;
}

/**
 * What reading the actual state needs from the service: complete listings. Each call either
 * returns every item of its kind or throws (a partial listing is never returned).
 */
export interface ServiceReader {
  listSshUsers(): Promise<readonly RemoteSshUser[]>;
  /**
   * `tokens: false`: the caller has no use for the keys' tokens, which may then be left out
   * (at 100k keys they are ~17 MB of strings held to the end of the listing).
   */
  listApikeys(options?: ListApikeysOptions): Promise<readonly RemoteApikey[]>;
  /**
   * Every role (to resolve role names the file uses); null when the service has no roles
   * listing. Absent: the service cannot list roles at all.
   */
  listRoles?(): Promise<readonly NamedRole[] | null>;
}
