import { DaemonError } from './daemon-error.js';

export interface ListenAddress {
  readonly host: string;
  /** 0 picks a free port (tests). */
  readonly port: number;
}

/**
 * `HOST:PORT`, `[V6]:PORT` -> host and port. Pure. Throws DaemonError `daemon_options`
 * with the expected form, p-queue style.
 */
export function parseListen(text: string): ListenAddress {
  const bad = (why: string) => new DaemonError('daemon_options', `Expected \`listen\` to be HOST:PORT (e.g. 127.0.0.1:9477 or [::1]:9477), got '${text}': ${why}`);
  const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:[\]\s]+)):(\d{1,5})$/.exec(text.trim());
  if (!match) throw bad('no HOST:PORT form');
  const host = match[1] ?? match[2] ?? '';
  const port = Number(match[3]);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw bad('the port must be from 0 to 65535');
  return { host, port };
}

/** `http://HOST:PORT`, brackets around an IPv6 host. */
export function listenUrl(host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}
