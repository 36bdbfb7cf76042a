import { describe, expect, it } from 'vitest';
import { checkBaseUrl, isLoopbackHost } from '../../../src/api/base-url.js';

describe('loopback hosts', () => {
  it.each(['127.0.0.1', '127.255.0.9', 'localhost', 'LOCALHOST', 'localhost.', 'api.localhost', '[::1]', '::1'])('%s is loopback', (host) => {
    expect(isLoopbackHost(host)).toBe(true);
  });
  it.each(['128.0.0.1', '10.0.0.1', '127.example.com', 'example.com', '[::2]', '0.0.0.0'])('%s is not', (host) => {
    expect(isLoopbackHost(host)).toBe(false);
  });
});

describe('checkBaseUrl', () => {
  it('adds a trailing slash so relative paths resolve under it', () => {
    expect(checkBaseUrl('https://am.example.com/base', false).href).toBe('https://am.example.com/base/');
  });
  it.each([
    ['not a url', 'invalid_url'],
    ['ftp://am.example.com', 'invalid_url'],
    ['https://am.example.com/?x=1', 'invalid_url'],
    ['http://am.example.com', 'insecure_http'],
  ])('%s is refused as %s', (url, code) => {
    expect(() => checkBaseUrl(url, false)).toThrow(expect.objectContaining({ code }));
  });
});
