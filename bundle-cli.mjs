// @ts-check
/**
 * The second step of `npm run build`: bundles tsc's output for the CLI (dist/cli/main.js) into
 * dist/bundle/, the files bin/amsync.js loads. A cold `amsync validate` loaded ~200 ES modules,
 * one file each (zod alone 95): resolving, reading and compiling them was most of its time
 * (docs/performance.md, "Cold start, bundled"). Bundled, it loads about twenty; the commands'
 * lazy `import()`s stay lazy, as chunks of their own (code splitting), and a module shared by
 * several of them is still one module, loaded once.
 *
 * Only the dependencies of that cold path are bundled (zod, commander): pure JavaScript that
 * reads no file beside itself. The others stay ordinary imports from node_modules, loaded when
 * a command needs them, as the tsc output loads them (pino starts worker threads from its own
 * files; the Kubernetes client, got and chokidar gain nothing at start).
 *
 * It also writes dist/runtime/package.json: the package as the container image ships it, whose
 * dependencies are only those the bundle leaves external (the Dockerfile installs them;
 * docs/image.md gives the sizes).
 *
 *   node bundle-cli.mjs    (after tsc -p tsconfig.build.json)
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The dependencies the bundle carries inside it: the image installs none of them. */
export const bundled = new Set(['zod', 'commander']);

/**
 * The package.json of the image: what `bin/amsync.js` and the bundle need (its name, version and
 * type; the version is read at run time), with only the dependencies the bundle does not
 * contain, at the ranges package.json gives them (package-lock.json then pins them). Pure.
 * @param {{ name: string, version: string, description?: string, type?: string, license?: string, engines?: object, bin?: object, dependencies: Record<string, string> }} pkg
 */
export function runtimeManifest(pkg) {
  const dependencies = Object.fromEntries(Object.entries(pkg.dependencies).filter(([name]) => !bundled.has(name)));
  return { name: pkg.name, version: pkg.version, description: pkg.description, type: pkg.type, license: pkg.license, engines: pkg.engines, bin: pkg.bin, private: true, dependencies };
}

/**
 * commander requires node:child_process at load, only to spawn the executables of
 * "executable subcommands", which amsync has none of; loading it (with net, dgram, readline
 * and the streams behind it) cost ~3-4 ms of every start. This gives commander a stand-in
 * whose spawn loads the real module when called, so its behaviour is unchanged.
 */
const lazyChildProcessForCommander = {
  name: 'lazy-child-process-for-commander',
  setup(build) {
    build.onResolve({ filter: /^node:child_process$/ }, (args) =>
      /[\\/]node_modules[\\/]commander[\\/]/.test(args.importer) ? { path: 'child_process (loaded when used)', namespace: 'lazy-child-process' } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'lazy-child-process' }, () => ({
      contents: "module.exports = { spawn: (...args) => require('node:child_process').spawn(...args) };",
      loader: 'js',
    }));
  },
};
const root = fileURLToPath(new URL('.', import.meta.url));

/** Bundles dist/cli/main.js into dist/bundle/ and writes dist/runtime/package.json. */
async function main() {
  const { build } = await import('esbuild');
  const pkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8'));
  const external = Object.keys(pkg.dependencies).filter((name) => !bundled.has(name));
  const outdir = 'dist/bundle';

  // Chunk names carry a hash: drop the last build's, so the package holds one set.
  await rm(join(root, outdir), { recursive: true, force: true });
  await build({
    absWorkingDir: root,
    entryPoints: { main: 'dist/cli/main.js' },
    outdir,
    // Flat, two levels below the package root as dist/cli/ is: `new URL('../../package.json',
    // import.meta.url)` and the other paths of the code relative to the package still hold.
    entryNames: '[name]',
    chunkNames: '[name]-[hash]',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    external,
    // commander is CommonJS: its require() of node's modules needs a real require in ESM.
    banner: { js: "import { createRequire as __bundleCreateRequire } from 'node:module';\nconst require = __bundleCreateRequire(import.meta.url);" },
    sourcemap: true,
    // As tsc's maps: they point at the sources, they do not carry them.
    sourcesContent: false,
    logLevel: 'warning',
    plugins: [lazyChildProcessForCommander],
  });
  await mkdir(join(root, 'dist/runtime'), { recursive: true });
  await writeFile(join(root, 'dist/runtime/package.json'), `${JSON.stringify(runtimeManifest(pkg), null, 2)}\n`);
}

// Imported by a test (runtimeManifest), it builds nothing.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
