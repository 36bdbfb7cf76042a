import { execFileSync, spawn } from 'node:child_process';
import { chmod } from 'node:fs/promises';
import { bin, type AmsyncRun } from '../../helpers/spawn.js';

/**
 * A folder that is read-only for one amsync process (the rotating-key-read-only fault): the
 * integrator key's file on a read-only volume. Root writes through file modes, so as root the
 * process runs in a mount namespace of its own where the folder is bind-mounted read-only
 * (EROFS, as on a read-only volume; the mount ends with the process, nothing to undo). Not as
 * root, the folder's modes do it (EACCES), put back afterwards.
 */

/** How this machine makes a folder read-only for one process; probed once. */
type Way = { readonly kind: 'namespace'; readonly unshare: readonly string[] } | { readonly kind: 'modes' } | { readonly kind: 'none'; readonly why: string };

let way: Way | undefined;

function probe(): Way {
  if (typeof process.getuid === 'function' && process.getuid() !== 0) return { kind: 'modes' };
  const tries = [
    ['--mount', '--propagation', 'private'],
    ['--user', '--map-root-user', '--mount', '--propagation', 'private'],
  ];
  const errors: string[] = [];
  for (const flags of tries) {
    try {
      execFileSync('unshare', [...flags, 'true'], { stdio: 'ignore', timeout: 10_000 });
      return { kind: 'namespace', unshare: flags };
    } catch (error) {
      errors.push(`unshare ${flags.join(' ')}: ${(error as Error).message.split('\n')[0]}`);
    }
  }
  return { kind: 'none', why: `root cannot be kept from writing a folder here without a mount namespace (${errors.join('; ')})` };
}

export interface ReadOnlyRun {
  /** The run, or why the fault could not be played on this machine. */
  readonly run?: AmsyncRun;
  readonly unplayable?: string;
}

/** `amsync ARGS` as a child process that cannot write `folder` (absolute); killed after `timeoutMs` (90 s). */
export async function runWithReadOnlyFolder(folder: string, args: readonly string[], options: { cwd: string; env: Record<string, string>; timeoutMs?: number }): Promise<ReadOnlyRun> {
  way ??= probe();
  const env = { PATH: process.env.PATH ?? '', NO_COLOR: '1', ...options.env };
  if (way.kind === 'none') return { unplayable: way.why };
  if (way.kind === 'modes') {
    await chmod(folder, 0o500);
    try {
      return { run: await collect(process.execPath, [bin, ...args], options.cwd, env, options.timeoutMs) };
    } finally {
      await chmod(folder, 0o700);
    }
  }
  // $0 is the folder; "$@" the command, exec'd so that signals reach node itself.
  const script = 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" "$0" && exec "$@"';
  return { run: await collect('unshare', [...way.unshare, 'sh', '-c', script, folder, process.execPath, bin, ...args], options.cwd, env, options.timeoutMs) };
}

function collect(command: string, args: readonly string[], cwd: string, env: Record<string, string>, timeoutMs = 90_000): Promise<AmsyncRun> {
  const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let timedOut = false;
  child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill('SIGKILL');
  }, timeoutMs);
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, killed: false, timedOut, signals: [], stdout, stderr });
    });
  });
}
