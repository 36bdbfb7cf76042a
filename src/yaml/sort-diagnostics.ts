import type { Diagnostic } from '../model/index.js';

/** File order, so a reader fixes from the top; unpositioned findings first. */
export function sortDiagnostics(list: readonly Diagnostic[]): Diagnostic[] {
  return [...list].sort(
    (a, b) => (a.position?.line ?? 0) - (b.position?.line ?? 0) || (a.position?.col ?? 0) - (b.position?.col ?? 0) || a.path.localeCompare(b.path),
  );
}
