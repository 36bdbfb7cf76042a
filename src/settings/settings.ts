import type { Secret } from '../secrets/index.js';

export const logLevels = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevel = (typeof logLevels)[number];

export const daemonModes = ['apply', 'observe'] as const;
export type DaemonMode = (typeof daemonModes)[number];

import type { NotifyEventName } from '../model/index.js';


export const webhookFormats = ['json', 'slack'] as const;
export type WebhookFormat = (typeof webhookFormats)[number];

export const syncWindowKinds = ['allow', 'deny'] as const;

/**
 * One of `daemon.windows`, like Argo CD's sync windows: from each time `schedule` fires, for
 * `duration`, writes are denied (`deny`) or allowed (`allow`: when any allow window exists,
 * writes happen only inside one). Outside them the daemon observes only.
 */
export interface SyncWindowSetting {
  readonly kind: (typeof syncWindowKinds)[number];
  /** Five cron fields (minute hour day month weekday), in `timezone`. */
  readonly schedule: string;
  /** `2h`, `30m`, `90s`, `1d`, `1h30m`; at most 7 days. */
  readonly duration: string;
  /** An IANA time zone (`Europe/Berlin`). @default 'UTC' */
  readonly timezone?: string;
}

/** One webhook of `notify.webhooks`. Its HMAC key is named by reference, never written in a file. */
export interface WebhookSetting {
  /** Where notifications are POSTed. Plain http only to loopback unless allowInsecureHttp. */
  readonly url: string;
  /** Environment variable holding the HMAC-SHA256 key the body is signed with. */
  readonly secretEnv?: string;
  /** File holding the HMAC key (one trailing newline ignored). Not together with secretEnv. */
  readonly secretFile?: string;
  /** `json`: amsync's payload, signed; `slack`: `{text, blocks}` for a Slack incoming webhook. @default 'json' */
  readonly format?: WebhookFormat;
  /** Only these events; unset = every event. */
  readonly events?: readonly NotifyEventName[];
}

/**
 * Runtime settings, after layering: built-in defaults < `--settings FILE` < `AMSYNC_*`
 * environment < flags. Every key is documented in config/default.yaml.
 */
export interface Settings {
  /** Base URL of the service. AMSYNC_URL / --url. No default: without one, use `amsync demo`. */
  readonly url?: string;
  /** File holding the bearer token, re-read on 401. AMSYNC_TOKEN_FILE / --token-file. */
  readonly tokenFile?: string;
  /** The bearer token, from AMSYNC_TOKEN only: never a flag or a settings-file key. */
  readonly token?: Secret;
  /**
   * File holding the integrator key (a refresh token): exchanged for access tokens, renewed
   * before they expire; a rotated key is written back to it. AMSYNC_REFRESH_TOKEN_FILE /
   * --refresh-token-file. Not together with a token.
   */
  readonly refreshTokenFile?: string;
  /**
   * `NAMESPACE/NAME[/KEY]` of a Kubernetes Secret holding the integrator key (data key KEY,
   * default integrator-key), read and written back as refreshTokenFile is. AMSYNC_INTEGRATOR_KEY_SECRET.
   */
  readonly integratorKeySecret?: string;
  /** The integrator key, from AMSYNC_REFRESH_TOKEN only. */
  readonly refreshToken?: Secret;
  /** Password fingerprints of the last apply. @default '.amsync/state.json' */
  readonly stateFile: string;
  /** Where new apikey tokens are written (0600), one file per key name; unset = not kept. */
  readonly tokensDir?: string;
  /**
   * `NAMESPACE/NAME` of a Kubernetes Secret the apikey tokens are written to, one data key per
   * key, instead of tokensDir (not together with it). AMSYNC_KUBERNETES_SECRET / --kubernetes-secret.
   */
  readonly kubernetesSecret?: string;
  readonly http: {
    /** Per request. @default 30000 */
    readonly timeoutMs: number;
    /** PEM bundle of a private CA; TLS verification is always on. */
    readonly caFile?: string;
    /**
     * Where caFile was set when not by --ca-file, AMSYNC_CA_FILE or http.caFile (a fleet
     * target's `caFile`): the words its errors name instead of those.
     */
    readonly caFileOrigin?: string;
    /** Allow plain http:// to a host that is not loopback. @default false */
    readonly allowInsecureHttp: boolean;
    /** Largest answer body read (decompressed); a larger one is an error. @default 33554432 (32 MiB) */
    readonly maxResponseBytes: number;
  };
  /** Ceiling in requests/s; undefined = none (the adaptive limiter finds the server's). */
  readonly rate?: number;
  /** Where the adaptive limiter starts, requests/s. @default 10 */
  readonly initialRate: number;
  /** Requests in flight at most. @default 8 */
  readonly concurrency: number;
  readonly retry: {
    /** @default 8 */
    readonly maxAttempts: number;
    /** @default 250 */
    readonly baseDelayMs: number;
    /** @default 30000 */
    readonly maxDelayMs: number;
    /** @default 120000 */
    readonly maxElapsedMs: number;
    /** Longest Retry-After honoured. @default 300000 */
    readonly retryAfterCapMs: number;
  };
  /** The largest list page asked for; the service's own largest is learned below it. @default 1000 */
  readonly pageSize: number;
  /** A listing that takes longer is incomplete (nothing is planned from it). @default 300000 */
  readonly listDeadlineMs: number;
  /** A plan with more deletes is refused (exit 3). @default 10 */
  readonly maxDeletes: number;
  /** How long a run that writes waits for another writer's lock; then exit 3. @default 0 */
  readonly lockTimeoutMs: number;
  readonly daemon: {
    /** Cron, five fields (six with seconds). @default '*\/5 * * * *' */
    readonly schedule: string;
    /** HOST:PORT of /healthz, /readyz, /metrics. @default '127.0.0.1:9477' */
    readonly listen: string;
    /** `observe` plans and reports drift but never applies. @default 'apply' */
    readonly mode: DaemonMode;
    /** Quiet time after a file change before a sync. @default 1000 */
    readonly debounceMs: number;
    /** Time an in-flight sync gets to finish on SIGTERM. @default 30000 */
    readonly shutdownGraceMs: number;
    /** `lease:NAMESPACE/NAME`: only the replica holding this Lease writes; unset = no election. */
    readonly leaderElect?: string;
    /** A run still going after this long is abandoned: its requests cancelled, health red. @default 600000 */
    readonly runDeadlineMs: number;
    /**
     * A YAML or JSON list of approval hashes the daemon watches: a change the policy gates is
     * applied once its hash (or its set's) is listed. Unset: such changes stay pending.
     */
    readonly approvalsFile?: string;
    /** Sync windows: inside a deny window, or outside every allow window, the daemon observes only. @default [] */
    readonly windows: readonly SyncWindowSetting[];
    /** The control socket of `amsync ctl`; unset: `ctl.sock` beside the state file. */
    readonly socket?: string;
  };
  /** Append one JSON line per write attempt and per result here (0600, rotated by size); unset = no audit log. AMSYNC_AUDIT_LOG. */
  readonly auditLog?: string;
  readonly notify: {
    /** @default [] */
    readonly webhooks: readonly WebhookSetting[];
    /** Notifications waiting per webhook at most; past it the oldest is dropped (and counted). @default 1000 */
    readonly queueSize: number;
    /** Per delivery attempt, connection included. @default 10000 */
    readonly timeoutMs: number;
    /** Attempts per notification, the first included. @default 5 */
    readonly maxAttempts: number;
  };
  /** @default 'info' */
  readonly logLevel: LogLevel;
  /** Set when `logLevel` was asked for (a flag, AMSYNC_LOG_LEVEL or the settings file), not the default: a command at a terminal then logs at it too. */
  readonly logLevelGiven?: true;
}
