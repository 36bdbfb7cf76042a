import type { Timers } from '../time/index.js';
import type { Action, Change, ChangeResult, Kind, Plan } from '../model/index.js';
import { applyingProgress, listingProgress, renderNotStarted, renderResultLine, stillLine } from '../report/index.js';
import type { ServiceObserver, WriteStart } from '../app/index.js';
import type { CliIo, OutputStream } from './io.js';
import { StatusLine } from './status-line.js';

export interface LiveOutputOptions {
  /** Text output: each result and each "still creating…" goes to stdout as it happens. */
  readonly streamResults: boolean;
  readonly color: boolean;
}

/** Terraform's cadence for "Still creating... [10s elapsed]". */
export const stillEvery = 10_000;
/** The progress line appears once a phase has lasted this long: a quick run shows none. */
const showAfterMs = 1_000;
const tickMs = 1_000;

interface InFlight {
  readonly change: Change;
  readonly since: number;
  reported: number;
}

/**
 * What a person at a terminal sees while `plan` or `sync` runs: each result as it is known,
 * "still creating … [10s elapsed]" for slow items, and, on a terminal, one progress line on
 * stderr (items and pages listed, writes done and left, rate). Logs written meanwhile pass
 * through `logStream`, above the line. Time comes from io.timers, so tests drive it.
 */
export class LiveOutput implements ServiceObserver {
  readonly #io: CliIo;
  readonly #options: LiveOutputOptions;
  readonly #timers: Timers;
  readonly #status: StatusLine | undefined;
  readonly #listed = new Map<Kind, { pages: number; items: number }>();
  readonly #inFlight = new Map<string, InFlight>();
  readonly #byRef = new Map<string, Change>();
  #phase: 'listing' | 'applying' | 'idle' = 'listing';
  #phaseStart: number;
  #total = 0;
  #done = 0;
  #resultsShown = 0;
  /** Changes a stop kept from being sent: counted, and said in one line at the end. */
  readonly #notStarted: ChangeResult[] = [];
  #tick: unknown;
  #closed = false;

  constructor(io: CliIo, options: LiveOutputOptions) {
    this.#io = io;
    this.#options = options;
    this.#timers = io.timers;
    this.#status = io.stderr.isTTY === true ? new StatusLine(io.stderr) : undefined;
    this.#phaseStart = this.#timers.now();
    this.#arm();
  }

  /** Where the logger writes: above the progress line. */
  get logStream(): OutputStream {
    return { write: (chunk: string) => (this.#around(() => this.#io.stderr.write(chunk)), true), isTTY: this.#io.stderr.isTTY };
  }

  /** Writes to stdout without tearing the progress line. */
  print(text: string): void {
    this.#around(() => this.#io.stdout.write(text));
  }

  /** Writes to stderr without tearing the progress line. */
  printError(text: string): void {
    this.#around(() => this.#io.stderr.write(text));
  }

  /** The listing is over; the plan is being shown (and perhaps asked about): no progress line. */
  pause(): void {
    this.#phase = 'idle';
    this.#status?.set('');
  }

  onPage(kind: Kind, items: number): void {
    const seen = this.#listed.get(kind) ?? { pages: 0, items: 0 };
    this.#listed.set(kind, { pages: seen.pages + 1, items: seen.items + items });
    this.#refresh();
  }

  /** The plan is approved and its writes begin. */
  startApply(plan: Plan): void {
    this.expect(plan);
    this.#phase = 'applying';
    this.#phaseStart = this.#timers.now();
  }

  /** The plan whose writes will follow the listing (a saved plan): the apply phase begins with its first write. */
  expect(plan: Plan): void {
    this.#total = plan.changes.length;
    for (const change of plan.changes) this.#byRef.set(refOf(change.kind, change.action, change.id === null ? change.key : change.id), change);
  }

  onWriteStart(write: WriteStart): void {
    if (this.#phase !== 'applying') {
      this.#phase = 'applying';
      this.#phaseStart = this.#timers.now();
    }
    const change = this.#byRef.get(refOf(write.kind, write.action, write.key ?? write.id ?? ''));
    // A write that is not one of the plan's (drift handling re-planned the item) belongs to a change already in flight.
    if (!change) return;
    const id = itemId(change);
    if (!this.#inFlight.has(id)) this.#inFlight.set(id, { change, since: this.#timers.now(), reported: 0 });
  }

  onResult(result: ChangeResult): void {
    this.#done += 1;
    this.#inFlight.delete(itemId(result));
    if (result.notStarted === true) this.#notStarted.push(result);
    else if (this.#options.streamResults) this.#printResult(renderResultLine(result, { color: this.#options.color }));
    this.#refresh();
  }

  /** The run is over: the changes a stop kept from being sent, one line for all (at a terminal, 300 lines would bury the rest). */
  close(): void {
    if (this.#closed) return;
    if (this.#options.streamResults) for (const line of renderNotStarted(this.#notStarted, { color: this.#options.color })) this.#printResult(line);
    this.#notStarted.length = 0;
    this.#closed = true;
    if (this.#tick !== undefined) this.#timers.clearTimeout(this.#tick);
    this.#status?.clear();
  }

  /** The text of the progress line now; empty when there is none to show. */
  statusText(): string {
    const elapsedMs = this.#timers.now() - this.#phaseStart;
    if (this.#phase === 'idle' || elapsedMs < showAfterMs) return '';
    const seconds = elapsedMs / 1000;
    if (this.#phase === 'listing') return listingProgress(this.#listed, seconds);
    return applyingProgress(this.#done, this.#total, this.#inFlight.size, seconds);
  }

  #printResult(line: string): void {
    this.print(`${this.#resultsShown === 0 ? '\n' : ''}${line}\n`);
    this.#resultsShown += 1;
  }

  #around(write: () => void): void {
    if (this.#status) this.#status.around(write);
    else write();
  }

  #refresh(): void {
    this.#status?.set(this.statusText());
  }

  #arm(): void {
    this.#tick = this.#timers.setTimeout(() => {
      if (this.#closed) return;
      this.#reportSlow();
      this.#refresh();
      this.#arm();
    }, tickMs);
    (this.#tick as { unref?: () => void } | undefined)?.unref?.();
  }

  /** `still creating sshUser "deploy"… [10s elapsed]`, every 10 s of a write. */
  #reportSlow(): void {
    if (!this.#options.streamResults) return;
    const now = this.#timers.now();
    for (const f of this.#inFlight.values()) {
      const due = Math.floor((now - f.since) / stillEvery);
      if (due <= f.reported) continue;
      f.reported = due;
      this.print(stillLine(f.change, due * stillEvery));
    }
  }
}

function refOf(kind: Kind, action: Action, keyOrId: string | number): string {
  return `${kind}\u0000${action}\u0000${typeof keyOrId === 'number' ? `#${keyOrId}` : keyOrId}`;
}

/** One change while it is under way: its result carries the same kind, action and key. */
function itemId(item: Pick<Change, 'kind' | 'action' | 'key'>): string {
  return `${item.kind}\u0000${item.action}\u0000${item.key}`;
}
