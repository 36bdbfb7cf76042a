import type { ActualSshUser, DesiredSshUser } from '../model/index.js';
import { GENERATED, SENSITIVE, sshUserKind } from '../model/index.js';
import { generatedPasswordReason } from './generated-password-reason.js';
import { createFieldChanges, deleteFieldChanges, updateFieldChanges } from './field-changes.js';
import type { KindSpec } from './plan-kind.js';
import type { PasswordFingerprints, PasswordPolicy } from './policy.js';
import type { PlanBuilder } from './plan-builder.js';

/**
 * SSH users (model/kinds/ssh-user.ts). The password is write-only: the service never returns it, so whether it must be
 * sent is decided from fingerprints (mode `state`), always (`rotate`), or on create only.
 */
export function sshUserSpec(passwords: PasswordPolicy, fingerprints: PasswordFingerprints, out: PlanBuilder<'sshUser'>): KindSpec<'sshUser', DesiredSshUser, ActualSshUser> {
  return {
    kind: 'sshUser',
    noun: sshUserKind.noun,
    uniqueKeys: sshUserKind.uniqueIdentity,
    keyOf: (a) => a.username,
    desiredKeyOf: (d) => d.username,
    createFields(item) {
      // Generated when the create is written; the plan (and a saved plan) only says so.
      if (item.passwordGenerated) return { fields: { ...createFieldChanges(sshUserKind, item), password: { before: null, after: GENERATED } } };
      // `--secrets optional`: planned as it will be applied (with the secret), shown as not available.
      if (!item.password && item.passwordUnavailable !== undefined) {
        out.unavailablePasswords.push(item.username);
        return { fields: { ...createFieldChanges(sshUserKind, item), password: { before: null, after: SENSITIVE } } };
      }
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
      return { fields: createFieldChanges(sshUserKind, item) };
    },
    updateFields(item, actual) {
      const changed = updateFieldChanges(sshUserKind, item, actual);
      const fields = { ...changed.fields };
      // A rename by `renamedFrom:` is shown as such (Change.renamedFrom), not as one by id.
      let reason: string | undefined = changed.renamed && item.id !== undefined ? 'rename by id' : undefined;
      // The password is write-only: never listed, so compared through fingerprints, not values.
      // An ignored one is sent on create only: never compared, rotated or counted as untracked.
      if (item.passwordGenerated && item.ignore?.includes('password') !== true) {
        const why = generatedPasswordReason(item, actual, passwords, fingerprints.generated, out);
        if (why) {
          fields.password = { before: SENSITIVE, after: GENERATED };
          reason = reason ? `${reason}; ${why}` : why;
        }
      } else if ((item.password || item.passwordUnavailable !== undefined) && item.ignore?.includes('password') !== true) {
        const why = passwordReason(item, actual, passwords, fingerprints, out);
        if (why) {
          fields.password = { before: SENSITIVE, after: SENSITIVE };
          reason = reason ? `${reason}; ${why}` : why;
        }
      }
      return { fields, reason };
    },
    deleteFields: (a) => deleteFieldChanges(sshUserKind, a),
  };
}

function passwordReason(
  item: DesiredSshUser,
  actual: ActualSshUser,
  passwords: PasswordPolicy,
  fingerprints: PasswordFingerprints,
  out: PlanBuilder<'sshUser'>,
): string | undefined {
  const unavailable = !item.password;
  if (passwords.mode === 'rotate') {
    if (unavailable) out.unavailablePasswords.push(item.username);
    return 'password rotation';
  }
  if (passwords.mode === 'create-only') {
    out.uncomparedPasswords += 1;
    return undefined;
  }
  // Without the password there is nothing to fingerprint: drift is not checked (and said so).
  if (unavailable) {
    out.uncheckedPasswords.push(item.username);
    return undefined;
  }
  const applied = fingerprints.applied.get(String(actual.id));
  if (applied === undefined) {
    out.untrackedPasswords += 1;
    return undefined;
  }
  return applied === fingerprints.desired.get(item.username) ? undefined : 'password changed';
}
