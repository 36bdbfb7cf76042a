import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import picomatch from 'picomatch';
import { describe, expect, it } from 'vitest';
import mainConfig from '../../vitest.config.js';
import slowConfig from '../../vitest.slow.config.js';
import chaosConfig from '../../vitest.chaos.config.js';
import { root } from '../helpers/paths.js';

const folders = (dir: string): string[] =>
  readdirSync(join(root, dir), { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();

function testFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' || e.name.startsWith('harness-') ? [] : testFiles(path);
    return e.name.endsWith('.test.ts') ? [path] : [];
  });
}

interface ProjectTest {
  readonly name?: string;
  readonly include?: string[];
  readonly exclude?: string[];
}

/** Each vitest project of the three configs, by name, with what it includes. */
function projects(): ProjectTest[] {
  const main = (mainConfig.test?.projects ?? []) as { test: ProjectTest }[];
  return [...main.map((p) => p.test), slowConfig.test as ProjectTest, { ...(chaosConfig.test as ProjectTest), name: 'chaos' }];
}

const matches = (project: ProjectTest, file: string): boolean =>
  picomatch(project.include ?? [])(file) && !picomatch(project.exclude ?? [])(file);

describe('the test tree mirrors src/', () => {
  it('each src folder has a folder of unit tests with at least one test, and test/unit has no other folder', () => {
    const src = folders('src');
    const unit = folders('test/unit');
    expect(unit).toEqual(src);
    for (const folder of src) expect(testFiles(join('test', 'unit', folder)).length, `test/unit/${folder}/ has no test`).toBeGreaterThan(0);
  });

  it('every test file belongs to exactly one of the projects unit, e2e, own-process, slow, chaos', () => {
    const all = projects();
    for (const file of testFiles('test').map((f) => relative('.', f))) {
      const owners = all.filter((p) => matches(p, file)).map((p) => p.name);
      // The full chaos run takes the subset too when a seed is replayed (CHAOS_SEED); here it is not.
      expect(owners, file).toHaveLength(1);
    }
  });

  it('npm test runs unit and e2e; the slow project holds the install, the small benchmark and the chaos subset', () => {
    const byName = new Map(projects().map((p) => [p.name, p]));
    expect(matches(byName.get('unit')!, 'test/unit/api/paginate.test.ts')).toBe(true);
    expect(matches(byName.get('e2e')!, 'test/e2e/sync-cli.test.ts')).toBe(true);
    for (const file of ['test/slow/install.test.ts', 'test/bench/bench-small.test.ts', 'test/chaos/cli-schedules.test.ts']) expect(matches(byName.get('slow')!, file), file).toBe(true);
    expect(matches(byName.get('chaos')!, 'test/chaos/full/cli-schedules-1.test.ts')).toBe(true);
  });
});
