import { realpath, stat } from 'node:fs/promises';
import { basename, dirname, isAbsolute, resolve } from 'node:path';
import { FSWatcher } from 'chokidar';
import type { Logger } from '../obs/index.js';
import { contentHash } from './content-hash.js';
import { Debouncer } from './debouncer.js';
import type { Timers } from '../time/index.js';

export interface FileWatchOptions {
  /** The desired-state file and the secret files it reads. Relative paths resolve against the cwd. */
  readonly files: readonly string[];
  /** Quiet time after the last event before the contents are compared. */
  readonly debounceMs: number;
  /** Called with the files whose content fingerprint changed. */
  onChange(changed: readonly string[]): void;
  readonly logger: Logger;
  readonly timers: Timers;
  /**
   * Compare the contents this often even without events, in case the platform drops them
   * (network file systems, overlay mounts). 0 turns it off. @default 30000
   */
  readonly pollMs?: number;
}

export interface FileWatch {
  /** Replaces the watched files (the secret files change with the desired file). */
  setFiles(files: readonly string[]): Promise<void>;
  setDebounce(ms: number): void;
  /** Compares the contents now; calls onChange when some changed, and returns them. */
  check(): Promise<string[]>;
  close(): Promise<void>;
}

export type FileWatchFactory = (options: FileWatchOptions) => Promise<FileWatch>;

/**
 * Watches files by watching their parent directories (and the directories their symlinks
 * point into), never the files themselves: an editor's atomic save renames a new file over
 * the old one, and a ConfigMap update swaps the `..data` symlink while the file's own
 * symlink stays put; a watch on the file's inode would see neither. Events only say "look";
 * the content fingerprints decide whether anything changed.
 */
export const watchFiles: FileWatchFactory = async (options) => {
  const watch = new ParentDirWatch(options);
  await watch.start();
  return watch;
};

class ParentDirWatch implements FileWatch {
  readonly #o: FileWatchOptions;
  readonly #log: Logger;
  readonly #hashes = new Map<string, string>();
  readonly #debouncer: Debouncer;
  #dirs = new Set<string>();
  #names = new Set<string>();
  /** Watched paths that are folders (-f DIR): any entry of theirs may be a desired file. */
  #folders = new Set<string>();
  #watcher: FSWatcher | undefined;
  #checking: Promise<string[]> | undefined;
  #recheck = false;
  #pollHandle: unknown;
  #closed = false;

  constructor(options: FileWatchOptions) {
    this.#o = options;
    this.#log = options.logger;
    this.#debouncer = new Debouncer(options.timers, options.debounceMs, () => void this.check());
  }

  async start(): Promise<void> {
    for (const file of unique(this.#o.files)) this.#hashes.set(file, await contentHash(file));
    const { dirs, names, folders } = await this.#targets();
    this.#dirs = dirs;
    this.#names = names;
    this.#folders = folders;
    const watcher = new FSWatcher({
      persistent: true,
      ignoreInitial: true,
      // Only the directories' own entries: never a walk of a big working directory.
      depth: 0,
      // Events about the links themselves are what matter; the contents are read by path.
      followSymlinks: false,
      ignored: (path: string) => !this.#relevant(path),
    });
    this.#watcher = watcher;
    watcher.on('all', (_event, path) => this.#onEvent(path));
    // Raw events too: some swaps (a symlink renamed over another) reach chokidar only as raw
    // directory events it does not turn into add/change.
    watcher.on('raw', (_event, path, details) => {
      const dir = (details as { watchedPath?: string } | undefined)?.watchedPath;
      this.#onEvent(dir !== undefined && path && !isAbsolute(path) ? resolve(dir, path) : path);
    });
    watcher.on('error', (error) => this.#log.warn({ err: { message: (error as Error).message } }, 'file watch error; the next scheduled run re-reads the files anyway'));
    const ready = new Promise<void>((done) => watcher.once('ready', () => done()));
    watcher.add([...dirs]);
    await ready;
    this.#schedulePoll();
    this.#log.debug({ dirs: [...dirs], files: [...this.#hashes.keys()] }, 'watching');
  }

  async setFiles(files: readonly string[]): Promise<void> {
    const next = unique(files);
    const same = next.length === this.#hashes.size && next.every((f) => this.#hashes.has(f));
    if (same || this.#closed) return;
    for (const file of [...this.#hashes.keys()]) if (!next.includes(file)) this.#hashes.delete(file);
    // The baseline of a newly referenced file is its content now: the run that found the
    // reference has just read it.
    for (const file of next) if (!this.#hashes.has(file)) this.#hashes.set(file, await contentHash(file));
    await this.#refreshDirs();
  }

  setDebounce(ms: number): void {
    this.#debouncer.setWait(ms);
  }

  check(): Promise<string[]> {
    if (this.#closed) return Promise.resolve([]);
    if (this.#checking) {
      // Something moved while comparing: compare once more afterwards.
      this.#recheck = true;
      return this.#checking;
    }
    this.#checking = this.#compare().finally(() => {
      this.#checking = undefined;
      if (this.#recheck) {
        this.#recheck = false;
        void this.check();
      }
    });
    return this.#checking;
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#debouncer.close();
    if (this.#pollHandle !== undefined) this.#o.timers.clearTimeout(this.#pollHandle);
    this.#pollHandle = undefined;
    await this.#watcher?.close();
  }

  async #compare(): Promise<string[]> {
    const changed: string[] = [];
    try {
      for (const [file, before] of [...this.#hashes]) {
        const now = await contentHash(file);
        if (this.#closed || !this.#hashes.has(file)) continue;
        if (now !== before) {
          this.#hashes.set(file, now);
          changed.push(file);
        }
      }
      await this.#refreshDirs();
    } catch (error) {
      this.#log.warn({ err: { message: (error as Error).message } }, 'could not compare the watched files');
    }
    if (changed.length > 0 && !this.#closed) {
      this.#log.debug({ files: changed }, 'watched file changed');
      this.#o.onChange(changed);
    }
    return changed;
  }

  /** A symlink may now point elsewhere (a ConfigMap's new `..<timestamp>` directory). */
  async #refreshDirs(): Promise<void> {
    const watcher = this.#watcher;
    if (!watcher || this.#closed) return;
    const { dirs, names, folders } = await this.#targets();
    this.#names = names;
    this.#folders = folders;
    const added = [...dirs].filter((d) => !this.#dirs.has(d));
    const removed = [...this.#dirs].filter((d) => !dirs.has(d));
    this.#dirs = dirs;
    if (removed.length > 0) watcher.unwatch(removed);
    if (added.length > 0) {
      watcher.add(added);
      // chokidar sets the new watches up in the background and says nothing when done: a
      // change made meanwhile has no event, so compare once more after the quiet time (the
      // baseline predates the watch, so nothing slips through).
      this.#debouncer.poke();
    }
  }

  async #targets(): Promise<{ dirs: Set<string>; names: Set<string>; folders: Set<string> }> {
    const dirs = new Set<string>();
    const names = new Set<string>();
    const folders = new Set<string>();
    for (const file of this.#hashes.keys()) {
      dirs.add(dirname(file));
      names.add(basename(file));
      // A folder given to -f: watched itself too, so a file added to it is seen.
      if ((await stat(file).catch(() => undefined))?.isDirectory()) {
        dirs.add(file);
        folders.add(file);
      }
      const real = await realpath(file).catch(() => undefined);
      if (real !== undefined && real !== file) {
        dirs.add(dirname(real));
        names.add(basename(real));
      }
    }
    return { dirs, names, folders };
  }

  /**
   * Entries that can change what a watched path reads: the file's own name (written, renamed
   * over, deleted) and Kubernetes' atomic-writer entries (`..data`, `..2024_01_01_...`).
   * Everything else in the directory is ignored, so a busy working directory costs nothing.
   */
  #relevant(path: string): boolean {
    if (this.#dirs.has(path) || this.#folders.has(dirname(path))) return true;
    const name = basename(path);
    return this.#names.has(name) || name.startsWith('..');
  }

  #onEvent(path: string | undefined): void {
    if (this.#closed) return;
    if (path !== undefined && path !== '' && !this.#relevant(path)) return;
    this.#debouncer.poke();
  }

  #schedulePoll(): void {
    const every = this.#o.pollMs ?? 30_000;
    if (every <= 0 || this.#closed) return;
    this.#pollHandle = this.#o.timers.setTimeout(() => {
      this.#pollHandle = undefined;
      void this.check().finally(() => this.#schedulePoll());
    }, every);
  }
}

function unique(files: readonly string[]): string[] {
  return [...new Set(files.map((f) => resolve(f)))];
}
