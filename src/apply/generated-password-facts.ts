import type { ActualState, DesiredState } from '../model/index.js';
import type { GeneratedPasswordFacts } from '../plan/index.js';
import { fingerprint, Secret, TokenFileError, type PasswordState, type TokenSink } from '../secrets/index.js';

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
  tokenSink: TokenSink | undefined,
  now: number,
): Promise<GeneratedPasswordFacts | undefined> {
  const users = desired.sshUsers.filter((u) => u.ensure === 'present' && u.passwordGenerated !== undefined);
  if (users.length === 0) return undefined;
  const records = state?.generated ?? new Map();
  const notInSink = new Set<string>();
  const sink = tokenSink?.passwordSink();
  const byName = new Map(actual.sshUsers.map((a) => [a.username, a.id]));
  for (const user of users) {
    const id = user.id ?? byName.get(user.username);
    const record = id === undefined ? undefined : records.get(String(id));
    if (record === undefined || record.lost === true || state === undefined) continue;
    if (sink === undefined || !(await holdsApplied(sink, user.username, state, String(id)))) notInSink.add(user.username);
  }
  return { now, records, notInSink };
}

async function holdsApplied(sink: TokenSink, username: string, state: PasswordState, id: string): Promise<boolean> {
  let content: string | undefined;
  try {
    content = await sink.read(username);
  } catch (error) {
    if (error instanceof TokenFileError) return false;
    throw error;
  }
  if (content === undefined) return false;
  return fingerprint(state.key, new Secret(content)) === state.applied.get(id);
}
