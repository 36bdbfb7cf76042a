import { afterAll, vi } from 'vitest';

/**
 * Test files share their worker process and its module graph (vitest.config.ts: isolate:
 * false): what one file leaves behind, the files after it in that worker inherit.
 *
 * Known secrets are process-wide by design (src/secrets/known-secrets.ts): a value registered
 * once is removed from all output from then on. A file that registers values no credential
 * would be — ordinary words ('other', 'null'), generated strings (fast-check) — calls this at
 * its top: once the file is done, the module graph is dropped, so the next file loads amsync
 * afresh with no known secret, as it would in a process of its own.
 */
export function forgetKnownSecretsAfterThisFile(): void {
  afterAll(() => {
    vi.resetModules();
  });
}
