import { AmsyncError } from '../errors.js';
import type { SecretValue } from '../model/index.js';
import type { PasswordSink, PasswordState } from '../secrets/index.js';
import { fingerprint } from '../secrets/index.js';
import type { StateSaver } from './state-saver.js';

/**
 * What follows a generated password the service accepted: its copy in the password sink
 * (`tokensDir/passwords~/<username>`, 0600, atomic; or the data key `password__<username>`
 * of the kubernetesSecret), then, in the state file, its fingerprint
 * and when it was set (the next plan neither generates it again nor rotates it early).
 *
 * When the sink cannot take it, the password exists on the service only and nobody can read
 * it: the state file records it `lost`, so that the next run generates a new one and sets it
 * (an update), and the change fails here (exit 1) saying so. The value is never in the error.
 */
export function keepGeneratedPassword(sink: PasswordSink, state: PasswordState | undefined, saver: StateSaver | undefined, now: () => number = Date.now) {
  return async (username: string, id: number, password: SecretValue): Promise<void> => {
    const setAt = now();
    try {
      await sink.write(username, password);
    } catch (error) {
      state?.recordGenerated?.(id, { setAt, lost: true });
      saver?.touch();
      const why = error instanceof Error ? error.message : String(error);
      throw new AmsyncError(
        'password_sink',
        // What it means first: a result line is cut at 500 characters, and a Secret's refusal is long.
        `SSH user "${username}" (id ${id}) was given a generated password, but it could not be written to the password sink: that password is lost; the next run generates a new one and sets it (an update). ${why}`,
        { cause: error },
      );
    }
    if (state) {
      state.record(id, fingerprint(state.key, password));
      state.recordGenerated?.(id, { setAt });
      saver?.touch();
    }
  };
}
