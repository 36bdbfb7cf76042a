import type { ApiErrorCode } from './api-error.js';
import { isTlsCause, networkCause } from './network-errors.js';
import type { AttemptFailure } from './retry-policy.js';

/** The code a failure ends with when it is not retried (or retries run out). Pure. */
export function errorCodeFor(failure: AttemptFailure): ApiErrorCode {
  if (failure.kind === 'timeout') return 'timeout';
  if (failure.kind === 'network') return isTlsCause(networkCause(failure.errorCode)) ? 'tls' : 'network';
  const { status } = failure;
  switch (status) {
    case 401:
      return 'unauthorized';
    case 403:
      return 'forbidden';
    case 404:
      return 'not_found';
    case 409:
      return 'conflict';
    case 429:
      return 'rate_limited';
    case 102:
    case 503:
      return 'unavailable';
    default:
      if (status >= 400 && status < 500) return 'bad_request';
      if (status >= 500 && status < 600) return 'server_error';
      return 'bad_response';
  }
}

const statusNames: Readonly<Record<number, string>> = {
  102: 'processing',
  400: 'bad request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not found',
  405: 'method not allowed',
  409: 'conflict',
  429: 'too many requests',
  500: 'internal server error',
  502: 'bad gateway',
  503: 'service unavailable',
  504: 'gateway timeout',
};

/** "503 service unavailable", "timed out connecting", "network error ECONNRESET". */
export function describeFailure(failure: AttemptFailure): string {
  if (failure.kind === 'timeout') return failure.sent ? 'timed out waiting for the answer' : 'timed out connecting';
  if (failure.kind === 'network') return `network error ${failure.errorCode}`;
  const name = statusNames[failure.status];
  return name === undefined ? `status ${failure.status}` : `${failure.status} ${name}`;
}
