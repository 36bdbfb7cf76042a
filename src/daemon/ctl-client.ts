import { connect } from 'node:net';
import { DaemonError } from './daemon-error.js';
import type { CtlRequest, CtlResponse } from './ctl-protocol.js';

/**
 * Sends one request to the daemon listening on `path` and returns its answer. Throws
 * DaemonError `ctl_unreachable` (naming the path) when no daemon listens there.
 */
export function sendCtlRequest(path: string, request: CtlRequest): Promise<CtlResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(path);
    let buffered = '';
    socket.setEncoding('utf8');
    socket.once('connect', () => socket.write(`${JSON.stringify(request)}\n`));
    socket.on('data', (chunk: string) => (buffered += chunk));
    socket.once('error', (error: NodeJS.ErrnoException) => {
      const why = error.code === 'ENOENT' ? 'no such socket' : error.code === 'ECONNREFUSED' ? 'nothing listens on it' : error.code === 'EACCES' ? 'permission denied (the socket is its owner\'s only)' : (error.code ?? error.message);
      reject(new DaemonError('ctl_unreachable', `No daemon answers on the control socket ${path} (${why}): is \`amsync daemon\` running with this state file, or --socket PATH?`, { cause: error }));
    });
    socket.once('close', () => {
      const line = buffered.split('\n', 1)[0] ?? '';
      try {
        resolve(JSON.parse(line) as CtlResponse);
      } catch {
        reject(new DaemonError('ctl_unreachable', `The daemon on the control socket ${path} closed the connection without an answer`));
      }
    });
  });
}
