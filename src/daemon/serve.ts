import { UsageError } from '../errors.js';
import { DaemonError } from './daemon-error.js';
import type { StopResult } from './daemon-lifecycle.js';
import type { DaemonRequest } from './daemon-request.js';
import { serveOneService } from './serve-one-service.js';
import { serveTargetsFile } from './serve-targets-file.js';

/**
 * `amsync daemon`: the daemon of the one service the settings name, or of the targets of a
 * targets file, until it stops. Resolves with how it stopped (the command turns it into an
 * exit code); throws what kept it from starting: a wrong daemon option is a UsageError.
 */
export async function serveDaemon(request: DaemonRequest): Promise<StopResult> {
  // Loaded here, not at start: no other command needs prom-client.
  const { createMetrics } = await import('../obs/metrics.js');
  const metrics = createMetrics({ version: request.version, processMetrics: true });
  try {
    return request.fleet === undefined ? await serveOneService(request, metrics) : await serveTargetsFile(request, request.fleet, metrics);
  } catch (error) {
    // The settings rules check these values already; anything left is still a bad option.
    if (error instanceof DaemonError && error.code === 'daemon_options') throw new UsageError(error.message, 'bad_flag_value', { cause: error });
    throw error;
  }
}
