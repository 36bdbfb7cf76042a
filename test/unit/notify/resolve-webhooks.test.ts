import { describe, expect, it } from 'vitest';
import { exitCodeFor, InvalidInputError } from '../../../src/errors.js';
import { resolveWebhooks, type WebhookContext } from '../../../src/notify/index.js';
import { scrub } from '../../../src/secrets/known-secrets.js';

const files: Record<string, string> = { '/keys/hook': 'file-key-canary-1\n' };
const ctx: WebhookContext = {
  env: { HOOK_KEY: 'env-key-canary-2', EMPTY: '' },
  readSecretFile: (path) => files[path] ?? Object.assign(new Error('no such file'), { code: 'ENOENT' }),
  baseDir: '/keys',
  allowInsecureHttp: false,
};

function failure(run: () => unknown): InvalidInputError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidInputError);
    return error as InvalidInputError;
  }
  throw new Error('expected an InvalidInputError');
}

describe('webhooks: keys by reference, read once, known secrets from then on', () => {
  it('a key from a variable or a file (relative to the settings folder); format and events kept', () => {
    const [a, b, c] = resolveWebhooks(
      [
        { url: 'https://hooks.example.com/a', secretEnv: 'HOOK_KEY' },
        { url: 'https://hooks.example.com/b', secretFile: 'hook', format: 'slack', events: ['failure'] },
        { url: 'http://127.0.0.1:8080/c' },
      ],
      ctx,
    );
    expect(a!.key!.reveal()).toBe('env-key-canary-2');
    expect(b!.key!.reveal()).toBe('file-key-canary-1');
    expect(b!.format).toBe('slack');
    expect([...b!.events!]).toEqual(['failure']);
    expect(c!.key).toBeUndefined();
    expect(c!.format).toBe('json');
    expect(c!.events).toBeUndefined();
    // Keys are scrubbed from every output from now on.
    expect(scrub('env-key-canary-2 file-key-canary-1')).toBe('[redacted] [redacted]');
  });

  it('a webhook is named by scheme, host and port only; its URL (often a credential itself) is scrubbed', () => {
    const [hook] = resolveWebhooks([{ url: 'https://hooks.slack.com/services/T000/B000/XXXXcanaryXXXX' }], ctx);
    expect(hook!.name).toBe('https://hooks.slack.com');
    expect(scrub('posting to https://hooks.slack.com/services/T000/B000/XXXXcanaryXXXX failed')).toBe('posting to [redacted] failed');
    expect(scrub('POST /services/T000/B000/XXXXcanaryXXXX')).toBe('POST [redacted]');
  });

  it('every problem of every webhook at once, exit 65, naming variables and files, never a key', () => {
    const error = failure(() =>
      resolveWebhooks(
        [
          { url: 'https://a.example.com/', secretEnv: 'UNSET_KEY' },
          { url: 'https://b.example.com/', secretEnv: 'EMPTY' },
          { url: 'https://c.example.com/', secretFile: 'missing' },
          { url: 'http://hooks.example.com/plain' },
          { url: 'https://user:pw@d.example.com/' },
        ],
        ctx,
      ),
    );
    expect(exitCodeFor(error)).toBe(65);
    expect(error.code).toBe('notify_invalid');
    expect(error.diagnostics.map((d) => [d.path, d.code])).toEqual([
      ['notify.webhooks[0].secretEnv', 'secret_env_unset'],
      ['notify.webhooks[1].secretEnv', 'secret_env_empty'],
      ['notify.webhooks[2].secretFile', 'secret_file_unreadable'],
      ['notify.webhooks[3].url', 'insecure_http'],
      ['notify.webhooks[4].url', 'invalid_url'],
    ]);
    expect(error.diagnostics[0]!.message).toBe('notify.webhooks[0].secretEnv: environment variable UNSET_KEY is not set');
    expect(error.diagnostics[2]!.message).toContain("cannot read secret file 'missing'");
  });

  it('plain http to another host is allowed with allowInsecureHttp', () => {
    expect(resolveWebhooks([{ url: 'http://hooks.example.com/plain' }], { ...ctx, allowInsecureHttp: true })).toHaveLength(1);
  });
});
