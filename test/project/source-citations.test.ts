import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { root } from '../helpers/paths.js';

/** Every .ts file under src/. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

/** A document a comment names: `DESIGN.md`, `docs/performance.md`, `api-spec.md` (a path ending in .md). */
const cited = /(?<![\w/.-])([\w./-]*\w\.md)\b/g;

/** The documents the source cites that the repository does not hold (a reader cannot follow them). */
function missingCitations(text: string): string[] {
  return [...text.matchAll(cited)].map((m) => m[1]!).filter((path) => !existsSync(join(root, path)));
}

describe('source comments cite only files in the repository', () => {
  it('the check finds a citation of a file that is not there (it can fail)', () => {
    expect(missingCitations('// the layout (DESIGN.md §2); see docs/performance.md and README.md')).toEqual(['DESIGN.md']);
    expect(missingCitations(' * (api-spec.md: "n1"), STYLE.md "one exit point"')).toEqual(['api-spec.md', 'STYLE.md']);
  });

  it('no file under src/ cites a document the repository does not hold (DESIGN.md, STYLE.md, api-spec.md are not in it)', () => {
    const missing = sources(join(root, 'src')).flatMap((file) => missingCitations(readFileSync(file, 'utf8')).map((path) => `${relative(root, file)}: ${path}`));
    expect(missing).toEqual([]);
  });

  it('nor do the lint configurations whose messages a contributor reads', () => {
    const missing = ['.dependency-cruiser.cjs', 'eslint.config.js'].flatMap((file) => missingCitations(readFileSync(join(root, file), 'utf8')).map((path) => `${file}: ${path}`));
    expect(missing).toEqual([]);
  });
});
