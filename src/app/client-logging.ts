import type { AmClient } from '../api/index.js';
import type { Logger } from '../obs/index.js';

/**
 * One debug line per attempt, a retried one included (it says how long until the next, a
 * Retry-After pause too, and `rate` shows the limiter slowing down): a retry that works is not
 * news, and one that does not ends in the call's error, which whoever called reports once.
 * Throttling is counted in the daemon's metrics. A token re-read is info: it changes the run.
 */
export function attachClientLogging(client: AmClient, logger: Logger): void {
  const log = logger.child({ component: 'client' });
  client.events.on('request', (e) => {
    const fields = { method: e.method, route: e.route, status: e.status, error: e.error, durationMs: Math.round(e.durationMs), attempt: e.attempt, rate: e.rate };
    if (e.retryDelayMs === undefined) log.debug(fields, 'request');
    else log.debug({ ...fields, retryInMs: Math.round(e.retryDelayMs) }, 'request failed; retrying');
  });

  client.events.on('token', (e) => log.info({ changed: e.changed }, 'token file re-read after 401'));
  attachCredentialLogging(client, log);
}

/**
 * The integrator key's life in the log: renewals at debug, the rest once per change of
 * state, so a write-back that keeps failing is one clear line, not one per renewal.
 */
function attachCredentialLogging(client: AmClient, log: Logger): void {
  let writeBackFailing: string | undefined;
  client.events.on('credential', (e) => {
    switch (e.action) {
      case 'exchanged':
        log.info({ expiresInSeconds: e.expiresInSeconds }, 'logged in with the integrator key');
        return;
      case 'renewed':
        log.debug({ expiresInSeconds: e.expiresInSeconds }, 'access token renewed');
        return;
      case 'rotated':
        if (e.persisted && writeBackFailing !== undefined) {
          writeBackFailing = undefined;
          log.info('the rotated integrator key is written back to its file again');
        }
        // Not kept (a one-shot run): the run's one error line says it.
        if (!e.persisted && e.firstTime === true && e.kept === true) {
          log.warn('the service rotated the integrator key; it came from AMSYNC_REFRESH_TOKEN, so a restart would use the old one: use AMSYNC_REFRESH_TOKEN_FILE');
        }
        return;
      case 'write_back_failed':
        if (e.kept !== true) return;
        if (writeBackFailing !== e.error) {
          log.error({ file: e.file, error: e.error }, `cannot write the rotated integrator key back to ${e.file} (${e.error}); amsync goes on with it, but a restart would use the old key, which stops working`);
        }
        writeBackFailing = e.error;
        return;
      case 'renewal_deferred':
        log.warn({ error: e.error }, 'could not renew the access token; using the current one until it is renewed');
        return;
      case 'rejected':
        return; // the error itself says it, where it surfaces
    }
  });
}
