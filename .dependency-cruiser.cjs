// @ts-check
/**
 * The folder graph of README, "Development", checked by `npm run lint` (dependency-cruiser). ESLint
 * keeps plan/ pure and makes folders import each other through index.ts; this file forbids
 * cycles between files and imports against the direction below, which also rules out cycles
 * between folders.
 *
 * Each folder lists the folders it may import. A new folder, or a new arrow, is a decision:
 * add it here on purpose.
 */
const allowed = {
  model: [],
  errors: ['model'],
  text: [],
  time: [],
  glob: [],
  yaml: ['model', 'errors'],
  secrets: ['model', 'errors'],
  settings: ['model', 'errors', 'yaml', 'secrets'],
  // Pure, like plan/: the file's items against its policy, a plan's gates and their hashes (issue 19).
  policy: ['model', 'glob', 'yaml', 'text'],
  desired: ['model', 'errors', 'yaml', 'secrets', 'glob', 'text', 'policy'],
  plan: ['model', 'errors', 'text'],
  // Pure renderers; `audit` for the audit log's line type (the `amsync audit` table).
  report: ['model', 'plan', 'text', 'audit'],
  'saved-plan': ['model', 'errors', 'plan', 'report', 'secrets', 'text'],
  api: ['model', 'errors', 'secrets', 'settings', 'time'],
  state: ['model', 'errors'],
  obs: ['model', 'secrets', 'text', 'settings'],
  audit: ['model', 'errors', 'secrets'],
  notify: ['model', 'errors', 'api', 'obs', 'secrets', 'settings', 'text', 'time'],
  apply: ['model', 'errors', 'plan', 'state', 'secrets', 'glob', 'api', 'desired', 'time'],
  sync: ['model', 'errors', 'plan', 'policy', 'state', 'secrets', 'apply', 'saved-plan', 'time'],
  // Fleet (README, "Fleet: one access file, many services"): many targets of one desired file; cli and daemon drive it.
  fleet: ['model', 'errors', 'yaml', 'desired', 'settings', 'secrets', 'api', 'sync', 'report', 'saved-plan', 'time', 'text'],
  // The application layer (issue 28): the context of a run, built from explicit inputs, and the
  // use cases the CLI and the daemon share. Never cli/ nor daemon/.
  // Kubernetes (issue 30): the client's config, shared by the Lease and the Secret sink.
  kube: ['model', 'errors', 'secrets', 'settings'],
  app: ['kube', 'model', 'errors', 'api', 'apply', 'audit', 'desired', 'fleet', 'notify', 'obs', 'plan', 'policy', 'report', 'saved-plan', 'secrets', 'settings', 'state', 'sync', 'text', 'time', 'yaml'],
  // `report`: the status page's pure renderer (the daemon assembles the snapshot, report/ renders it); `audit`: its tail.
  daemon: ['kube', 'model', 'errors', 'api', 'obs', 'secrets', 'settings', 'sync', 'time', 'text', 'policy', 'yaml', 'fleet', 'app', 'report', 'audit'],
  emulator: ['errors'],
};

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'An import cycle between files: break it (move the shared part down).',
      from: {},
      to: { circular: true },
    },
    ...Object.entries(allowed).map(([folder, may]) => ({
      name: `folder-direction-${folder}`,
      severity: 'error',
      comment: `src/${folder}/ may import only: ${may.length > 0 ? may.join(', ') : 'nothing outside itself'} (README, "Development").`,
      from: { path: folder === 'errors' ? '^src/errors\\.ts$' : `^src/${folder}/` },
      to: {
        path: '^src/',
        pathNot: [
          folder === 'errors' ? '^src/errors\\.ts$' : `^src/${folder}/`,
          ...may.map((m) => (m === 'errors' ? '^src/errors\\.ts$' : `^src/${m}/`)),
        ],
      },
    })),
    {
      name: 'kinds-import-nothing',
      severity: 'error',
      comment: 'src/model/kinds/ declares each kind as plain data (README, "Development"): it imports nothing, not even the rest of model/.',
      from: { path: '^src/model/kinds/' },
      to: { path: '^src/', pathNot: '^src/model/kinds/' },
    },
    {
      name: 'nothing-imports-cli',
      severity: 'error',
      comment: 'cli/ is the top: nothing below may import it.',
      from: { path: '^src/(?!cli/)' },
      to: { path: '^src/cli/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(dist|node_modules)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
