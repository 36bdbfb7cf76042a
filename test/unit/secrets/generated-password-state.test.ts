import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Secret } from '../../../src/secrets/secret.js';
import { openPasswordState } from '../../../src/secrets/state-file.js';
import { TokenSink } from '../../../src/secrets/token-sink.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'amsync-genstate-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('generated passwords in the state file and the sink', () => {
  it('records when each was set (and whether it was lost), merges with another run, forgets with the user', async () => {
    const path = join(dir, 'state.json');
    const a = await openPasswordState({ path, serviceUrl: 'http://a', keyFromEnv: 'k' });
    const b = await openPasswordState({ path, serviceUrl: 'http://a', keyFromEnv: 'k' });
    a.record(1, 'fp1');
    a.recordGenerated!(1, { setAt: Date.UTC(2026, 0, 1) });
    await a.save();
    b.recordGenerated!(2, { setAt: Date.UTC(2026, 0, 2), lost: true });
    await b.save();
    const doc = JSON.parse(await readFile(path, 'utf8')) as { services: Record<string, { generatedPasswords?: Record<string, unknown> }> };
    expect(doc.services['http://a']!.generatedPasswords).toEqual({ '1': { setAt: '2026-01-01T00:00:00.000Z' }, '2': { setAt: '2026-01-02T00:00:00.000Z', lost: true } });
    const read = await openPasswordState({ path, serviceUrl: 'http://a', keyFromEnv: 'k' });
    expect([...read.generated!]).toEqual([
      ['1', { setAt: Date.UTC(2026, 0, 1) }],
      ['2', { setAt: Date.UTC(2026, 0, 2), lost: true }],
    ]);
    read.forget(1);
    await read.save();
    const after = await openPasswordState({ path, serviceUrl: 'http://a', keyFromEnv: 'k' });
    expect([...after.generated!.keys()]).toEqual(['2']);
    expect(after.applied.has('1')).toBe(false);
  });

  it('a state file of a run without generated passwords has no generatedPasswords key (its bytes are what they were)', async () => {
    const path = join(dir, 'state.json');
    const s = await openPasswordState({ path, serviceUrl: 'http://a', keyFromEnv: 'k' });
    s.record(1, 'fp1');
    await s.save();
    expect(await readFile(path, 'utf8')).toBe('{\n  "version": 1,\n  "services": {\n    "http://a": {\n      "sshUserPasswords": {\n        "1": "fp1"\n      }\n    }\n  }\n}\n');
  });

  it('the password sink is tokensDir/passwords~/<username>, 0600, and cannot collide with a key named "passwords"', async () => {
    const tokens = new TokenSink(join(dir, 'tokens'));
    await tokens.write('passwords', new Secret('token-of-a-key-named-passwords'));
    const sink = tokens.passwordSink();
    await sink.write('alice', new Secret('generated-Pw-1!'));
    expect(await readFile(join(dir, 'tokens', 'passwords~', 'alice'), 'utf8')).toBe('generated-Pw-1!');
    expect(await sink.read('alice')).toBe('generated-Pw-1!');
    expect(await sink.read('bob')).toBeUndefined();
    expect(await readFile(join(dir, 'tokens', 'passwords'), 'utf8')).toBe('token-of-a-key-named-passwords');
  });
});
