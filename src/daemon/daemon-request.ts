import type { ContextInputs, FleetSelection, LogStream } from '../app/index.js';
import type { Shard } from '../fleet/index.js';
import type { Settings } from '../settings/index.js';
import type { ScheduleFactory } from './schedule.js';
import type { SignalSource } from './signals.js';

/** What `amsync daemon` asks for, as its flags say: the front end's part ends here (serve.ts). */
export interface DaemonRequest {
  /** The settings the daemon starts with. */
  readonly settings: Settings;
  /** The settings as the flags, env and settings file say now (SIGHUP). */
  readSettings(): Promise<Settings>;
  /** Where the desired state is read from (-f, AMSYNC_FILE). */
  readonly source: ContextInputs['source'];
  readonly env: ContextInputs['env'];
  /** Where the logs go. */
  readonly stderr: LogStream;
  /** amsync's version, for amsync_build_info. */
  readonly version: string;
  /** `--prune`: every undeclared item is deleted, not only those amsync created. */
  readonly prune?: boolean | undefined;
  /** @default process */
  readonly signals?: SignalSource | undefined;
  /** @default node-cron */
  readonly scheduler?: ScheduleFactory | undefined;
  /** `--targets FILE`: the services a targets file lists, instead of the one the settings name. */
  readonly fleet?: FleetRequest | undefined;
}

/** The targets file of a fleet daemon, the targets it covers, and how this replica takes its part of them. */
export interface FleetRequest extends FleetSelection {
  readonly targetsFile: string;
  /** `--shard`, `--shards`: this replica's shard; undefined: every selected target. */
  readonly shard?: Shard | undefined;
  /** Targets reconciled at once at most. */
  readonly targetConcurrency: number;
}
