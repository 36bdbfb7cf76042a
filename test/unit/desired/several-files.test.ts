import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exitCodeFor, InvalidInputError } from '../../../src/errors.js';
import { desiredFilesOf, filesHash, loadDesired, type DesiredSource } from '../../../src/desired/index.js';

/**
 * DESIGN.md §10, issue 19 item 1: `-f` several times or a folder; each file owns the items it
 * declares, and an identity or a section written twice is an error naming both places.
 */

let dir: string;
const env = { PW: 'pw' };

function write(path: string, text: string): string {
  const full = join(dir, path);
  mkdirSync(join(full, '..'), { recursive: true });
  writeFileSync(full, text);
  return full;
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'amsync-files-'));
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function loadError(source: DesiredSource): Promise<InvalidInputError> {
  const error = await loadDesired(source, env).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(InvalidInputError);
  expect(exitCodeFor(error)).toBe(65);
  return error as InvalidInputError;
}

describe('a folder, or -f given several times, is one desired state', () => {
  it('reads every *.yaml and *.yml of a folder, sorted by name, and names each file as given', async () => {
    const teams = join(dir, 'teams1');
    write('teams1/ops.yaml', 'sshUsers:\n  - username: ops-1\n    password: { env: PW }\n');
    write('teams1/billing.yml', 'apikeys:\n  - name: billing\n');
    write('teams1/README.md', '# not read\n');
    write('teams1/.hidden.yaml', 'sshUsers: [not, read]\n');
    write('teams1/sub/deeper.yaml', 'sshUsers:\n  - username: deep\n    password: { env: PW }\n');
    expect(await desiredFilesOf({ paths: [teams] })).toEqual([join(teams, 'billing.yml'), join(teams, 'ops.yaml')]);
    const loaded = await loadDesired({ paths: [teams] }, env);
    expect(loaded.value.sshUsers.map((u) => u.username)).toEqual(['ops-1']);
    expect(loaded.value.apikeys.map((k) => k.name)).toEqual(['billing']);
    expect(loaded.value.sshUsers[0]!.source).toEqual({ file: join(teams, 'ops.yaml'), line: 2, col: 5 });
    expect(loaded.value.origin?.files).toEqual([join(teams, 'billing.yml'), join(teams, 'ops.yaml')]);
    expect(loaded.files.map((f) => f.hash)).toEqual([join(teams, 'billing.yml'), join(teams, 'ops.yaml')].map((f) => createHash('sha256').update(readFileSync(f)).digest('hex')));
    expect(loaded.fileHash).toBe(filesHash(loaded.files));
  });

  it('reads subfolders with recursive, skipping hidden ones (a ConfigMap volume\'s ..data)', async () => {
    const root = join(dir, 'cm');
    write('cm/..2025_01_01/a.yaml', 'sshUsers:\n  - username: a\n    password: { env: PW }\n');
    symlinkSync('..2025_01_01', join(root, '..data'));
    symlinkSync('..data/a.yaml', join(root, 'a.yaml'));
    write('cm/team/b.yaml', 'sshUsers:\n  - username: b\n    password: { env: PW }\n');
    const loaded = await loadDesired({ paths: [root], recursive: true }, env);
    expect(loaded.value.sshUsers.map((u) => u.username)).toEqual(['a', 'b']);
    expect(loaded.files.map((f) => f.file)).toEqual([join(root, 'a.yaml'), join(root, 'team', 'b.yaml')]);
  });

  it('one file given twice is read once; one file alone is exactly the single-file state (no origin)', async () => {
    const one = write('one/access.yaml', 'sshUsers:\n  - username: solo\n    password: { env: PW }\n');
    const twice = await loadDesired({ paths: [one, join(dir, 'one', '.', 'access.yaml')] }, env);
    expect(twice.files).toHaveLength(1);
    expect(twice.value.origin).toBeUndefined();
    const single = await loadDesired(one, env);
    expect(single.value).toEqual(twice.value);
    expect(single.fileHash).toBe(createHash('sha256').update(readFileSync(one)).digest('hex'));
  });

  it('a folder without a YAML file is an error (exit 65), not an empty state', async () => {
    mkdirSync(join(dir, 'empty'), { recursive: true });
    const error = await loadError({ paths: [join(dir, 'empty')] });
    expect(error.diagnostics[0]).toMatchObject({ code: 'no_desired_files' });
  });
});

describe('each file owns what it declares', () => {
  it('a username declared in two files is an error at the second, naming both file:line:col', async () => {
    const a = write('dup/a.yaml', 'sshUsers:\n  - username: alice\n    password: { env: PW }\n');
    const b = write('dup/b.yaml', 'apikeys: []\nsshUsers:\n  - username: bob\n    password: { env: PW }\n  - username: alice\n    password: { env: PW }\n');
    const error = await loadError({ paths: [a, b] });
    expect(error.diagnostics).toHaveLength(1);
    const d = error.diagnostics[0]!;
    expect(d).toMatchObject({ code: 'duplicate_identity', severity: 'error', position: { file: b, line: 5, col: 5 }, path: 'sshUsers[1].username' });
    expect(d.message).toContain(`${a}:2:5`);
    expect(d.message).toContain(`${b}:5:5`);
  });

  // Issue 29 item 3: one remote item can be renamed into one declared item only, whichever file declares it.
  it('two items in two files claiming one former name (renamedFrom) is an error naming both positions', async () => {
    const a = write('renamed/a.yaml', 'sshUsers:\n  - username: alice\n    renamedFrom: [old-ops]\n    password: { env: PW }\napikeys:\n  - name: ci-new\n    renamedFrom: [ci]\n');
    const b = write('renamed/b.yaml', 'sshUsers:\n  - username: bob\n    password: { env: PW }\n  - username: carol\n    renamedFrom: [old-ops]\n    password: { env: PW }\napikeys:\n  - name: ci-next\n    renamedFrom: [ci]\n');
    const error = await loadError({ paths: [a, b] });
    expect(error.diagnostics.map((d) => [d.code, d.path, d.position?.file, d.position?.line, d.position?.col])).toEqual([
      ['duplicate_identity', 'sshUsers[1].renamedFrom', b, 4, 5],
      ['duplicate_identity', 'apikeys[0].renamedFrom', b, 8, 5],
    ]);
    expect(error.diagnostics[0]!.message).toBe(`former username 'old-ops' (renamedFrom) is declared in two files, ${a}:2:5 and ${b}:4:5; each former username belongs to one file: remove one of them`);
    expect(error.diagnostics[1]!.message).toContain(`${a}:6:5 and ${b}:8:5`);
    // The positions are the two items'. One file alone is fine: the claim is across files.
    await expect(loadDesired({ paths: [a] }, env)).resolves.toBeDefined();
  });

  it('an apikey name, or a pinned id, in two files; apikeys that share a name with pinned ids are not', async () => {
    const a = write('keys/a.yaml', 'apikeys:\n  - name: ci\n  - name: twin\n    id: 7\n  - name: pinned\n    id: 9\n');
    const b = write('keys/b.yaml', 'apikeys:\n  - name: ci\n  - name: twin\n    id: 8\n  - name: other\n    id: 9\n');
    const error = await loadError({ paths: [a, b] });
    expect(error.diagnostics.map((d) => [d.path, d.position?.line])).toEqual([
      ['apikeys[0].name', 2],
      ['apikeys[2].id', 5],
    ]);
  });

  it('prune, protect and policy may each be written in one file only', async () => {
    const a = write('sections/a.yaml', 'prune:\n  sshUsers: true\nprotect:\n  sshUsers: [root]\npolicy:\n  superuser: approve\n');
    const b = write('sections/b.yaml', 'sshUsers:\n  - username: x\n    password: { env: PW }\nprune:\n  apikeys: true\n');
    const c = write('sections/c.yaml', 'policy: {}\n');
    const error = await loadError({ paths: [a, b, c] });
    expect(error.diagnostics.map((d) => [d.code, d.position?.file, d.position?.line])).toEqual([
      ['section_repeated', b, 4],
      ['section_repeated', c, 1],
    ]);
    expect(error.diagnostics[0]!.message).toBe(`prune: is written in two files, ${a}:1:1 and ${b}:4:1; it may be written in one file only`);
  });

  it('sections in different files are fine; the merged state takes each from its file and knows where it is', async () => {
    const a = write('owned/a.yaml', 'sshUsers:\n  - username: x\n    password: { env: PW }\nprune:\n  sshUsers: true\n');
    const b = write('owned/b.yaml', 'protect:\n  sshUsers: [root]\npolicy:\n  levels: [n1]\n');
    const loaded = await loadDesired({ paths: [a, b] }, env);
    expect(loaded.value.prune).toEqual({ sshUsers: true, apikeys: false });
    expect(loaded.value.protect.sshUsers).toEqual(['root']);
    expect(loaded.value.policy?.levels).toEqual(['n1']);
    expect(loaded.value.origin).toEqual({
      files: [a, b],
      prune: { file: a, line: 4, col: 1 },
      protect: { file: b, line: 1, col: 1 },
      policy: { file: b, line: 3, col: 1 },
    });
  });

  it("every file's own errors are reported together, each at its file:line:col", async () => {
    const a = write('errs/a.yaml', 'sshUsers:\n  - username: x\n    levl: n1\n');
    const b = write('errs/b.yaml', 'apikeys:\n  - name: k\n    superuser: maybe\n');
    const error = await loadError({ paths: [a, b] });
    expect(error.message).toBe('2 desired-state files do not make a valid desired state (2 errors); nothing was sent');
    expect(error.diagnostics.map((d) => `${d.position?.file === a ? 'a' : 'b'}:${d.position?.line}:${d.code}`)).toEqual(['a:3:unknown_key', 'b:3:invalid_type']);
  });
});
