import { isLoopbackHost } from './base-url.js';

/**
 * What a failure without an HTTP answer says about the service, read from its error code
 * (never from message text): it could not be found, nothing listened, it does not speak TLS,
 * or its certificate is not trusted. These concern the service as a whole, not one request.
 */
export type NetworkCause = 'refused' | 'dns' | 'unreachable' | 'tls' | 'certificate' | 'other';

const refusedCodes = new Set(['ECONNREFUSED']);
const dnsCodes = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NONAME', 'EAI_NODATA']);
const unreachableCodes = new Set(['EHOSTUNREACH', 'ENETUNREACH', 'EHOSTDOWN', 'EADDRNOTAVAIL']);
// OpenSSL's verification results as node reports them (tls.TLSSocket#authorizationError),
// plus node's own host name check.
const certificateCodes = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_GET_CRL',
  'UNABLE_TO_DECRYPT_CERT_SIGNATURE',
  'UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY',
  'CERT_SIGNATURE_FAILURE',
  'CERT_NOT_YET_VALID',
  'CERT_HAS_EXPIRED',
  'CERT_REVOKED',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'CERT_CHAIN_TOO_LONG',
  'INVALID_CA',
  'INVALID_PURPOSE',
  'PATH_LENGTH_EXCEEDED',
  'HOSTNAME_MISMATCH',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'ERR_TLS_CERT_ALTNAME_FORMAT',
]);

export function networkCause(errorCode: string): NetworkCause {
  if (refusedCodes.has(errorCode)) return 'refused';
  if (dnsCodes.has(errorCode)) return 'dns';
  if (unreachableCodes.has(errorCode)) return 'unreachable';
  if (certificateCodes.has(errorCode)) return 'certificate';
  // EPROTO is what a TLS handshake with a server that answers in plain text ends in.
  if (errorCode === 'EPROTO' || errorCode.startsWith('ERR_SSL_') || errorCode.startsWith('ERR_TLS_')) return 'tls';
  return 'other';
}

/** A TLS failure is a configuration to fix, never a passing fault: it is not retried. */
export function isTlsCause(cause: NetworkCause): boolean {
  return cause === 'tls' || cause === 'certificate';
}

/** The service amsync talks to, as far as a message about reaching it needs. */
export interface ServiceTarget {
  /** The checked base URL (trailing slash). */
  readonly url: URL;
  /** The private CA in use, if any (`--ca-file`). */
  readonly caFile?: string;
}

/** `http://127.0.0.1:8080`, `https://am.example.com/base`: the URL as a person typed it. */
export function displayUrl(url: URL): string {
  return `${url.origin}${url.pathname.replace(/\/$/, '')}`;
}

function defaultPort(url: URL): string {
  return url.port !== '' ? url.port : url.protocol === 'https:' ? '443' : '80';
}

function refusedHint(url: URL): string {
  if (isLoopbackHost(url.hostname)) return `is the emulator running? (amsync emulator --port ${defaultPort(url)})`;
  return 'is the service up, and is the URL right? (--url, AMSYNC_URL)';
}

function certificateProblem(errorCode: string, url: URL, caFile: string | undefined): string {
  const where = `TLS certificate of ${displayUrl(url)}`;
  const trustHint =
    caFile === undefined ? 'pass the CA that signed it with --ca-file (AMSYNC_CA_FILE)' : `the CA in --ca-file ${caFile} did not sign it; pass the one that did`;
  switch (errorCode) {
    case 'DEPTH_ZERO_SELF_SIGNED_CERT':
      return `${where} not trusted (self-signed): ${trustHint}`;
    case 'SELF_SIGNED_CERT_IN_CHAIN':
      return `${where} not trusted (its chain ends in a CA that is not trusted): ${trustHint}`;
    case 'UNABLE_TO_VERIFY_LEAF_SIGNATURE':
    case 'UNABLE_TO_GET_ISSUER_CERT':
    case 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY':
      return `${where} not trusted (issued by an unknown CA): ${trustHint}`;
    case 'CERT_HAS_EXPIRED':
      return `${where} has expired: the service must renew it (or this machine's clock is wrong)`;
    case 'CERT_NOT_YET_VALID':
      return `${where} is not valid yet: is this machine's clock right?`;
    case 'ERR_TLS_CERT_ALTNAME_INVALID':
    case 'HOSTNAME_MISMATCH':
      return `${where} is not issued for ${url.hostname}: use a host name the certificate names in --url`;
    default:
      return `${where} rejected (${errorCode}): ${trustHint}`;
  }
}

/**
 * One line that names the URL, what happened and what to try, for a failure that concerns the
 * service as a whole; undefined for any other failure. `tried` is "5 attempts in 1.9 s" or ''.
 * Pure.
 */
export function describeServiceFailure(errorCode: string, target: ServiceTarget, tried: string): string | undefined {
  const { url } = target;
  const shown = displayUrl(url);
  const attempts = tried === '' ? '' : `; ${tried}`;
  switch (networkCause(errorCode)) {
    case 'refused':
      return `nothing listens at ${shown} (connection refused${attempts}) — ${refusedHint(url)}`;
    case 'dns':
      if (errorCode === 'EAI_AGAIN') {
        return `cannot resolve ${url.hostname} of ${shown} right now (EAI_AGAIN, a temporary DNS failure${attempts}) — is DNS reachable from here?`;
      }
      return `cannot resolve ${url.hostname} of ${shown} (${errorCode}${attempts}) — is the host name right? (--url, AMSYNC_URL)`;
    case 'unreachable':
      return `no route to ${shown} (${errorCode}${attempts}) — is the network up, and is the URL right? (--url, AMSYNC_URL)`;
    case 'tls': {
      const plain = `http://${url.host}${url.pathname.replace(/\/$/, '')}`;
      const insecure = isLoopbackHost(url.hostname) ? '' : ' and --allow-insecure-http';
      return `TLS handshake with ${shown} failed (${errorCode}) — does it serve plain HTTP? Then use ${plain}${insecure}`;
    }
    case 'certificate':
      return certificateProblem(errorCode, url, target.caFile);
    case 'other':
      return undefined;
  }
}
