import { describe, expect, it } from 'vitest';
import { describeServiceFailure, displayUrl, networkCause } from '../../../src/api/network-errors.js';

const local = { url: new URL('http://127.0.0.1:8080/') };
const remote = { url: new URL('https://am.example.com/base/') };

describe('a failure to reach the service is one line: the URL, what happened, what to try', () => {
  it.each([
    ['ECONNREFUSED', local, '5 attempts in 1.9 s', 'nothing listens at http://127.0.0.1:8080 (connection refused; 5 attempts in 1.9 s) — is the emulator running? (amsync emulator --port 8080)'],
    ['ECONNREFUSED', remote, '', 'nothing listens at https://am.example.com/base (connection refused) — is the service up, and is the URL right? (--url, AMSYNC_URL)'],
    ['ENOTFOUND', remote, '', 'cannot resolve am.example.com of https://am.example.com/base (ENOTFOUND) — is the host name right? (--url, AMSYNC_URL)'],
    ['EAI_AGAIN', remote, '3 attempts in 1.5 s', 'cannot resolve am.example.com of https://am.example.com/base right now (EAI_AGAIN, a temporary DNS failure; 3 attempts in 1.5 s) — is DNS reachable from here?'],
    ['EHOSTUNREACH', remote, '', 'no route to https://am.example.com/base (EHOSTUNREACH) — is the network up, and is the URL right? (--url, AMSYNC_URL)'],
    ['EPROTO', { url: new URL('https://127.0.0.1:8080/') }, '', 'TLS handshake with https://127.0.0.1:8080 failed (EPROTO) — does it serve plain HTTP? Then use http://127.0.0.1:8080'],
    ['EPROTO', remote, '', 'TLS handshake with https://am.example.com/base failed (EPROTO) — does it serve plain HTTP? Then use http://am.example.com/base and --allow-insecure-http'],
    ['CERT_HAS_EXPIRED', remote, '', "TLS certificate of https://am.example.com/base has expired: the service must renew it (or this machine's clock is wrong)"],
    ['CERT_NOT_YET_VALID', remote, '', "TLS certificate of https://am.example.com/base is not valid yet: is this machine's clock right?"],
    ['SELF_SIGNED_CERT_IN_CHAIN', remote, '', 'TLS certificate of https://am.example.com/base not trusted (its chain ends in a CA that is not trusted): pass the CA that signed it with --ca-file (AMSYNC_CA_FILE)'],
    ['CERT_REVOKED', remote, '', 'TLS certificate of https://am.example.com/base rejected (CERT_REVOKED): pass the CA that signed it with --ca-file (AMSYNC_CA_FILE)'],
  ] as const)('%s at %j', (code, target, tried, expected) => {
    expect(describeServiceFailure(code, target, tried)).toBe(expected);
  });

  it.each(['ECONNRESET', 'ETIMEDOUT', 'ERR_UNKNOWN'])('%s is about one request, not the service: no such line', (code) => {
    expect(describeServiceFailure(code, local, '')).toBeUndefined();
    expect(networkCause(code)).toBe('other');
  });

  it('shows the URL as typed: no trailing slash', () => {
    expect(displayUrl(new URL('http://127.0.0.1:1/'))).toBe('http://127.0.0.1:1');
    expect(displayUrl(new URL('https://h/x/'))).toBe('https://h/x');
  });
});
