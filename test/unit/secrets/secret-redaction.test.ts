import { Console } from 'node:console';
import { Writable } from 'node:stream';
import { format, inspect } from 'node:util';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/obs/logger.js';
import { Secret } from '../../../src/secrets/secret.js';
import { everyEncoding } from '../../helpers/encodings.js';

const canary = 'canary-7f3a9c-secret-value';

/** A stream that keeps what is written to it, to read logs the way pino's own tests do. */
function sink(): { stream: Writable; text: () => string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer | string, _enc, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  return { stream, text: () => chunks.join('') };
}

describe('a Secret never prints', () => {
  const secret = new Secret(canary);

  it('reveal() is the only way to the value', () => {
    expect(secret.reveal()).toBe(canary);
    expect(Object.keys(secret)).toEqual([]);
    expect(Object.getOwnPropertyNames(secret)).toEqual([]);
  });

  it('console.log (util.inspect), alone and nested', () => {
    const out = sink();
    const console = new Console({ stdout: out.stream, stderr: out.stream });
    console.log(secret);
    console.log({ user: 'deploy', password: secret, nested: { list: [secret] } });
    console.log('%s %o %O %j', secret, secret, { secret }, { secret });
    console.error(secret);
    expect(out.text()).not.toContain(canary);
    expect(out.text()).toContain('[redacted]');
    expect(inspect(secret, { showHidden: true, depth: 10 })).toBe('[redacted]');
    expect(inspect({ a: { b: { c: secret } } }, { depth: Infinity })).not.toContain(canary);
    expect(format('%s', secret)).toBe('[redacted]');
  });

  it('JSON.stringify', () => {
    expect(JSON.stringify(secret)).toBe('"[redacted]"');
    expect(JSON.stringify({ password: secret, list: [secret] })).toBe('{"password":"[redacted]","list":["[redacted]"]}');
  });

  it('template strings, concatenation and String()', () => {
    expect(`${secret}`).toBe('[redacted]');
    expect('pw=' + secret).toBe('pw=[redacted]');
    expect(String(secret)).toBe('[redacted]');
    expect(secret.toString()).toBe('[redacted]');
  });

  it('error messages and stacks built from it', () => {
    const error = new Error(`login failed for ${secret}`, { cause: { secret } });
    expect(error.message).not.toContain(canary);
    expect(inspect(error)).not.toContain(canary);
  });

  it('pino, under a key pino does not redact on its own', () => {
    const out = sink();
    const log = pino({ level: 'trace' }, out.stream);
    log.info({ value: secret, nested: { deeper: [secret] } }, 'message');
    log.info('interpolated %s and %o and %j', secret, secret, { secret });
    log.child({ bound: secret }).warn('from a child');
    log.error(new Error(`with ${secret}`));
    expect(out.text()).not.toContain(canary);
    expect(out.text()).toContain('[redacted]');
  });

  it("amsync's own logger (createLogger with a sink)", () => {
    const out = sink();
    const log = createLogger({ level: 'trace', destination: out.stream });
    log.debug({ secret, body: { password: secret, token: secret } }, 'request');
    expect(out.text()).not.toContain(canary);
  });

  it("amsync's logger scrubs a known secret that reached a log line as plain text, in any encoding", () => {
    const password = 'q"u\\oé log-canary';
    new Secret(password);
    const out = sink();
    const log = createLogger({ level: 'trace', destination: out.stream });
    const echoed = everyEncoding(password);
    log.warn({ body: `{"password":${JSON.stringify(password)}}`, query: `pw=${echoed.form}` }, `the service said ${echoed.jsonAsciiUpper} and ${echoed.url}`);
    const text = out.text();
    expect(Object.values(echoed).filter((form) => text.includes(form))).toEqual([]);
    expect(JSON.parse(text)).toMatchObject({ body: '{"password":"[redacted]"}', query: 'pw=[redacted]', msg: 'the service said [redacted] and [redacted]' });
  });
});
