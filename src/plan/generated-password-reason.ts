import type { ActualSshUser, DesiredSshUser } from '../model/index.js';
import type { PlanBuilder } from './plan-builder.js';
import type { GeneratedPasswordFacts, PasswordPolicy } from './policy.js';

/**
 * Why an existing user's generated password is set anew, or undefined to keep it. A generated
 * password is generated once, on create: afterwards only a rotation that is due, a password the
 * sink lost (set, then its file could not be written: nobody has it), `--rotate-passwords` or
 * `--replace` (replace-items.ts) set a new one. A user amsync never set one for (adopted, or a
 * state file that was lost) keeps its password, and the plan says so.
 */
export function generatedPasswordReason(
  item: DesiredSshUser,
  actual: ActualSshUser,
  passwords: PasswordPolicy,
  facts: GeneratedPasswordFacts | undefined,
  out: PlanBuilder<'sshUser'>,
): string | undefined {
  if (passwords.mode === 'rotate') return 'password rotation: a new one is generated';
  const record = facts?.records.get(String(actual.id));
  if (record === undefined) {
    out.ungeneratedPasswords.push(item.username);
    return undefined;
  }
  if (record.lost === true) return 'the generated password was not written to the sink: a new one is generated';
  const every = item.passwordGenerated?.rotateEveryMs;
  if (every !== undefined && facts !== undefined && facts.now - record.setAt >= every) {
    return `password rotation: set ${age(facts.now - record.setAt)} ago, rotated every ${item.passwordGenerated!.rotateEvery!}`;
  }
  if (facts?.notInSink.has(item.username) === true) out.unsunkPasswords.push(item.username);
  return undefined;
}

/** An age in the largest whole unit of the ones `rotate: {every}` is written in (`31d`, `5h`, `40s`). */
function age(ms: number): string {
  for (const [unit, size] of ageUnits) if (ms >= size) return `${Math.floor(ms / size)}${unit}`;
  return '0s';
}

const ageUnits = [
  ['d', 86_400_000],
  ['h', 3_600_000],
  ['m', 60_000],
  ['s', 1000],
] as const;
