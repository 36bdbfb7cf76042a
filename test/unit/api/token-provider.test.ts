import { describe, expect, it } from 'vitest';
import { TokenProvider } from '../../../src/api/token-provider.js';
import { Secret } from '../../../src/secrets/secret.js';

function fakeFile(initial: string): { read: (path: string) => Promise<string>; reads: () => number; set: (value: string) => void } {
  let content = initial;
  let count = 0;
  return {
    read: async () => {
      count += 1;
      await Promise.resolve();
      return content;
    },
    reads: () => count,
    set: (value) => {
      content = value;
    },
  };
}

describe('the token provider', () => {
  it('reads the file once and trims it', async () => {
    const file = fakeFile('abc-token\n');
    const provider = new TokenProvider({ tokenFile: 'token' }, file.read);
    expect((await provider.current('GET', '/p', '/p')).token.reveal()).toBe('abc-token');
    await provider.current('GET', '/p', '/p');
    expect(file.reads()).toBe(1);
  });

  it('re-reads once for many requests that got a 401 together', async () => {
    const file = fakeFile('old-token');
    const provider = new TokenProvider({ tokenFile: 'token' }, file.read);
    const { generation } = await provider.current('GET', '/p', '/p');
    file.set('new-token');
    const results = await Promise.all(Array.from({ length: 5 }, () => provider.refresh(generation, 'GET', '/p', '/p')));
    expect(results).toEqual([true, true, true, true, true]);
    expect(file.reads()).toBe(2);
    expect((await provider.current('GET', '/p', '/p')).token.reveal()).toBe('new-token');
  });

  it('reports no new token when the file is unchanged', async () => {
    const file = fakeFile('same-token');
    const provider = new TokenProvider({ tokenFile: 'token' }, file.read);
    const { generation } = await provider.current('GET', '/p', '/p');
    await expect(provider.refresh(generation, 'GET', '/p', '/p')).resolves.toBe(false);
  });

  it('a direct token is used first; the file is the fallback after a 401', async () => {
    const file = fakeFile('file-token');
    const provider = new TokenProvider({ token: new Secret('env-token'), tokenFile: 'token' }, file.read);
    const first = await provider.current('GET', '/p', '/p');
    expect(first.token.reveal()).toBe('env-token');
    expect(file.reads()).toBe(0);
    await expect(provider.refresh(first.generation, 'GET', '/p', '/p')).resolves.toBe(true);
    expect((await provider.current('GET', '/p', '/p')).token.reveal()).toBe('file-token');
  });

  it('remembers every token value it has seen, for scrubbing', async () => {
    const file = fakeFile('first-token');
    const provider = new TokenProvider({ tokenFile: 'token' }, file.read);
    const { generation } = await provider.current('GET', '/p', '/p');
    file.set('second-token');
    await provider.refresh(generation, 'GET', '/p', '/p');
    expect(provider.knownValues).toEqual(['first-token', 'second-token']);
  });
});
