import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../../src/errors.js';
import { loadSettings } from '../../../src/settings/load-settings.js';
import { defaultSettings } from '../../../src/settings/index.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'amsync-notify-settings-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function settingsFile(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

async function problems(file: string): Promise<string[]> {
  const error = await loadSettings({ settingsFile: file, env: {} }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(InvalidInputError);
  return (error as InvalidInputError).diagnostics.map((d) => d.message);
}

describe('auditLog: off until set', () => {
  it('has no default, and AMSYNC_AUDIT_LOG sets it', async () => {
    expect(defaultSettings.auditLog).toBeUndefined();
    expect((await loadSettings({ env: { AMSYNC_AUDIT_LOG: 'audit/amsync.jsonl' } })).auditLog).toBe('audit/amsync.jsonl');
  });

  it("in a settings file it is relative to the file's folder", async () => {
    const settings = await loadSettings({ settingsFile: settingsFile('audit.yaml', 'auditLog: logs/audit.jsonl\n'), env: {} });
    expect(settings.auditLog).toBe(join(dir, 'logs/audit.jsonl'));
  });
});

describe('notify: webhooks with their keys by reference', () => {
  it('a webhook list replaces the default; the other notify keys keep theirs', async () => {
    const file = settingsFile(
      'hooks.yaml',
      [
        'notify:',
        '  webhooks:',
        '    - url: https://hooks.example.com/amsync',
        '      secretEnv: AMSYNC_WEBHOOK_KEY',
        '    - url: https://hooks.example.com/slack',
        '      format: slack',
        '      secretFile: keys/slack',
        '      events: [failure, approvals_pending]',
        '  queueSize: 50',
        '',
      ].join('\n'),
    );
    const settings = await loadSettings({ settingsFile: file, env: {} });
    expect(settings.notify).toEqual({
      webhooks: [
        { url: 'https://hooks.example.com/amsync', secretEnv: 'AMSYNC_WEBHOOK_KEY' },
        { url: 'https://hooks.example.com/slack', format: 'slack', secretFile: join(dir, 'keys/slack'), events: ['failure', 'approvals_pending'] },
      ],
      queueSize: 50,
      timeoutMs: defaultSettings.notify.timeoutMs,
      maxAttempts: defaultSettings.notify.maxAttempts,
    });
  });

  it('a key written in the file is refused, pointing at secretEnv and secretFile', async () => {
    const messages = await problems(settingsFile('literal.yaml', 'notify:\n  webhooks:\n    - url: https://hooks.example.com/x\n      secret: s3cr3t-canary\n'));
    expect(messages.join('\n')).toContain('name the environment variable holding it with secretEnv');
    expect(messages.join('\n')).not.toContain('s3cr3t-canary');
  });

  it('a key named twice, an unknown event, a bad format and a bad URL are refused', async () => {
    const messages = await problems(
      settingsFile(
        'bad-hooks.yaml',
        [
          'notify:',
          '  webhooks:',
          '    - url: https://a.example.com/',
          '      secretEnv: KEY',
          '      secretFile: key',
          '    - url: https://b.example.com/',
          '      events: [drift]',
          '    - url: https://c.example.com/',
          '      format: teams',
          '    - url: ftp://d.example.com/',
          '  queueSize: 0',
          '',
        ].join('\n'),
      ),
    );
    expect(messages).toHaveLength(5);
    expect(messages.join('\n')).toContain('secretEnv or secretFile, not both');
  });
});
