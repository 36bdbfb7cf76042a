import type { ActualSshUser, DesiredSshUser, FieldChange } from '../model/index.js';
import { SENSITIVE } from '../model/index.js';
import type { KindSpec } from './plan-kind.js';
import type { PasswordFingerprints, PasswordPolicy } from './policy.js';
import type { PlanBuilder } from './plan-builder.js';

/**
 * SSH users. The password is write-only: the service never returns it, so whether it must be
 * sent is decided from fingerprints (mode `state`), always (`rotate`), or on create only.
 */
export function sshUserSpec(passwords: PasswordPolicy, fingerprints: PasswordFingerprints, out: PlanBuilder): KindSpec<DesiredSshUser, ActualSshUser> {
  return {
    kind: 'sshUser',
    noun: 'SSH user',
    uniqueKeys: true,
    keyOf: (a) => a.username,
    desiredKeyOf: (d) => d.username,
    createFields(item) {
      if (!item.password) {
        return {
          problem: {
            key: item.username,
            code: 'missing_password',
            source: item.source,
            message: `SSH user "${item.username}" does not exist yet and has no password to create it with; add \`password:\``,
          },
        };
      }
      return {
        fields: {
          username: { before: null, after: item.username },
          level: { before: null, after: item.level },
          password: { before: null, after: SENSITIVE },
        },
      };
    },
    updateFields(item, actual) {
      const fields: Record<string, FieldChange> = {};
      let reason: string | undefined;
      if (actual.username !== item.username) {
        fields.username = { before: actual.username, after: item.username };
        reason = 'rename by id';
      }
      if (actual.level !== item.level) fields.level = { before: actual.level, after: item.level };
      if (item.password) {
        const why = passwordReason(item, actual, passwords, fingerprints, out);
        if (why) {
          fields.password = { before: SENSITIVE, after: SENSITIVE };
          reason = reason ? `${reason}; ${why}` : why;
        }
      }
      return { fields, reason };
    },
    deleteFields: (a) => ({
      username: { before: a.username, after: null },
      level: { before: a.level, after: null },
    }),
  };
}

function passwordReason(
  item: DesiredSshUser,
  actual: ActualSshUser,
  passwords: PasswordPolicy,
  fingerprints: PasswordFingerprints,
  out: PlanBuilder,
): string | undefined {
  if (passwords.mode === 'rotate') return 'password rotation';
  if (passwords.mode === 'create-only') {
    out.uncomparedPasswords += 1;
    return undefined;
  }
  const applied = fingerprints.applied.get(String(actual.id));
  if (applied === undefined) {
    out.untrackedPasswords += 1;
    return undefined;
  }
  return applied === fingerprints.desired.get(item.username) ? undefined : 'password changed';
}
