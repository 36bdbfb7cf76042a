import { chmodSync, lstatSync, mkdirSync, statSync, unlinkSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { dirname } from 'node:path';
import type { Logger } from '../obs/index.js';
import { DaemonError } from './daemon-error.js';
import { errorForLog } from './describe-error.js';
import { maxCtlLineBytes, parseCtlRequest, type CtlRequest, type CtlResponse } from './ctl-protocol.js';

export interface CtlServer {
  readonly path: string;
  close(): Promise<void>;
}

/** How long a connection may stay without sending its line. */
const idleMs = 10_000;

/**
 * The control socket of `amsync ctl` (ctl-protocol.ts): a Unix socket, 0600 (owner only).
 * Created with a umask that leaves no bit for others, then set and checked to 0600; a socket
 * left by a daemon that died is removed; a live one (something answers on it) is refused.
 */
export async function startCtlServer(path: string, handle: (request: CtlRequest) => Promise<CtlResponse>, logger: Logger): Promise<CtlServer> {
  await clearStaleSocket(path);
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const server = createServer((socket) => serveConnection(socket, handle, logger));
  await listenOwnerOnly(server, path);
  const mode = statSync(path).mode & 0o777;
  if (mode !== 0o600) {
    await closeServer(server);
    throw new DaemonError('daemon_listen', `The control socket ${path} has mode ${mode.toString(8)}, not 0600: refusing to serve it`);
  }
  server.on('error', (error) => logger.warn({ err: errorForLog(error) }, 'control socket error'));
  return { path, close: () => closeServer(server) };
}

async function listenOwnerOnly(server: Server, path: string): Promise<void> {
  // The socket file is made by bind(), inside listen(): the umask is tightened around that call
  // only, so there is no moment at which another user may connect; chmod then makes it exact.
  const previous = process.umask(0o177);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', (error: NodeJS.ErrnoException) => reject(new DaemonError('daemon_listen', `Cannot listen on the control socket ${path}: ${error.code ?? error.message}`, { cause: error })));
      server.listen(path, () => resolve());
      process.umask(previous);
    });
  } finally {
    process.umask(previous);
  }
  chmodSync(path, 0o600);
}

/** A socket file with nobody behind it is a dead daemon's: removed. One that answers is another daemon's: refused. */
async function clearStaleSocket(path: string): Promise<void> {
  let isSocket: boolean;
  try {
    isSocket = lstatSync(path).isSocket();
  } catch {
    return;
  }
  if (!isSocket) throw new DaemonError('daemon_listen', `The control socket path ${path} exists and is not a socket: remove it or give another with --socket PATH`);
  const live = await new Promise<boolean>((resolve) => {
    const probe = connect(path);
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });
  if (live) throw new DaemonError('daemon_listen', `Another daemon is listening on the control socket ${path}: stop it, or give this one another with --socket PATH`);
  unlinkSync(path);
}

function serveConnection(socket: Socket, handle: (request: CtlRequest) => Promise<CtlResponse>, logger: Logger): void {
  let buffered = '';
  let answered = false;
  socket.setEncoding('utf8');
  socket.setTimeout(idleMs, () => socket.destroy());
  socket.on('error', () => undefined);
  const answer = (response: CtlResponse) => {
    answered = true;
    socket.end(`${JSON.stringify(response)}\n`);
  };
  socket.on('data', (chunk: string) => {
    if (answered) return;
    buffered += chunk;
    const end = buffered.indexOf('\n');
    if (end === -1) {
      if (Buffer.byteLength(buffered) > maxCtlLineBytes) answer({ ok: false, error: `request longer than ${maxCtlLineBytes} bytes` });
      return;
    }
    const request = parseCtlRequest(buffered.slice(0, end));
    if ('error' in request) {
      answer({ ok: false, error: request.error });
      return;
    }
    answered = true;
    handle(request).then(
      (response) => socket.end(`${JSON.stringify(response)}\n`),
      (error: unknown) => {
        logger.error({ err: errorForLog(error) }, 'control request failed');
        socket.end(`${JSON.stringify({ ok: false, error: 'internal error' })}\n`);
      },
    );
  });
}

function closeServer(server: Server): Promise<void> {
  // Closing a Unix socket server removes its file.
  return new Promise((resolve) => server.close(() => resolve()));
}
