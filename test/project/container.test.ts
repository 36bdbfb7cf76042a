import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import picomatch from 'picomatch';
import { describe, expect, it } from 'vitest';
import { root } from '../helpers/paths.js';

const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
const ignore = readFileSync(join(root, '.dockerignore'), 'utf8')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l !== '' && !l.startsWith('#'));

/** Docker's rule, as far as these patterns go: a path is out when it, or a folder above it, matches. */
function ignored(path: string): boolean {
  const parts = path.split('/');
  return ignore.some((pattern) => parts.some((_, i) => picomatch(pattern, { dot: true })(parts.slice(0, i + 1).join('/'))));
}

const lines = dockerfile.replace(/\\\n/g, ' ').split('\n');
const runtime = lines.slice(lines.findIndex((l) => /^FROM .* AS runtime/.test(l)));

describe('the container image', () => {
  it('keeps .dockerignore in step with the Dockerfile: everything it copies from the context is sent', () => {
    const sources = lines
      .filter((l) => /^COPY\s/.test(l) && !l.includes('--from='))
      .flatMap((l) => l.replace(/--\S+/g, '').trim().split(/\s+/).slice(1, -1));
    expect(sources).toEqual(expect.arrayContaining(['package.json', 'src', 'config', 'bin', 'examples']));
    for (const source of sources) expect(ignored(source), `${source} is copied but .dockerignore leaves it out`).toBe(false);
  });

  it('never sends secrets, run state or build output to the build', () => {
    for (const path of ['.env', '.env.production', '.amsync/state.json', 'tokens/ci', 'node_modules/x', 'dist/cli/main.js', '.git/config', 'test/e2e/x.ts', 'plan.json']) {
      expect(ignored(path), path).toBe(true);
    }
  });

  it('runs as a numeric non-root user, with a health check that needs no curl, and OCI labels', () => {
    const user = runtime.find((l) => l.startsWith('USER '));
    expect(user).toMatch(/^USER [1-9]\d*:[1-9]\d*$/);
    expect(lines.filter((l) => !l.trimStart().startsWith('#')).join('\n')).not.toMatch(/apt-get|apk add|curl|wget/i);
    expect(runtime.find((l) => l.startsWith('HEALTHCHECK'))).toContain('fetch(');
    for (const label of ['title', 'version', 'revision', 'source', 'licenses']) expect(dockerfile).toContain(`org.opencontainers.image.${label}=`);
    expect(runtime).toContain('ENTRYPOINT ["amsync"]');
  });
});
