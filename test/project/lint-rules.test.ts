import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { cruise } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';
import { ESLint } from 'eslint';
import { afterAll, describe, expect, it } from 'vitest';
import { root } from '../helpers/paths.js';

/**
 * `npm run lint` is what keeps the layout of DESIGN.md §2: these plant the mistakes it must
 * catch (a folder reached around its index.ts, an import cycle, an import against the
 * direction of the pipeline) and check that it does, and that the right way passes.
 */

const eslint = new ESLint({ cwd: root });

async function lintAs(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: join(root, file) });
  return result!.messages.map((m) => `${m.ruleId}: ${m.message}`);
}

describe('ESLint: zod is imported as a namespace (the CLI bundle keeps only what is used)', () => {
  it('refuses `import { z }`, accepts `import * as z` and type-only imports', async () => {
    expect(await lintAs('src/desired/planted.ts', "import { z } from 'zod';\nexport const s = z.string();\n")).toEqual([
      "no-restricted-syntax: import * as z from 'zod' (a named import keeps every zod locale in the bundle).",
    ]);
    expect(await lintAs('src/desired/planted.ts', "import * as z from 'zod';\nexport const s = z.string();\n")).toEqual([]);
    expect(await lintAs('src/desired/planted.ts', "import type { z } from 'zod';\nexport type S = z.ZodString;\n")).toEqual([]);
  });
});

describe('ESLint: folders import each other through index.ts', () => {
  it('refuses a deep import into another folder', async () => {
    const messages = await lintAs('src/desired/planted.ts', "import { editDistance } from '../yaml/suggest.js';\nexport const d = editDistance('a', 'b');\n");
    expect(messages).toEqual(['no-restricted-imports: \'../yaml/suggest.js\' import is restricted from being used by a pattern. Import another folder through its index.ts.']);
  });

  it('accepts the folder index, errors.ts and imports inside the folder', async () => {
    const code = "import { editDistance } from '../yaml/index.js';\nimport { AmsyncError } from '../errors.js';\nimport { loadDesired } from './load.js';\nexport const all = [editDistance, AmsyncError, loadDesired];\n";
    expect(await lintAs('src/desired/planted.ts', code)).toEqual([]);
  });

  it('keeps the rule inside folders that have rules of their own (plan/, api/, emulator/)', async () => {
    const code = "import { escapeControls } from '../text/safe-text.js';\nexport const e = escapeControls;\n";
    expect((await lintAs('src/plan/planted.ts', code)).join('\n')).toContain('Import another folder through its index.ts.');
    expect((await lintAs('src/api/planted.ts', "import { scrub } from '../secrets/known-secrets.js';\nexport const s = scrub;\n")).join('\n')).toContain('through its index.ts');
  });
});

describe('dependency-cruiser: no cycles, and the pipeline points one way', () => {
  const dir = mkdtempSync(join(tmpdir(), 'amsync-layout-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** The planted tree, cruised as `npm run lint` does (in this process, through dependency-cruiser's API). */
  async function plant(files: Record<string, string>): Promise<{ status: number | null; out: string }> {
    rmSync(join(dir, 'src'), { recursive: true, force: true });
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext', strict: true } }));
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), text);
    }
    const options = await extractDepcruiseOptions(join(root, '.dependency-cruiser.cjs'));
    const result = await cruise(['src'], { ...options, baseDir: dir, outputType: 'err' }, {}, { tsConfig: extractTSConfig(join(dir, 'tsconfig.json')) });
    return { status: result.exitCode, out: String(result.output) };
  }

  // One tree with every mistake at once.
  it('fails on a cycle between files, a type-only cycle, and an import against the direction', async () => {
    const run = await plant({
      'src/apply/a.ts': "import { b } from './b.js';\nexport const a = () => b;\n",
      'src/apply/b.ts': "import { a } from './a.js';\nexport const b = () => a;\n",
      // commands.ts and every command once imported each other through the type CommandContext
      'src/cli/commands.ts': "import { registerX } from './x.js';\nexport interface Ctx { n: number }\nexport const all = [registerX];\n",
      'src/cli/x.ts': "import type { Ctx } from './commands.js';\nexport function registerX(c: Ctx): number { return c.n; }\n",
      'src/model/index.ts': "import { run } from '../apply/index.js';\nexport const m = run;\n",
      'src/apply/index.ts': "import { main } from '../cli/index.js';\nexport const run = main;\n",
      'src/cli/index.ts': 'export const main = 1;\n',
    });
    expect(run.status).not.toBe(0);
    expect(run.out).toMatch(/no-circular: src\/apply\/(a|b)\.ts/);
    expect(run.out).toMatch(/no-circular: src\/cli\/(commands|x)\.ts/);
    expect(run.out).toContain('folder-direction-model: src/model/index.ts → src/apply/index.ts');
    expect(run.out).toContain('nothing-imports-cli: src/apply/index.ts → src/cli/index.ts');
  });

  it('holds the new folders of issue 28: kinds import nothing, app never imports cli or daemon, daemon never cli', async () => {
    const run = await plant({
      'src/model/index.ts': 'export const m = 1;\n',
      'src/model/kinds/apikey.ts': "import { m } from '../index.js';\nexport const k = m;\n",
      'src/daemon/index.ts': "import { main } from '../cli/index.js';\nexport const d = main;\n",
      'src/app/index.ts': "import { d } from '../daemon/index.js';\nexport const a = d;\n",
      'src/cli/index.ts': 'export const main = 1;\n',
    });
    expect(run.status).not.toBe(0);
    expect(run.out).toContain('kinds-import-nothing: src/model/kinds/apikey.ts → src/model/index.ts');
    expect(run.out).toContain('folder-direction-app: src/app/index.ts → src/daemon/index.ts');
    expect(run.out).toContain('nothing-imports-cli: src/daemon/index.ts → src/cli/index.ts');
  });

  it('passes the same files when they point the right way', async () => {
    const run = await plant({
      'src/model/index.ts': 'export const m = 1;\n',
      'src/apply/index.ts': "import { m } from '../model/index.js';\nexport const run = m;\n",
      'src/cli/index.ts': "import { run } from '../apply/index.js';\nexport const main = run;\n",
    });
    expect(run.out).toContain('no dependency violations');
    expect(run.status).toBe(0);
  });
});
