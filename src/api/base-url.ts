import { isIP } from 'node:net';
import { ClientConfigError } from './client-config-error.js';

/** 127.0.0.0/8, ::1 and localhost: traffic that never leaves the machine. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase().replace(/\.$/, '');
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  if (isIP(host) === 6) return host === '::1' || host === '0:0:0:0:0:0:0:1' || /^::ffff:127\./.test(host);
  return false;
}

/**
 * Checks the service URL once, before anything is sent. Plain http to another machine would
 * put the bearer token on the wire in clear text, so it needs `allowInsecureHttp`.
 * Returns the URL with a trailing slash, ready to resolve relative paths against.
 */
export function checkBaseUrl(raw: string, allowInsecureHttp: boolean): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ClientConfigError('invalid_url', `Expected \`url\` to be an absolute http(s) URL, got ${JSON.stringify(raw)}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new ClientConfigError('invalid_url', `Expected \`url\` to use https (or http on loopback), got ${url.protocol}`);
  }
  if (url.username !== '' || url.password !== '') {
    // Never echo the URL here: it holds a credential.
    throw new ClientConfigError('invalid_url', 'The service URL must not carry a user name or password; use AMSYNC_TOKEN or AMSYNC_TOKEN_FILE');
  }
  if (url.search !== '' || url.hash !== '') {
    throw new ClientConfigError('invalid_url', `Expected \`url\` without query or fragment, got ${url.origin}${url.pathname}…`);
  }
  if (url.protocol === 'http:' && !allowInsecureHttp && !isLoopbackHost(url.hostname)) {
    throw new ClientConfigError(
      'insecure_http',
      `Refusing plain http to ${url.host}: the bearer token would cross the network unencrypted. Use https, or set allowInsecureHttp (--allow-insecure-http, AMSYNC_ALLOW_INSECURE_HTTP) if you must`,
    );
  }
  if (!url.pathname.endsWith('/')) url.pathname = `${url.pathname}/`;
  return url;
}
