import { noFingerprints } from '../../../src/plan/index.js';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rename, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { executePlan } from '../../../src/apply/execute-plan.js';
import { plan } from '../../../src/plan/index.js';
import { Secret } from '../../../src/secrets/secret.js';
import { TokenFileError, TokenSink } from '../../../src/secrets/token-sink.js';
import { readActualState } from '../../../src/state/index.js';
import { StoreService } from '../../helpers/store-service.js';
import { desired, key, policyFor } from '../../helpers/plan-fixtures.js';

/**
 * Found by an adversarial run: a FIFO at tokensDir/<name> blocked `sync` forever (the sink read
 * the old file to compare it), and under the daemon a run never ended while health stayed
 * green. Token files are opened without following links and without blocking, and only a
 * regular file is compared and replaced.
 */

let dir: string;
let tokens: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'amsync-token-files-'));
  tokens = join(dir, 'tokens');
  await mkdir(tokens);
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const mkfifo = (path: string) => execFileSync('mkfifo', ['-m', '600', path]);

describe('the token sink opens token files only as regular files', () => {
  it('a FIFO is an error for that key, at once (no reader waits for a writer)', async () => {
    mkfifo(join(tokens, 'billing'));
    const error = await new TokenSink(tokens).write('billing', new Secret('tok-canary-1')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TokenFileError);
    expect(error).toMatchObject({ code: 'token_file', message: expect.stringContaining('is a FIFO (named pipe), not a regular file; its token was not written') });
    expect((error as Error).message).not.toContain('tok-canary-1');
  });

  it('a symbolic link is never followed, nor replaced', async () => {
    const target = join(dir, 'elsewhere');
    await writeFile(target, 'old');
    await symlink(target, join(tokens, 'billing'));
    await expect(new TokenSink(tokens).write('billing', new Secret('tok-2'))).rejects.toMatchObject({ code: 'token_file', message: expect.stringContaining('is a symbolic link') });
    expect(await readFile(target, 'utf8')).toBe('old');
  });

  it('a device behind a link and a folder are refused too', async () => {
    await symlink('/dev/zero', join(tokens, 'zero'));
    await expect(new TokenSink(tokens).write('zero', new Secret('t'))).rejects.toBeInstanceOf(TokenFileError);
    await mkdir(join(tokens, 'folder'));
    await expect(new TokenSink(tokens).write('folder', new Secret('t'))).rejects.toMatchObject({ message: expect.stringContaining('is a folder') });
  });

  it('a regular file is compared and replaced as before', async () => {
    await writeFile(join(tokens, 'billing'), 'tok-1');
    const sink = new TokenSink(tokens);
    expect(await sink.write('billing', new Secret('tok-1'))).toBe(false);
    expect(await sink.write('billing', new Secret('tok-2'))).toBe(true);
    expect(await readFile(join(tokens, 'billing'), 'utf8')).toBe('tok-2');
  });
});

describe('a sync with an unusable token file ends, and says which key', () => {
  async function sync(service: StoreService, d: ReturnType<typeof desired>) {
    const { state, tokens: listed } = await readActualState(service);
    const policy = policyFor(d);
    return executePlan({ plan: plan(d, state, policy), desired: d, actual: state, tokens: listed, policy, service, fingerprints: noFingerprints, tokenSink: new TokenSink(tokens) });
  }

  it('a key without changes: reported in tokenErrors; the other keys still get their files', async () => {
    const s = new StoreService();
    s.seedKey('billing', [1]);
    const monitor = s.seedKey('monitor', [1]);
    mkfifo(join(tokens, 'billing'));
    const outcome = await sync(s, desired({ apikeys: [key('billing', { roles: [1] }), key('monitor', { roles: [1] })] }));
    expect(outcome.tokenErrors).toEqual([{ key: 'billing', error: expect.stringContaining('is a FIFO') }]);
    expect(await readFile(join(tokens, 'monitor'), 'utf8')).toBe(`tok-${monitor}`);
  });

  it('a key created in this run: the create is applied (the service has the key) and its token file is reported in tokenErrors', async () => {
    // Issue 27: what is reported applied is what the service received. It was reported failed,
    // so the summary said the key was not created although the service held it.
    const s = new StoreService();
    mkfifo(join(tokens, 'deploy-key'));
    const { results, tokenErrors } = await sync(s, desired({ apikeys: [key('deploy-key', { roles: [1] })] }));
    expect(results).toEqual([expect.objectContaining({ action: 'create', status: 'applied' })]);
    expect((await s.listApikeys()).map((k) => k.name)).toEqual(['deploy-key']);
    expect(tokenErrors).toEqual([{ key: 'deploy-key', error: expect.stringContaining('is a FIFO (named pipe), not a regular file; its token was not written') }]);
  });
});

describe('the token files of many keys are kept current at once', () => {
  it('a current file is left as it is; a missing or stale one is written', async () => {
    await writeFile(join(tokens, 'current'), 'tok-current');
    await writeFile(join(tokens, 'stale'), 'tok-old');
    const before = await stat(join(tokens, 'current'));
    const kept = await new TokenSink(tokens).keepCurrent([
      { name: 'current', token: new Secret('tok-current') },
      { name: 'stale', token: new Secret('tok-new') },
      { name: 'missing', token: new Secret('tok-missing') },
      { name: 'with space/and slash', token: new Secret('tok-odd') },
    ]);
    expect(kept).toEqual({ written: 3, errors: [] });
    const after = await stat(join(tokens, 'current'));
    expect([after.ino, after.mtimeMs]).toEqual([before.ino, before.mtimeMs]);
    expect(await readFile(join(tokens, 'stale'), 'utf8')).toBe('tok-new');
    expect(await readFile(join(tokens, 'missing'), 'utf8')).toBe('tok-missing');
    expect(await readFile(join(tokens, 'with%20space%2Fand%20slash'), 'utf8')).toBe('tok-odd');
  });

  it('a FIFO, a link or a folder is an error for its key only, and nothing is written there', async () => {
    mkfifo(join(tokens, 'fifo'));
    const target = join(dir, 'elsewhere');
    await writeFile(target, 'old');
    await symlink(target, join(tokens, 'link'));
    await mkdir(join(tokens, 'folder'));
    const kept = await new TokenSink(tokens).keepCurrent(
      ['fifo', 'link', 'folder', 'fine'].map((name) => ({ name, token: new Secret(`tok-${name}`) })),
    );
    expect(kept.written).toBe(1);
    expect(kept.errors.map((e) => [e.name, e.error.message.match(/is (a FIFO|a symbolic link|a folder)/)?.[1]]).sort()).toEqual([
      ['fifo', 'a FIFO'],
      ['folder', 'a folder'],
      ['link', 'a symbolic link'],
    ]);
    expect(await readFile(target, 'utf8')).toBe('old');
    expect(await readFile(join(tokens, 'fine'), 'utf8')).toBe('tok-fine');
  });

  it('a folder that does not exist yet is created with the files', async () => {
    const fresh = join(dir, 'new-tokens');
    const kept = await new TokenSink(fresh).keepCurrent([{ name: 'k', token: new Secret('tok-k') }]);
    expect(kept).toEqual({ written: 1, errors: [] });
    expect(await readFile(join(fresh, 'k'), 'utf8')).toBe('tok-k');
  });

  it('thousands of current files: none is written again', async () => {
    const files = Array.from({ length: 2000 }, (_, i) => ({ name: `key-${i}`, token: new Secret(`tok-${i}`) }));
    for (const f of files) await writeFile(join(tokens, f.name), f.token.reveal());
    await writeFile(join(tokens, 'key-1500'), 'changed');
    const kept = await new TokenSink(tokens).keepCurrent(files);
    expect(kept).toEqual({ written: 1, errors: [] });
    expect(await readFile(join(tokens, 'key-1500'), 'utf8')).toBe('tok-1500');
  });
});

describe('a token file that did not change since amsync saw it hold its token is not read again', () => {
  const index = () => join(tokens, '.amsync~index');

  it('the files amsync writes are remembered; a run with nothing to do leaves them and the index as they are', async () => {
    const files = ['a', 'b', 'c'].map((name) => ({ name, token: new Secret(`tok-${name}`) }));
    expect(await new TokenSink(tokens).keepCurrent(files)).toEqual({ written: 3, errors: [] });
    const remembered = await readFile(index(), 'utf8');
    // A line per file: a hash of its name, inode, size, times and token; neither a name nor a token.
    expect(remembered.trim().split('\n').slice(1)).toHaveLength(3);
    expect(remembered).not.toMatch(/tok-|\ba\b|\bb\b|\bc\b/);
    const before = await stat(index());
    expect(await new TokenSink(tokens).keepCurrent(files)).toEqual({ written: 0, errors: [] });
    const after = await stat(index());
    expect([after.ino, after.mtimeMs]).toEqual([before.ino, before.mtimeMs]);
  });

  it('a file edited, deleted or replaced since is read again and repaired; a rotated token is written', async () => {
    const sink = new TokenSink(tokens);
    const files = ['edited', 'deleted', 'replaced', 'rotated'].map((name) => ({ name, token: new Secret(`tok-${name}`) }));
    await sink.keepCurrent(files);
    // Another size: within the same tick of the clock as amsync's own write, times alone could not tell (see keepCurrent).
    await writeFile(join(tokens, 'edited'), 'tok-edited-by-hand');
    await rm(join(tokens, 'deleted'));
    await writeFile(join(tokens, 'replaced.tmp'), 'other');
    await rename(join(tokens, 'replaced.tmp'), join(tokens, 'replaced'));
    const rotated = files.map((f) => (f.name === 'rotated' ? { name: 'rotated', token: new Secret('tok-rotated-2') } : f));
    expect(await sink.keepCurrent(rotated)).toEqual({ written: 4, errors: [] });
    for (const f of rotated) expect(await readFile(join(tokens, f.name), 'utf8')).toBe(f.token.reveal());
  });

  it('an index that is not one amsync wrote is ignored, and no key can be given its name', async () => {
    await writeFile(index(), 'not an index\nedited\tforged\n');
    await writeFile(join(tokens, 'edited'), 'wrong');
    expect(await new TokenSink(tokens).keepCurrent([{ name: 'edited', token: new Secret('tok-right') }])).toEqual({ written: 1, errors: [] });
    expect(await readFile(join(tokens, 'edited'), 'utf8')).toBe('tok-right');
    expect(new TokenSink(tokens).pathFor('.amsync~index')).toBe(join(tokens, '.amsync%7Eindex'));
  });
});
