import { z } from 'zod';
import { rules } from './field-rules.js';

const describe = <T extends z.ZodType>(schema: T, description: string): T => schema.meta({ description });

/**
 * A `--settings FILE` (and config/default.yaml): every key optional, unknown keys refused.
 * `null` unsets an optional value (`rate: null`: no ceiling). There is deliberately no
 * `token` key: a token never sits in a file that may be committed.
 */
export const settingsFileSchema = z
  .strictObject({
    url: describe(rules.url.schema.nullable().optional(), 'Base URL of the service (AMSYNC_URL, --url). No default.'),
    tokenFile: describe(rules.path.schema.nullable().optional(), 'File holding the bearer token, re-read on 401 (AMSYNC_TOKEN_FILE, --token-file). The token itself only comes from AMSYNC_TOKEN.'),
    refreshTokenFile: describe(
      rules.path.schema.nullable().optional(),
      'File holding the integrator key (a refresh token), exchanged for access tokens and renewed before they expire; a rotated key is written back to it, 0600 (AMSYNC_REFRESH_TOKEN_FILE, --refresh-token-file). Not together with a token. The key itself only comes from AMSYNC_REFRESH_TOKEN.',
    ),
    stateFile: describe(rules.path.schema.optional(), 'Where password fingerprints of the last apply are kept (AMSYNC_STATE_FILE, --state-file).'),
    tokensDir: describe(rules.path.schema.nullable().optional(), 'Folder new apikey tokens are written to, one 0600 file per key (AMSYNC_TOKENS_DIR, --tokens-dir).'),
    http: z
      .strictObject({
        timeoutMs: describe(rules.int1.schema.optional(), 'Per-request timeout in milliseconds (AMSYNC_HTTP_TIMEOUT_MS).'),
        caFile: describe(rules.path.schema.nullable().optional(), 'PEM bundle of a private CA (AMSYNC_CA_FILE, --ca-file). TLS verification is always on.'),
        allowInsecureHttp: describe(rules.boolean.schema.optional(), 'Allow plain http:// to a host that is not loopback (AMSYNC_ALLOW_INSECURE_HTTP, --allow-insecure-http).'),
        maxResponseBytes: describe(rules.int1.schema.optional(), 'Largest answer body read, in bytes (decompressed); a larger one is an error and is not read further (AMSYNC_HTTP_MAX_RESPONSE_BYTES, --max-response-bytes).'),
      })
      .optional(),
    rate: describe(rules.positiveNumber.schema.nullable().optional(), 'Ceiling in requests per second (AMSYNC_RATE, --rate). null: none; the adaptive limiter finds the limit.'),
    initialRate: describe(rules.positiveNumber.schema.optional(), 'Requests per second the adaptive limiter starts at for calls that queue up, e.g. writes (AMSYNC_INITIAL_RATE); until the first sign of a limit, a call that finds nothing queued goes out at once.'),
    concurrency: describe(rules.int1.schema.optional(), 'Requests in flight at most (AMSYNC_CONCURRENCY, --concurrency): a ceiling; below it the limiter keeps what the rate needs at the measured latency.'),
    retry: z
      .strictObject({
        maxAttempts: describe(rules.int1.schema.optional(), 'Attempts per request, the first included (AMSYNC_RETRY_MAX_ATTEMPTS).'),
        baseDelayMs: describe(rules.int0.schema.optional(), 'First backoff step in milliseconds; full jitter.'),
        maxDelayMs: describe(rules.int0.schema.optional(), 'Longest single backoff in milliseconds.'),
        maxElapsedMs: describe(rules.int0.schema.optional(), 'Give up retrying a request after this long (AMSYNC_RETRY_MAX_ELAPSED_MS).'),
        retryAfterCapMs: describe(rules.int0.schema.optional(), 'Longest Retry-After honoured, in milliseconds.'),
      })
      .optional(),
    pageSize: describe(rules.int1.schema.optional(), "The largest list page asked for; the service's own largest is learned below it (AMSYNC_PAGE_SIZE, --page-size)."),
    listDeadlineMs: describe(rules.int1.schema.optional(), 'A listing that takes longer than this, in milliseconds, is incomplete: nothing is planned from it (AMSYNC_LIST_DEADLINE_MS, --list-deadline-ms).'),
    maxDeletes: describe(rules.int0.schema.optional(), 'A plan with more deletes than this is refused, exit 3 (AMSYNC_MAX_DELETES, --max-deletes).'),
    lockTimeoutMs: describe(rules.int0.schema.optional(), 'How long a run that writes waits for the writer lock another run holds, in milliseconds; then exit 3 (AMSYNC_LOCK_TIMEOUT_MS, --lock-timeout).'),
    daemon: z
      .strictObject({
        schedule: describe(rules.cron.schema.optional(), 'Cron of the periodic re-sync; six fields allow seconds (AMSYNC_DAEMON_SCHEDULE, --schedule).'),
        listen: describe(rules.listen.schema.optional(), 'HOST:PORT of /healthz, /readyz and /metrics (AMSYNC_DAEMON_LISTEN, --listen).'),
        mode: describe(rules.mode.schema.optional(), 'apply: correct drift; observe: only plan and report it (AMSYNC_DAEMON_MODE, --mode).'),
        debounceMs: describe(rules.int0.schema.optional(), 'Quiet time after a file change before syncing, in milliseconds.'),
        shutdownGraceMs: describe(rules.int0.schema.optional(), 'Time a running sync gets to finish on SIGTERM, in milliseconds.'),
        leaderElect: describe(
          rules.leaseRef.schema.nullable().optional(),
          'lease:NAMESPACE/NAME — leader election on a coordination.k8s.io/v1 Lease: only the holder writes, the other replicas observe (AMSYNC_LEADER_ELECT, --leader-elect).',
        ),
        runDeadlineMs: describe(rules.int1.schema.optional(), 'A run still going after this long, in milliseconds, is abandoned: its requests are cancelled and /healthz and /readyz report it (AMSYNC_DAEMON_RUN_DEADLINE_MS, --run-deadline-ms).'),
        approvalsFile: describe(
          rules.path.schema.nullable().optional(),
          'A YAML or JSON list of approval hashes, watched: a change the policy gates (superuser, approveRoles, approveDeletesOver) is applied once its hash, or its set\'s, is listed; until then it is pending (AMSYNC_DAEMON_APPROVALS_FILE, --approvals). Unset: gated changes stay pending.',
        ),
      })
      .optional(),
    logLevel: describe(rules.logLevel.schema.optional(), 'Log level (AMSYNC_LOG_LEVEL, --log-level).'),
  })
  .meta({ title: 'amsync settings', description: 'Runtime settings: built-in defaults < this file < AMSYNC_* environment < flags.' });

/** One layer of settings: what a file, the environment or the flags set. null unsets. */
export type SettingsLayer = z.output<typeof settingsFileSchema>;
