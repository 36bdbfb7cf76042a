import { relative } from 'node:path';
import { Document, isMap, isSeq } from 'yaml';
import type { DesiredState } from '../model/desired-state.js';
import type { SecretRef } from '../model/secret-value.js';

export interface StringifyDesiredOptions {
  /**
   * Folder the file will be written in: `{file: PATH}` references are written relative to it.
   * Without it they stay absolute.
   */
  readonly baseDir?: string;
  /** Adds `# yaml-language-server: $schema=<this>` as the first line. */
  readonly schemaUrl?: string;
  /**
   * Leaves out values equal to the file's defaults (`level: n1`, `superuser: false`,
   * `roles: []`): an export of 100k items stays well under the file size limit.
   * @default false
   */
  readonly omitDefaults?: boolean;
}

/**
 * DesiredState -> desired-state YAML that parses back to the same state. Passwords are
 * written as their references; a literal password is never written (it is left out, which
 * means "leave the existing password alone").
 */
export function stringifyDesired(state: DesiredState, options: StringifyDesiredOptions = {}): string {
  const plain: Record<string, unknown> = {
    sshUsers: state.sshUsers.map((u) => ({
      username: u.username,
      ...(u.id !== undefined ? { id: u.id } : {}),
      ...(options.omitDefaults && u.level === 'n1' ? {} : { level: u.level }),
      ...(u.passwordRef && u.passwordRef.kind !== 'literal' ? { password: writtenRef(u.passwordRef, options.baseDir) } : {}),
      ...(u.ensure === 'absent' ? { ensure: 'absent' } : {}),
    })),
    apikeys: state.apikeys.map((k) => ({
      name: k.name,
      ...(k.id !== undefined ? { id: k.id } : {}),
      ...(options.omitDefaults && !k.superuser ? {} : { superuser: k.superuser }),
      ...(options.omitDefaults && k.roles.length === 0 && (k.roleNames?.length ?? 0) === 0 ? {} : { roles: [...(k.roleNames ?? []).map((r) => r.name), ...k.roles] }),
      ...(k.ensure === 'absent' ? { ensure: 'absent' } : {}),
    })),
  };
  if (state.prune.sshUsers || state.prune.apikeys) plain.prune = { sshUsers: state.prune.sshUsers, apikeys: state.prune.apikeys };
  if (state.protect.sshUsers.length > 0 || state.protect.apikeys.length > 0) {
    plain.protect = { sshUsers: [...state.protect.sshUsers], apikeys: [...state.protect.apikeys] };
  }
  const doc = new Document(plain);
  // Short collections read best inline: roles: [3, 7], password: { env: X }, globs.
  for (const kind of ['sshUsers', 'apikeys']) {
    const list = doc.get(kind, true);
    if (!isSeq(list)) continue;
    for (const item of list.items) {
      if (!isMap(item)) continue;
      for (const pair of item.items) {
        if (isSeq(pair.value) || isMap(pair.value)) pair.value.flow = true;
      }
    }
    const globs = doc.getIn(['protect', kind], true);
    if (isSeq(globs)) globs.flow = true;
  }
  if (options.schemaUrl !== undefined) doc.commentBefore = ` yaml-language-server: $schema=${options.schemaUrl}`;
  return doc.toString({ lineWidth: 0 });
}

function writtenRef(ref: Exclude<SecretRef, { kind: 'literal' }>, baseDir: string | undefined): Record<string, string> {
  if (ref.kind === 'env') return { env: ref.name };
  return { file: baseDir === undefined ? ref.path : relative(baseDir, ref.path).split('\\').join('/') };
}
