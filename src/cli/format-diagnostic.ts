import type { Diagnostic } from '../model/index.js';

/** `access.yaml:3:7: error: unknown key 'levl' — did you mean 'level'? (sshUsers[1].levl)` */
export function formatDiagnostic(d: Diagnostic): string {
  const where = d.position ? `${d.position.file}:${d.position.line}:${d.position.col}: ` : '';
  const path = d.path ? ` (${d.path})` : '';
  return `${where}${d.severity}: ${d.message}${path}`;
}
