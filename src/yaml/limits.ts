/**
 * Bounds on what amsync will read, so a hostile or broken file gets a clear error instead of
 * a hang or an out-of-memory crash. A real desired-state file with 100k items is about 6 MB.
 */
export const limits = {
  /** Largest desired-state or settings file read, in bytes. */
  maxFileBytes: 10 * 1024 * 1024,
  /** Deepest nesting of YAML collections; a desired-state file needs 4, settings 2. */
  maxDepth: 32,
  /** yaml's bound on alias expansion (its `maxAliasCount`); defeats "billion laughs". */
  maxAliasCount: 100,
  /** Findings reported per file; past it, one more says how many were left out. */
  maxDiagnostics: 200,
  /** Largest secret file read; a password is a line, not a megabyte. */
  maxSecretFileBytes: 64 * 1024,
} as const;
