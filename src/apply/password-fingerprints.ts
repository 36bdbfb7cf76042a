import type { DesiredState } from '../model/index.js';
import { noFingerprints, type PasswordFingerprints } from '../plan/index.js';
import { fingerprint } from '../secrets/index.js';
import type { PasswordState } from '../secrets/index.js';

/** Fingerprints of the declared passwords (by username) and of the last applied ones (by id). */
export function passwordFingerprints(desired: DesiredState, state: PasswordState | undefined): PasswordFingerprints {
  if (!state) return noFingerprints;
  const wanted = new Map<string, string>();
  for (const u of desired.sshUsers) if (u.password) wanted.set(u.username, fingerprint(state.key, u.password));
  return { desired: wanted, applied: state.applied };
}
