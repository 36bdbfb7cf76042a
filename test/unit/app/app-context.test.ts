import { describe, expect, it } from 'vitest';
import { AppContextError, AuditTrail, createAppContext, type AppDeps } from '../../../src/app/index.js';
import type { AmClient } from '../../../src/api/index.js';
import type { HeldLock } from '../../../src/apply/index.js';
import { Notifier } from '../../../src/notify/index.js';
import { createLogger } from '../../../src/obs/index.js';
import { TokenSink, type PasswordState } from '../../../src/secrets/index.js';
import { defaultSettings, type Settings } from '../../../src/settings/index.js';

/**
 * The application context is built once from what it is given, and refuses, loudly, a
 * dependency that is missing or contradicts the settings: a sink without tokensDir, an audit
 * log without auditLog (or for another target), webhooks and no notifier. Without the check
 * such a context drops tokens, audit lines or notifications without a word.
 */

const logger = createLogger({ level: 'silent', destination: { write: () => true }, pretty: false, colorize: false });
const unused = (what: string) => () => {
  throw new Error(`${what} is not used by these tests`);
};

function deps(over: Partial<AppDeps> = {}, settings: Partial<Settings> = {}): AppDeps {
  return {
    settings: { ...defaultSettings, url: 'http://127.0.0.1:9', ...settings },
    source: { paths: ['access.yaml'] },
    env: {},
    logger,
    client: { open: unused('the client') as () => AmClient, opened: undefined },
    passwordState: unused('the password state') as () => Promise<PasswordState>,
    writerLock: unused('the writer lock') as () => Promise<HeldLock>,
    tokenSink: undefined,
    audit: undefined,
    notifier: undefined,
    lateCreate: { waitsMs: [] },
    ...over,
  };
}

const webhook = { url: 'https://hooks.example/amsync', events: ['failure' as const], format: 'json' as const };

function notifier(): Notifier {
  return new Notifier({ webhooks: [], queueSize: 1, timeoutMs: 1, maxAttempts: 1, revision: null });
}

const refusal = (d: AppDeps) => () => createAppContext(d);

describe('createAppContext', () => {
  it('builds a context from consistent dependencies, and hands them out as given', () => {
    const sink = new TokenSink('/tmp/amsync-tokens');
    const audit = new AuditTrail('/tmp/amsync-audit.jsonl', {}, logger, 'sp-1');
    const context = createAppContext(deps({ tokenSink: sink, audit, target: 'sp-1' }, { tokensDir: '/tmp/amsync-tokens', auditLog: '/tmp/amsync-audit.jsonl' }));
    expect(context.tokenSink()).toBe(sink);
    expect(context.auditTrail()).toBe(audit);
    expect(context.file).toBe('access.yaml');
    expect(context.onWire()).toBe(0);
  });

  it.each(['settings', 'source', 'env', 'logger', 'client', 'passwordState', 'writerLock', 'lateCreate'] as const)('refuses a context without %s', (name) => {
    const d = { ...deps(), [name]: undefined } as unknown as AppDeps;
    expect(refusal(d)).toThrow(new AppContextError(`the application context cannot be made: ${name} is missing`));
  });

  it('refuses tokensDir without a token sink, and a token sink without tokensDir', () => {
    expect(refusal(deps({}, { tokensDir: '/tmp/t' }))).toThrow('tokensDir is set and no token sink was given');
    expect(refusal(deps({ tokenSink: new TokenSink('/tmp/t') }))).toThrow('a token sink was given and tokensDir is not set');
  });

  it('refuses auditLog without an audit trail, and an audit trail without auditLog', () => {
    expect(refusal(deps({}, { auditLog: '/tmp/a.jsonl' }))).toThrow('auditLog is set and no audit trail was given');
    expect(refusal(deps({ audit: new AuditTrail('/tmp/a.jsonl', {}, logger) }))).toThrow('an audit trail was given and auditLog is not set');
  });

  it('refuses an audit trail that writes for another target than the context serves', () => {
    const settings = { auditLog: '/tmp/a.jsonl' };
    expect(refusal(deps({ audit: new AuditTrail('/tmp/a.jsonl', {}, logger, 'sp-2'), target: 'sp-1' }, settings))).toThrow(
      'the audit trail writes for target sp-2 and the context serves target sp-1',
    );
    expect(refusal(deps({ audit: new AuditTrail('/tmp/a.jsonl', {}, logger), target: 'sp-1' }, settings))).toThrow('the audit trail writes for no target and the context serves target sp-1');
  });

  it('refuses webhooks without a notifier, a notifier without webhooks, and a shared notifier that is not there', () => {
    const notify = { ...defaultSettings.notify, webhooks: [webhook] } as Settings['notify'];
    expect(refusal(deps({}, { notify }))).toThrow('notify.webhooks is set and no notifier was given');
    expect(refusal(deps({ notifier: notifier() }))).toThrow('a notifier was given and notify.webhooks is not set');
    expect(refusal(deps({ sharedNotifier: true }))).toThrow('sharedNotifier is set and no notifier was given');
  });
});
