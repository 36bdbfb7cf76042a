import type { ActualState, DesiredState } from '../model/index.js';
import type { GeneratedPasswordFacts } from '../plan/index.js';
import { fingerprint, Secret, type PasswordSink, type PasswordState } from '../secrets/index.js';

/**
 * What the planner needs about generated passwords (plan/generated-password-reason.ts): the
 * state file's records, which sink files no longer hold the password amsync set, and `now`.
 * Undefined when the file declares none (nothing is read). A sink file is read only for a user
 * amsync set a password for, and only to compare its fingerprint; its value becomes a known
 * secret (scrubbed from every output), like every password the process holds.
 */
export async function generatedPasswordFacts(
  desired: DesiredState,
  actual: ActualState,
  state: PasswordState | undefined,
  sink: PasswordSink | undefined,
  now: number,
): Promise<GeneratedPasswordFacts | undefined> {
  const users = desired.sshUsers.filter((u) => u.ensure === 'present' && u.passwordGenerated !== undefined);
  if (users.length === 0) return undefined;
  const records = state?.generated ?? new Map();
  const notInSink = new Set<string>();
  const byName = new Map(actual.sshUsers.map((a) => [a.username, a.id]));
  // The users amsync set a password for, by username: only their copies are read (one read of a Secret).
  const set = new Map<string, string>();
  for (const user of users) {
    const id = user.id ?? byName.get(user.username);
    const record = id === undefined ? undefined : records.get(String(id));
    if (record === undefined || record.lost === true || state === undefined) continue;
    set.set(user.username, String(id));
  }
  const held = sink === undefined || set.size === 0 ? new Map<string, string>() : await sink.readAll([...set.keys()]);
  for (const [username, id] of set) {
    const content = held.get(username);
    if (content === undefined || fingerprint(state!.key, new Secret(content)) !== state!.applied.get(id)) notInSink.add(username);
  }
  return { now, records, notInSink };
}
