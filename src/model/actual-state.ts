import type { ActualOf, ApikeyKind, SshUserKind } from './kinds/index.js';

/** An SSH user as listed by the service (normalised; unknown fields dropped): its id and listed fields (kinds/ssh-user.ts). */
export type ActualSshUser = ActualOf<SshUserKind>;

/** An apikey as listed by the service (kinds/apikey.ts); roles sorted and unique. Its token is not part of the state (see secrets/). */
export type ActualApikey = ActualOf<ApikeyKind>;

/** A role of the service, as its roles listing names it (used to resolve and show role names). */
export interface NamedRole {
  readonly id: number;
  readonly name: string;
}

/** The complete listing of both kinds. A partial listing is never represented: it is an error. */
export interface ActualState {
  readonly sshUsers: readonly ActualSshUser[];
  readonly apikeys: readonly ActualApikey[];
}
