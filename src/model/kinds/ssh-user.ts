import type { KindDeclaration } from './kind.js';

/** SSH users (`/api/sshusers`). The password is write-only: the service never returns it. */
export const sshUserKind = {
  kind: 'sshUser',
  list: 'sshUsers',
  noun: 'SSH user',
  uniqueIdentity: true,
  title: 'SSH user',
  fields: {
    username: {
      type: 'text',
      wire: 'username',
      identity: true,
      sensitive: false,
      writeOnly: false,
      updatable: true,
      compare: 'exact',
      description: 'Unique user name: the identity of the SSH user unless `id` is given.',
    },
    level: {
      type: 'text',
      wire: 'level',
      default: 'n1',
      sensitive: false,
      writeOnly: false,
      updatable: true,
      compare: 'exact',
      description: 'Permission level. `n1` is the only level the service documents; another value is sent as written, with a warning.',
    },
    password: {
      type: 'secret',
      wire: 'password',
      sensitive: true,
      writeOnly: true,
      updatable: true,
      compare: 'exact',
      description: 'Write-only password: { env: NAME }, { file: PATH }, or a literal (warned). Needed to create the user; left out, an existing password is left alone.',
    },
  },
} as const satisfies KindDeclaration;

export type SshUserKind = typeof sshUserKind;
