import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import GithubSlugger from 'github-slugger';
import { lexer, walkTokens, type Token, type Tokens } from 'marked';
import { describe, expect, it } from 'vitest';
import { root } from '../helpers/paths.js';

/**
 * Every relative link in the user's documentation resolves inside the repository: Markdown
 * links and images (with their #anchors, as GitHub makes them from headings), and the paths
 * that README, docs, examples, the Dockerfile and the action name in their text and comments
 * (`see docs/x.md`, `examples/ci/...`, `DESIGN.md`).
 */

function filesUnder(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) => {
    const path = `${dir}/${e.name}`;
    return e.isDirectory() ? filesUnder(path) : [path];
  });
}

const documents = [
  'README.md',
  'Dockerfile',
  'action.yml',
  ...filesUnder('docs').filter((f) => f.endsWith('.md')),
  ...filesUnder('examples'),
  ...filesUnder('.github'),
  ...filesUnder('scripts'),
].filter((f) => statSync(join(root, f)).isFile());

const isMarkdown = (file: string) => file.endsWith('.md');

/** Links and images of a Markdown document, code excluded. */
function markdownLinks(text: string): string[] {
  const links: string[] = [];
  walkTokens(lexer(text), (token) => {
    if (token.type === 'link' || token.type === 'image') links.push((token as Tokens.Link).href);
  });
  return links;
}

/** The anchors GitHub gives a document's headings. */
function anchors(text: string): Set<string> {
  const slugger = new GithubSlugger();
  const out = new Set<string>();
  walkTokens(lexer(text), (token) => {
    if (token.type === 'heading') out.add(slugger.slug(plain((token as Tokens.Heading).tokens)));
  });
  return out;
}

function plain(tokens: readonly Token[]): string {
  return tokens.map((t) => ('tokens' in t && t.tokens ? plain(t.tokens) : 'text' in t ? t.text : '')).join('');
}

// Paths into the repository named in prose and comments: under a folder of the repository, or a
// Markdown file. Files the pipelines write (plan.md) are not links.
const mention = /(?<![\w/.$-])(?:(?:docs|examples|config|src|scripts|test)\/[\w./-]*[\w/]|[\w-]+\.md)\b/g;
const written = new Set(['plan.md']);

/** What `target` (relative to `from`) is missing; undefined when it resolves. */
function problem(from: string, target: string): string | undefined {
  const [path = '', anchor] = target.split('#');
  const file = path === '' ? join(root, from) : resolve(dirname(join(root, from)), decodeURIComponent(path));
  if (relative(root, file).startsWith('..')) return 'points outside the repository';
  if (!existsSync(file)) return 'does not exist';
  if (anchor !== undefined && isMarkdown(file) && !anchors(readFileSync(file, 'utf8')).has(anchor)) return `has no heading #${anchor}`;
  return undefined;
}

describe('links in the documentation', () => {
  it('covers README, docs, examples, the Dockerfile and the action', () => {
    expect(documents).toEqual(expect.arrayContaining(['README.md', 'Dockerfile', 'action.yml', 'docs/performance.md', 'examples/ci/github-actions.yaml', 'examples/kubernetes/deployment.yaml']));
  });

  it('every relative Markdown link and anchor resolves inside the repository', () => {
    const broken: string[] = [];
    for (const doc of documents.filter(isMarkdown)) {
      for (const href of markdownLinks(readFileSync(join(root, doc), 'utf8'))) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(href)) continue; // https:, mailto:
        const why = problem(doc, href);
        if (why) broken.push(`${doc}: (${href}) ${why}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('every repository path named in text and comments exists', () => {
    const broken: string[] = [];
    for (const doc of documents) {
      for (const [name] of readFileSync(join(root, doc), 'utf8').matchAll(mention)) {
        if (written.has(name)) continue;
        // A path is named from the repository root, or from the naming file's folder.
        if (problem(doc, name) && problem('README.md', name)) broken.push(`${doc}: ${name}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('the checks find what issue 13 found', () => {
    expect(problem('README.md', 'sidecar.md')).toBe('does not exist');
    expect(problem('README.md', '../Dockerfile')).toBe('points outside the repository');
    expect(problem('README.md', '#no-such-section')).toBe('has no heading #no-such-section');
    expect(problem('README.md', '#running-as-a-sidecar')).toBeUndefined();
    expect(problem('docs/performance.md', '../README.md#performance')).toBeUndefined();
    expect([...'See docs/ci-gitops.md and DESIGN.md §7; plan.md; /api/sshusers; examples/ci/'.matchAll(mention)].map((m) => m[0])).toEqual(['docs/ci-gitops.md', 'DESIGN.md', 'plan.md', 'examples/ci']);
    expect(markdownLinks('[a](x.md) `[b](y.md)`\n\n```\n[c](z.md)\n```\n![i](img.png)')).toEqual(['x.md', 'img.png']);
    expect([...anchors('# Saved plans: `--out` and `amsync apply`\n## Exit codes\n## Exit codes')]).toEqual(['saved-plans---out-and-amsync-apply', 'exit-codes', 'exit-codes-1']);
  });
});
