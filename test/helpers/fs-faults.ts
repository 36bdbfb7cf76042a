/**
 * File-system errors a test cannot make for real where it runs (as root, a chmod does not stop
 * a write; no read-only or full file system can be mounted): an errno injected at Node's own
 * `node:fs` and `node:fs/promises`, for every call that would change something under a folder
 * the test marks. Reads pass, as on a read-only or full file system. A test file opts in with
 *
 *   vi.mock('node:fs/promises', async (actual) => (await import('../helpers/fs-faults.js')).faultyFsPromises(await actual()));
 *   vi.mock('node:fs', async (actual) => (await import('../helpers/fs-faults.js')).faultyFs(await actual()));
 *
 * and then `fsFaults.set(folder, 'EROFS')`. Only code loaded through vitest (src/, test/) sees
 * it; a package in node_modules keeps the real file system. This module imports no `node:fs`
 * itself: it wraps the module it is given.
 */

/** Folder (absolute) -> the errno every change under it gets. */
export const fsFaults = new Map<string, string>();

/**
 * Folder (absolute) -> the errno `close()` of a FileHandle opened under it rejects with, after
 * the descriptor is really closed: NFS and quota file systems report EDQUOT, ENOSPC or EIO at
 * close, when the data is flushed. Only `node:fs/promises` handles.
 */
export const closeFaults = new Map<string, string>();

type Fn = (...args: unknown[]) => unknown;

const messages: Record<string, string> = {
  EROFS: 'read-only file system',
  ENOSPC: 'no space left on device',
  EDQUOT: 'disk quota exceeded',
  EACCES: 'permission denied',
  EIO: 'i/o error',
};

function faultOf(path: unknown, faults: ReadonlyMap<string, string> = fsFaults): string | undefined {
  const text = typeof path === 'string' ? path : path instanceof URL ? path.pathname : Buffer.isBuffer(path) ? path.toString() : undefined;
  if (text === undefined) return undefined;
  for (const [folder, errno] of faults) if (text === folder || text.startsWith(`${folder}/`)) return errno;
  return undefined;
}

function errnoError(errno: string, syscall: string, path: unknown): NodeJS.ErrnoException {
  return Object.assign(new Error(`${errno}: ${messages[errno] ?? 'injected fault'}, ${syscall} '${String(path)}'`), { code: errno, errno: -1, syscall, path: String(path) });
}

/** Whether open flags ask to change something (create, write, append, truncate). */
function writes(flags: unknown): boolean {
  if (flags === undefined || flags === null) return false;
  if (typeof flags === 'string') return /[wa+]/.test(flags);
  // O_WRONLY 1, O_RDWR 2, O_CREAT 0o100, O_TRUNC 0o1000, O_APPEND 0o2000 (Linux).
  return typeof flags === 'number' && (flags & (1 | 2 | 0o100 | 0o1000 | 0o2000)) !== 0;
}

/** Names of calls that change the file system, by how many leading path arguments they take. */
const changing: Record<string, number> = {
  mkdir: 1,
  writeFile: 1,
  appendFile: 1,
  rename: 2,
  rm: 1,
  rmdir: 1,
  unlink: 1,
  chmod: 1,
  copyFile: 2,
  symlink: 2,
  link: 2,
  truncate: 1,
  utimes: 1,
};

function wrap(name: string, real: Fn, paths: number, exists: (path: unknown) => boolean): Fn {
  return function (this: unknown, ...args: unknown[]) {
    for (const path of args.slice(0, paths)) {
      const errno = faultOf(path);
      // mkdir -p of a folder that exists succeeds on a read-only file system too.
      if (errno !== undefined && !(name.startsWith('mkdir') && exists(path))) throw errnoError(errno, name.replace(/Sync$/, ''), path);
    }
    return real.apply(this, args);
  };
}

function wrapOpen(name: string, real: Fn): Fn {
  return function (this: unknown, ...args: unknown[]) {
    const errno = faultOf(args[0]);
    if (errno !== undefined && writes(args[1])) throw errnoError(errno, 'open', args[0]);
    return real.apply(this, args);
  };
}

/** A FileHandle whose close() closes it and then rejects with `errno`. */
function closeRejecting(handle: { close(): Promise<void> }, errno: string, path: unknown): unknown {
  return new Proxy(handle, {
    get(target, key) {
      if (key === 'close') {
        return async () => {
          await target.close();
          throw errnoError(errno, 'close', path);
        };
      }
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? (value as Fn).bind(target) : value;
    },
  });
}

/** `node:fs/promises` with the faults (a rejected promise where the real call would change something). */
export function faultyFsPromises<T extends Record<string, unknown>>(actual: T): T {
  const real = actual as unknown as Record<string, Fn> & { stat: (path: unknown) => Promise<unknown> };
  const exists = () => false;
  const out: Record<string, unknown> = { ...actual };
  for (const [name, paths] of Object.entries(changing)) {
    if (typeof real[name] !== 'function') continue;
    const sync = wrap(name, real[name], paths, exists);
    out[name] = async (...args: unknown[]) => {
      if (name === 'mkdir' && faultOf(args[0]) !== undefined) {
        const found = await real.stat(args[0]).then(() => true, () => false);
        if (found) return real[name]!(...args);
      }
      return sync(...args);
    };
  }
  const open = wrapOpen('open', real.open!);
  out.open = async (...args: unknown[]) => {
    const handle = (await open(...args)) as { close(): Promise<void> };
    const errno = faultOf(args[0], closeFaults);
    return errno === undefined ? handle : closeRejecting(handle, errno, args[0]);
  };
  out.default = { ...(actual.default as object), ...out };
  return out as T;
}

/** `node:fs` with the faults, for its synchronous calls (the audit log, the token sink). */
export function faultyFs<T extends Record<string, unknown>>(actual: T): T {
  const real = actual as unknown as Record<string, Fn> & { existsSync: (p: unknown) => boolean };
  const exists = (path: unknown) => real.existsSync(path);
  const out: Record<string, unknown> = { ...actual };
  for (const [name, paths] of Object.entries(changing)) {
    const syncName = `${name}Sync`;
    if (typeof real[syncName] === 'function') out[syncName] = wrap(syncName, real[syncName], paths, exists);
  }
  out.openSync = wrapOpen('openSync', real.openSync!);
  out.default = { ...(actual.default as object), ...out };
  return out as T;
}
