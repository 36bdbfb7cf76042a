import { EventEmitter } from 'node:events';
import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';
import type { SyncOutcome } from '../../src/sync/run-sync.js';
import type { FileWatch, FileWatchFactory, FileWatchOptions, Schedule, ScheduleFactory, SignalSource } from '../../src/daemon/index.js';
import type { Change, ChangeResult, DesiredState, ItemRef, Kind } from '../../src/model/index.js';
import { SafetyError } from '../../src/errors.js';

/** A pino logger whose lines the test reads (STYLE.md: logs through a sink). */
export function logSink(level = 'debug'): { logger: Logger; lines: Record<string, unknown>[]; text: () => string } {
  const lines: Record<string, unknown>[] = [];
  let raw = '';
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      raw += chunk.toString();
      for (const line of chunk.toString().split('\n')) if (line.trim()) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level }, stream), lines, text: () => raw };
}

/** node-cron stand-in: the test fires the schedule by hand. */
export class FakeScheduler {
  readonly expressions: string[] = [];
  #fire: (() => void) | undefined;
  stopped = 0;

  readonly factory: ScheduleFactory = (expression, fire): Schedule => {
    this.expressions.push(expression);
    this.#fire = fire;
    return {
      stop: async () => {
        this.stopped += 1;
      },
    };
  };

  fire(): void {
    this.#fire?.();
  }
}

/** chokidar stand-in: the test says which files changed. */
export class FakeWatcher {
  options: FileWatchOptions | undefined;
  files: readonly string[] = [];
  closed = false;

  readonly factory: FileWatchFactory = async (options): Promise<FileWatch> => {
    this.options = options;
    this.files = options.files;
    return {
      setFiles: async (files) => {
        this.files = files;
      },
      setDebounce: () => {},
      check: async () => [],
      close: async () => {
        this.closed = true;
      },
    };
  };

  change(files: string[] = ['access.yaml']): void {
    this.options?.onChange(files);
  }
}

export function fakeSignals(): SignalSource & EventEmitter {
  return new EventEmitter() as SignalSource & EventEmitter;
}

export interface OutcomeParts {
  readonly changes?: readonly Pick<Change, 'kind' | 'action' | 'key'>[];
  readonly unmanaged?: readonly { kind: Kind; key: string }[];
  /** Per change: applied unless listed here. */
  readonly failed?: readonly string[];
  readonly dryRun?: boolean;
  readonly refusal?: boolean;
}

/** A SyncOutcome as runSync returns it, from a few parts. */
export function outcome(parts: OutcomeParts = {}): SyncOutcome {
  const changes: Change[] = (parts.changes ?? []).map((c) => ({ ...c, id: c.action === 'create' ? null : 1, fields: {} }));
  const unmanaged: ItemRef[] = (parts.unmanaged ?? []).map((u, i) => ({ ...u, id: 100 + i }));
  const results: ChangeResult[] | undefined =
    parts.dryRun || parts.refusal
      ? undefined
      : changes.map((c) => ({ kind: c.kind, key: c.key, action: c.action, status: parts.failed?.includes(c.key) ? 'failed' : 'applied', ...(parts.failed?.includes(c.key) ? { error: '503 service unavailable' } : {}) }));
  return {
    actual: { sshUsers: [], apikeys: [] },
    actualFingerprint: 'fp',
    plan: { changes, unchanged: 0, unmanaged, protected: [], problems: [], notes: [] },
    policy: { prune: { sshUsers: false, apikeys: false }, isProtected: () => false, passwords: { mode: 'create-only' } },
    ...(parts.refusal ? { refusal: new SafetyError('deletion_budget', 'refusing to delete 11 items: the deletion budget is 10') } : {}),
    ...(results ? { results } : {}),
    tokensWritten: 0,
  };
}

export function desiredWith(usernames: string[]): DesiredState {
  return {
    sshUsers: usernames.map((username) => ({ username, level: 'n1', ensure: 'present' as const })),
    apikeys: [],
    prune: { sshUsers: false, apikeys: false },
    protect: { sshUsers: [], apikeys: [] },
  };
}
