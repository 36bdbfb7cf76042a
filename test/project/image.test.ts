import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import picomatch from 'picomatch';
import { describe, expect, it } from 'vitest';
import { root } from '../helpers/paths.js';

/**
 * Issue 31, deliverable 7: a lean image. The Dockerfile's base is pinned by digest; the runtime
 * stage takes only what the build stage gathered in /out (the bundle without source maps, the
 * launcher, the schemas, and the dependencies the bundle leaves external), never sources, tsc
 * output or the examples' demo secrets; it runs as a numeric non-root user. The image's
 * package.json (dist/runtime/package.json, written by bundle-cli.mjs) lists exactly the
 * packages the bundle imports.
 */

const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
const lines = dockerfile
  .replace(/\\\n/g, ' ')
  .split('\n')
  .filter((l) => !l.trimStart().startsWith('#'));
const runtimeAt = lines.findIndex((l) => /^FROM .* AS runtime$/.test(l));
const build = lines.slice(0, runtimeAt);
const runtime = lines.slice(runtimeAt);
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };

/** A Dockerfile's ARG defaults, to read `FROM ${NODE_IMAGE}`. */
const args = Object.fromEntries(lines.flatMap((l) => [...l.matchAll(/^ARG (\w+)=(\S+)$/g)].map((m) => [m[1]!, m[2]!])));
const fromImages = lines.filter((l) => l.startsWith('FROM ')).map((l) => l.split(/\s+/)[1]!.replace(/^\$\{(\w+)\}$/, (_m, name: string) => args[name] ?? ''));

describe('the Dockerfile', () => {
  it('pins every base image by digest', () => {
    expect(fromImages.length).toBe(2);
    for (const image of fromImages) expect(image).toMatch(/^node:[\w.-]+-slim@sha256:[0-9a-f]{64}$/);
  });

  it('the runtime stage copies only /out from the build stage, and runs as a numeric non-root user', () => {
    const copies = runtime.filter((l) => /^COPY\s/.test(l));
    expect(copies).toEqual(['COPY --from=build --chown=root:root /out/ ./']);
    expect(runtime.find((l) => l.startsWith('USER '))).toMatch(/^USER [1-9]\d*:[1-9]\d*$/);
  });

  it('gathers in /out the bundle without source maps, the launcher, the schemas and the runtime package; no sources, tsc output or examples', () => {
    const assemble = build.find((l) => l.includes('/out'))!;
    expect(assemble).toContain('cp -r dist/bundle /out/dist/bundle && rm -f /out/dist/bundle/*.map');
    expect(assemble).toContain('cp dist/runtime/package.json package-lock.json /out/');
    expect(assemble).toMatch(/cd \/out && npm install --omit=dev /);
    // Nothing else of dist/, and nothing of src/ or examples/, goes to /out.
    const copied = [...assemble.matchAll(/cp (?:-r )?(\S+(?: \S+)*?) \/out/g)].flatMap((m) => m[1]!.split(' '));
    expect(copied.sort()).toEqual(['bin', 'config/*.json', 'dist/bundle', 'dist/runtime/package.json', 'package-lock.json']);
    expect(build.filter((l) => l.includes('/out')).join('\n')).not.toMatch(/\bsrc\b|examples|dist\/cli/);
  });

  it('keeps the demo secret files of the examples out of the build context', () => {
    const ignore = readFileSync(join(root, '.dockerignore'), 'utf8')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '' && !l.startsWith('#'));
    const ignored = (path: string) => ignore.some((pattern) => path.split('/').some((_, i, parts) => picomatch(pattern, { dot: true })(parts.slice(0, i + 1).join('/'))));
    for (const file of readdirSync(join(root, 'examples/secrets')).filter((f) => f.endsWith('-password'))) expect(ignored(`examples/secrets/${file}`), file).toBe(true);
    expect(ignored('examples/minimal.yaml')).toBe(false);
  });
});

describe("the image's package.json", () => {
  it('has the dependencies of package.json but those the bundle contains', async () => {
    const { runtimeManifest, bundled } = (await import(join(root, 'bundle-cli.mjs'))) as {
      runtimeManifest: (p: unknown) => { dependencies: Record<string, string>; bin: unknown; type: string };
      bundled: Set<string>;
    };
    const manifest = runtimeManifest(pkg);
    expect([...bundled].sort()).toEqual(['commander', 'zod']);
    expect(manifest.dependencies).toEqual(Object.fromEntries(Object.entries(pkg.dependencies).filter(([name]) => !bundled.has(name))));
    expect(manifest).toMatchObject({ type: 'module', bin: { amsync: 'bin/amsync.js' } });
  });

  // dist/ exists once `npm run build` ran (the e2e tests need it too).
  it.skipIf(!existsSync(join(root, 'dist/runtime/package.json')))('lists exactly the packages the built bundle imports', () => {
    const bundleDir = join(root, 'dist/bundle');
    const imported = new Set<string>();
    for (const file of readdirSync(bundleDir).filter((f) => f.endsWith('.js'))) {
      const text = readFileSync(join(bundleDir, file), 'utf8');
      const specifiers = [...text.matchAll(/\bfrom\s*"([^"]+)"|\bimport\(\s*"([^"]+)"\s*\)|createRequire\([^)]*\)\(\s*"([^"]+)"\s*\)|\brequire\(\s*"([^"]+)"\s*\)/g)].map((m) => m[1] ?? m[2] ?? m[3] ?? m[4]!);
      for (const s of specifiers) {
        if (s.startsWith('.') || s.startsWith('node:')) continue;
        imported.add(s.startsWith('@') ? s.split('/').slice(0, 2).join('/') : s.split('/')[0]!);
      }
    }
    const runtimePkg = JSON.parse(readFileSync(join(root, 'dist/runtime/package.json'), 'utf8')) as { dependencies: Record<string, string> };
    expect(Object.keys(runtimePkg.dependencies).sort()).toEqual([...imported].sort());
    expect(imported.has('zod') || imported.has('commander')).toBe(false);
  });
});
