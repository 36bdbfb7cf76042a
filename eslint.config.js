// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// Modules that perform I/O or carry ambient state. src/plan/ must stay pure (README, "Development").
const ioModules = [
  'fs', 'node:fs', 'fs/promises', 'node:fs/promises', 'http', 'node:http', 'https', 'node:https',
  'net', 'node:net', 'child_process', 'node:child_process', 'os', 'node:os', 'process', 'node:process',
  'got', 'pino', 'pino-pretty', 'chokidar', 'node-cron', 'p-queue', 'prom-client', 'commander',
];

// Folders import each other through their index.ts only, so a folder's inside can change
// without its users (issue 13). `../errors.js` is a file at src/, not a folder. Dynamic
// `import()` is not covered on purpose: a command loads a deep module lazily to start fast.
const throughIndex = { regex: '^\\.\\./(?!errors\\.js$)[^/]+/(?!index\\.js$)', message: 'Import another folder through its index.ts.' };

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', 'bin/**', '.scratch*/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', setImmediate: 'readonly', URL: 'readonly', Buffer: 'readonly', AbortController: 'readonly', AbortSignal: 'readonly', TextDecoder: 'readonly', TextEncoder: 'readonly', structuredClone: 'readonly', performance: 'readonly', fetch: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  {
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly' } },
  },
  {
    files: ['src/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [throughIndex] }] },
  },
  {
    // Short functions (issue 13): a long one becomes named steps (a class over the state they
    // share, as KindPlanner and PlanRun). One that stays longer says why, next to it:
    // `// eslint-disable-next-line max-lines-per-function -- <reason>`.
    files: ['src/**/*.ts'],
    rules: { 'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true }] },
  },
  {
    // Tool config files (eslint, vitest) must export a default; the code must not.
    files: ['src/**/*.ts', 'test/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        { selector: 'ExportDefaultDeclaration', message: 'No default exports: every name is searchable where it is used.' },
        {
          // `import { z }` keeps all of zod's 64 locales in the CLI bundle (bundle-cli.mjs): 550 kB
          // loaded by every command. The namespace import lets esbuild keep only what is used.
          selector: "ImportDeclaration[source.value='zod'][importKind!='type'] > ImportSpecifier[importKind!='type']",
          message: "import * as z from 'zod' (a named import keeps every zod locale in the bundle).",
        },
      ],
    },
  },
  {
    files: ['src/plan/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: ioModules.map((name) => ({ name, message: 'src/plan/ is pure: no I/O (README, "Development").' })),
        patterns: [
          { group: ['node:*'], message: 'src/plan/ is pure: no Node built-ins.' },
          { regex: '^\\.\\./(?!model/|text/|errors\\.js$)', message: 'src/plan/ imports model, text and errors only.' },
          throughIndex,
        ],
      }],
      'no-restricted-globals': ['error',
        { name: 'process', message: 'src/plan/ is pure: pass values in.' },
        { name: 'Date', message: 'src/plan/ is pure: no clock.' },
        { name: 'console', message: 'src/plan/ is pure: no logging.' },
        { name: 'fetch', message: 'src/plan/ is pure: no I/O.' }],
    },
  },
  {
    // Pure as plan/ is; node:crypto only, for the approval hashes (sha256 is a function of its input).
    files: ['src/policy/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: ioModules.map((name) => ({ name, message: 'src/policy/ is pure: no I/O (README, "Teams and governance").' })),
        patterns: [
          { group: ['node:*', '!node:crypto'], message: 'src/policy/ is pure: no Node built-ins but node:crypto.' },
          { regex: '^\\.\\./(?!model/|glob/|yaml/|text/)', message: 'src/policy/ imports model, glob, yaml and text only.' },
          throughIndex,
        ],
      }],
      'no-restricted-globals': ['error',
        { name: 'process', message: 'src/policy/ is pure: pass values in.' },
        { name: 'Date', message: 'src/policy/ is pure: no clock.' },
        { name: 'console', message: 'src/policy/ is pure: no logging.' },
        { name: 'fetch', message: 'src/policy/ is pure: no I/O.' }],
    },
  },
  {
    files: ['src/model/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ regex: '^(?!\\./)', message: 'src/model/ imports nothing outside itself.' }] }],
    },
  },
  {
    // General text tools (control and bidi escaping): pure, used by every layer.
    files: ['src/text/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ regex: '^(?!\\./)', message: 'src/text/ imports nothing outside itself.' }] }],
    },
  },
  {
    files: ['src/errors.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ regex: '^(?!\\./model/)', message: 'errors.ts imports model types only.' }] }],
    },
  },
  {
    files: ['src/emulator/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [{ group: ['../api', '../api/*', '**/api/*', 'got'], message: 'The emulator must not share the client\'s assumptions (README, "Development").' }, throughIndex],
      }],
    },
  },
  {
    files: ['src/api/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { paths: [{ name: 'pino', message: 'The client emits events; logging subscribes in src/obs/.' }], patterns: [throughIndex] }],
    },
  },
  {
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-non-null-assertion': 'off' },
  },
);
