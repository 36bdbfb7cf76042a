import nock from 'nock';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { createClient, type AmClient, type ClientOptions } from '../../src/api/index.js';
import { Secret } from '../../src/secrets/secret.js';

/**
 * Strict HTTP mocks (after renovate's test/http-mock.ts): no real network, and a test fails
 * on a request no interceptor matched or on an interceptor no request used.
 *
 * Call `useStrictHttpMock()` at the top of a test file, then mock with `service()`.
 */

/** A loopback address nothing listens on: plain http is allowed there, and nock answers. */
export const serviceUrl = 'http://127.0.0.1:9';

const unmatched: string[] = [];

function onNoMatch(request: { method?: string; href?: string; path?: string }): void {
  unmatched.push(`${request.method ?? '?'} ${request.href ?? request.path ?? '?'}`);
}

export function useStrictHttpMock(): void {
  beforeAll(() => {
    // Importing nock turns it on; an earlier file in this process may have turned it off (below).
    if (!nock.isActive()) nock.activate();
    nock.disableNetConnect();
    nock.emitter.on('no match', onNoMatch);
  });
  afterEach(() => {
    const pending = nock.pendingMocks();
    const done = nock.isDone();
    const missing = unmatched.splice(0);
    nock.abortPendingRequests();
    nock.cleanAll();
    if (missing.length > 0) throw new Error(`Requests no interceptor matched:\n${missing.join('\n')}`);
    if (!done || pending.length > 0) throw new Error(`Interceptors never used:\n${pending.join('\n')}`);
  });
  afterAll(() => {
    nock.emitter.removeListener('no match', onNoMatch);
    nock.enableNetConnect();
    // Test files share the process (vitest.config.ts): the files after this one talk to real
    // sockets, not through nock's interceptor.
    nock.restore();
  });
}

/** Interceptors for the mocked service. */
export function service(): nock.Scope {
  return nock(serviceUrl);
}

/** The bearer token of the mocked service; long and unique, so a leak is easy to find. */
export const testToken = 'canary-bearer-5f1c9e0a7d3b';

/**
 * A client for the mocked service with fast, deterministic retries (1 ms base, no jitter
 * surprises) and a generous start rate, so tests spend no time waiting on the limiter.
 */
export function mockClient(overrides: Partial<ClientOptions> = {}): AmClient {
  return createClient({
    url: serviceUrl,
    token: new Secret(testToken),
    initialRate: 1000,
    random: () => 0.5,
    timeoutMs: 2000,
    ...overrides,
    retry: { baseDelayMs: 1, maxDelayMs: 5, ...overrides.retry },
  });
}
