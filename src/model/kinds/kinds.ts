import { apikeyKind } from './apikey.js';
import { sshUserKind } from './ssh-user.js';

/** Every kind, by its plan name, in the order plans and files list them. */
export const kinds = { sshUser: sshUserKind, apikey: apikeyKind } as const;

export type KindOf<N extends keyof typeof kinds> = (typeof kinds)[N];
