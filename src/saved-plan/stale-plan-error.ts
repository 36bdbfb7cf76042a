import { SafetyError } from '../errors.js';
import { staleMessage, type Staleness } from './render-stale.js';

/**
 * A saved plan that no longer fits the world: the desired file or the service changed since
 * it was made. Exit 3, nothing written. Carries what changed, for the step summary and report.
 */
export class StalePlanError extends SafetyError {
  readonly staleness: Staleness;
  readonly planFile: string;

  constructor(planFile: string, staleness: Staleness) {
    super('stale_plan', staleMessage(planFile, staleness));
    this.name = 'StalePlanError';
    this.planFile = planFile;
    this.staleness = staleness;
  }
}
