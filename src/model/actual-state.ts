/** An SSH user as listed by the service (normalised; unknown fields dropped). */
export interface ActualSshUser {
  readonly id: number;
  readonly username: string;
  readonly level: string;
}

/** An apikey as listed by the service. Its token is not part of the state (see secrets/). */
export interface ActualApikey {
  readonly id: number;
  readonly name: string;
  readonly superuser: boolean;
  /** Role ids, sorted and unique. */
  readonly roles: readonly number[];
}

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
