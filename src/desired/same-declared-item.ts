import type { DesiredApikey, DesiredSshUser, KindDeclaration } from '../model/index.js';
import { fieldsOf, identityOf } from '../model/index.js';

/**
 * Whether an item read back from an export is the item written, as far as the planner reads
 * it (source positions differ by construction), by its kind's declaration (model/kinds): the
 * identity, `id`, `ensure`, each listed field (lists element by element: both are sorted), and
 * no write-only secret on either side (an export writes none).
 */
export function sameDeclaredItem<K extends KindDeclaration>(kind: K, read: DesiredSshUser | DesiredApikey, written: DesiredSshUser | DesiredApikey): boolean {
  const a = read as unknown as Readonly<Record<string, unknown>>;
  const b = written as unknown as Readonly<Record<string, unknown>>;
  const identity = identityOf(kind);
  if (a[identity] !== b[identity] || read.id !== written.id || read.ensure !== written.ensure) return false;
  for (const [name, field] of fieldsOf(kind)) {
    if (field.writeOnly) {
      if (a[name] !== undefined || a[`${name}Ref`] !== undefined || b[`${name}Ref`] !== undefined) return false;
    } else if (!sameListed(a[name], b[name])) return false;
  }
  return true;
}

function sameListed(x: unknown, y: unknown): boolean {
  if (!Array.isArray(x) || !Array.isArray(y)) return x === y;
  return x.length === y.length && x.every((v, i) => v === y[i]);
}
