import { createTask, validate, type Logger as CronLogger } from 'node-cron';
import type { Logger } from '../obs/index.js';
import { DaemonError } from './daemon-error.js';

export interface Schedule {
  stop(): Promise<void>;
}

/** Calls `fire` at each time the cron expression matches. Throws DaemonError on a bad expression. */
export type ScheduleFactory = (expression: string, fire: () => void, logger: Logger) => Schedule;

/** Checks a cron expression: five fields, or six with seconds first. Throws DaemonError `daemon_options`. */
export function checkSchedule(expression: string): void {
  const fields = expression.trim().split(/\s+/).length;
  if ((fields !== 5 && fields !== 6) || !validate(expression)) {
    throw new DaemonError(
      'daemon_options',
      `Expected \`schedule\` to be a cron expression of five fields (minute hour day month weekday) or six (seconds first), got '${expression}'`,
    );
  }
}

/**
 * node-cron 4 behind a small interface (tests pass a fake). The task only triggers: the
 * single-flight loop decides whether a run starts now or joins the next, so node-cron's own
 * overlap handling is not needed, and its warnings go to our logger instead of the console.
 */
export const cronSchedule: ScheduleFactory = (expression, fire, logger) => {
  checkSchedule(expression);
  const cronLogger: CronLogger = {
    info: (message) => logger.debug({ component: 'cron' }, message),
    warn: (message) => logger.debug({ component: 'cron' }, message),
    error: (message) => logger.warn({ component: 'cron' }, String(message)),
    debug: (message) => logger.trace({ component: 'cron' }, String(message)),
  };
  const task = createTask(expression, () => fire(), { name: 'amsync-sync', logger: cronLogger, suppressMissedWarning: true });
  void task.start();
  return {
    stop: async () => {
      await task.destroy();
    },
  };
};
