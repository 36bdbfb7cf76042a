import type { DesiredApikey, DesiredSshUser, DesiredState, Diagnostic } from '../model/index.js';
import { quote, formatPath, type DocPath, limits } from '../yaml/index.js';
import { diagnosticCodes } from '../model/index.js';
import { compileGlob, globProblem, namePatternProblem } from '../glob/index.js';
import type { YamlSource } from '../yaml/index.js';

/** The only SSH user level the service documents (the service's API specification). */
export const knownLevels: readonly string[] = ['n1'];

type Kind = 'sshUsers' | 'apikeys';
const identityKey: Record<Kind, string> = { sshUsers: 'username', apikeys: 'name' };
const kindWords: Record<Kind, string> = { sshUsers: 'SSH user', apikeys: 'apikey' };

const kinds = ['sshUsers', 'apikeys'] as const;

/**
 * Checks that need more than one value, run on the raw document so they report even when the
 * schema found other errors (a user fixes everything in one go). Each check looks only at
 * values of the right type; the schema reports the rest.
 */
export function checkDesired(raw: unknown, source: YamlSource): Diagnostic[] {
  const root = asRecord(raw);
  if (!root) return [];
  const check = new DocumentCheck(root, source);
  for (const kind of kinds) check.items(kind);
  for (const kind of kinds) check.formerNames(kind);
  for (const kind of kinds) {
    check.protectGlobs(kind);
    check.pruneEverything(kind);
  }
  check.namePatterns();
  return check.diagnostics;
}

/** checkDesired's checks, in the order they report, over the findings they share (bounded). */
class DocumentCheck {
  readonly diagnostics: Diagnostic[] = [];

  constructor(
    private readonly root: Record<string, unknown>,
    private readonly source: YamlSource,
  ) {}

  /** Each kind's items: identities and pinned ids declared once, and the advisories of one item. */
  items(kind: Kind): void {
    const byIdentity = new Map<string, number>();
    const byId = new Map<number, number>();
    asList(this.root[kind]).forEach((rawItem, i) => {
      const item = asRecord(rawItem);
      if (!item) return;
      this.#uniqueIdentity(kind, item, i, byIdentity);
      this.#uniqueId(kind, item, i, byId);
      if (item.expires !== undefined && item.ttl !== undefined) {
        this.#report('error', diagnosticCodes.expiryConflict, `give either expires or ttl, not both: they are two ways to say when this ${kindWords[kind]}'s access ends`, [kind, i, 'ttl'], 'key');
      }
      if (kind === 'sshUsers') this.#sshUserAdvice(item, i);
      else this.#duplicateRoles(item, i);
    });
  }

  /**
   * `renamedFrom:`: a former name belongs to one item, and is no item's current name (else the
   * item declared under it would claim the remote item first, and the rename would never happen).
   */
  formerNames(kind: Kind): void {
    const items = asList(this.root[kind]).map((raw) => asRecord(raw));
    const current = new Map<string, number>();
    items.forEach((item, i) => {
      const name = item?.[identityKey[kind]];
      if (typeof name === 'string' && !current.has(name)) current.set(name, i);
    });
    const claimed = new Map<string, readonly [number, number]>();
    items.forEach((item, i) => {
      asList(item?.renamedFrom).forEach((former, j) => {
        if (typeof former !== 'string' || former === '') return;
        const path: DocPath = [kind, i, 'renamedFrom', j];
        const own = current.get(former);
        if (own === i) {
          this.#report('error', diagnosticCodes.duplicateIdentity, `${quote(former)} is this ${kindWords[kind]}'s own ${identityKey[kind]}, not a former one`, path);
          return;
        }
        if (own !== undefined) {
          this.#report('error', diagnosticCodes.duplicateIdentity, `${quote(former)} is declared as ${kind}[${own}] at ${this.#at([kind, own, identityKey[kind]])}; a former ${identityKey[kind]} cannot also be a declared one (remove the item or the renamedFrom entry)`, path);
          return;
        }
        const first = claimed.get(former);
        if (first === undefined) {
          claimed.set(former, [i, j]);
          return;
        }
        if (first[0] === i) return; // listed twice by one item: harmless
        this.#report('error', diagnosticCodes.duplicateIdentity, `${kindWords[kind]} ${quote(former)} is claimed as a former ${identityKey[kind]} twice: by ${kind}[${first[0]}] at ${this.#at([kind, first[0], 'renamedFrom', first[1]])} and by ${kind}[${i}] here; one remote ${kindWords[kind]} can be renamed into one declared item only`, path);
      });
    });
  }

  #at(path: DocPath): string {
    const p = this.source.locate(path);
    return `${p.file}:${p.line}:${p.col}`;
  }

  /** Globs of `protect:` that are invalid, or that match a declared item (which is then never changed). */
  protectGlobs(kind: Kind): void {
    const globs = asList(asRecord(this.root.protect)?.[kind]);
    const declared = asList(this.root[kind])
      .map((item, i) => ({ i, item: asRecord(item) }))
      .filter(({ item }) => item && item.ensure !== 'absent' && typeof item[identityKey[kind]] === 'string');
    globs.forEach((glob, j) => {
      if (typeof glob !== 'string' || glob === '') return;
      const problem = globProblem(glob);
      if (problem) {
        this.#report('error', diagnosticCodes.invalidGlob, `invalid glob ${quote(glob)}: ${problem}`, ['protect', kind, j]);
        return;
      }
      // An advisory only: skipped when globs × items is too large to be a real file's.
      if (globs.length * declared.length > 1_000_000) return;
      // The same matcher as the planner's (src/glob): linear in the name, whatever the glob.
      const matches = compileGlob(glob);
      for (const { i, item } of declared) {
        const key = item![identityKey[kind]] as string;
        if (matches(key)) {
          this.#report('warning', diagnosticCodes.protectMatchesDeclared, `declared ${kindWords[kind]} ${quote(key)} (${kind}[${i}]) matches this protect glob, so amsync will never change it`, ['protect', kind, j]);
        }
      }
    });
  }

  /** Prune on with no item declared: a delete of everything, which sync refuses. */
  pruneEverything(kind: Kind): void {
    if (asRecord(this.root.prune)?.[kind] === true && asList(this.root[kind]).length === 0) {
      this.#report(
        'warning',
        diagnosticCodes.pruneEverything,
        `prune is on but no ${kindWords[kind]} is declared: that asks to delete every unprotected ${kindWords[kind]}, which sync refuses (exit 3)`,
        ['prune', kind],
      );
    }
  }

  /** The policy's name patterns compile. */
  namePatterns(): void {
    const policy = asRecord(this.root.policy);
    for (const key of ['usernamePattern', 'apikeyNamePattern'] as const) {
      const pattern = policy?.[key];
      if (typeof pattern !== 'string' || pattern === '') continue;
      const problem = namePatternProblem(pattern);
      if (problem) this.#report('error', diagnosticCodes.invalidPattern, `invalid ${key} ${quote(pattern)}: ${problem}`, ['policy', key]);
    }
  }

  #uniqueIdentity(kind: Kind, item: Record<string, unknown>, i: number, seen: Map<string, number>): void {
    const identity = item[identityKey[kind]];
    // Apikey names are not unique on the service: a pinned id is the identity of an apikey
    // (README, "The desired-state file"), so keys that share a name are declared apart by `id:`.
    const pinnedApikey = kind === 'apikeys' && item.id !== undefined;
    if (typeof identity !== 'string' || identity === '' || pinnedApikey) return;
    const first = seen.get(identity);
    if (first === undefined) {
      seen.set(identity, i);
      return;
    }
    const line = this.source.locate([kind, first]).line;
    this.#report('error', diagnosticCodes.duplicateIdentity, `${kindWords[kind]} ${quote(identity)} is declared twice (first as ${kind}[${first}], line ${line}); each ${identityKey[kind]} may appear once${kind === 'apikeys' ? ' (apikeys that share a name are declared with `id:`)' : ''}`, [kind, i, identityKey[kind]]);
  }

  #uniqueId(kind: Kind, item: Record<string, unknown>, i: number, seen: Map<number, number>): void {
    const id = item.id;
    if (!(typeof id === 'number' && Number.isInteger(id) && id > 0)) return;
    const first = seen.get(id);
    if (first === undefined) {
      seen.set(id, i);
      return;
    }
    const line = this.source.locate([kind, first]).line;
    this.#report('error', diagnosticCodes.duplicateIdentity, `id ${id} is pinned twice (first by ${kind}[${first}], line ${line}); one remote ${kindWords[kind]} cannot be two declared items`, [kind, i, 'id']);
  }

  #sshUserAdvice(item: Record<string, unknown>, i: number): void {
    const level = item.level;
    if (typeof level === 'string' && level !== '' && !knownLevels.includes(level)) {
      this.#report('warning', diagnosticCodes.unknownLevel, `level ${quote(level)} is not one the service documents (${knownLevels.map((l) => quote(l)).join(', ')}); it is sent as written${levelSlip(level)}`, ['sshUsers', i, 'level']);
    }
    if (item.ensure === 'absent' && item.password !== undefined) {
      this.#report('warning', diagnosticCodes.ignoredOnAbsent, 'password is ignored for an item with ensure: absent (it is deleted, not updated)', ['sshUsers', i, 'password'], 'key');
    }
  }

  #duplicateRoles(item: Record<string, unknown>, i: number): void {
    const seen = new Set<number | string>();
    asList(item.roles).forEach((role, j) => {
      if (typeof role !== 'number' && typeof role !== 'string') return;
      const shown = typeof role === 'number' ? String(role) : quote(role);
      if (seen.has(role)) this.#report('warning', diagnosticCodes.duplicateRole, `role ${shown} is listed twice; roles are a set, so once is enough`, ['apikeys', i, 'roles', j]);
      seen.add(role);
    });
  }

  #report(severity: Diagnostic['severity'], code: string, message: string, path: DocPath, at: 'value' | 'key' = 'value'): void {
    if (this.diagnostics.length >= limits.maxDiagnostics) return;
    this.diagnostics.push({ severity, code, message, path: formatPath(path), position: this.source.locate(path, at) });
  }
}

/**
 * The advisories that look at `prune:` or `protect:` together with the items, for a state made
 * of several files: a file's own check sees only its items. Positioned at the section's key
 * (where a glob sits inside it is not kept for a file read on the fast path).
 */
export function checkSections(state: DesiredState): Diagnostic[] {
  const out: Diagnostic[] = [];
  const origin = state.origin;
  for (const kind of kinds) {
    const items = state[kind] as readonly (DesiredSshUser | DesiredApikey)[];
    if (state.prune[kind] && items.length === 0 && origin?.prune) {
      out.push({
        severity: 'warning',
        code: diagnosticCodes.pruneEverything,
        message: `prune is on but no file declares an ${kindWords[kind]}: that asks to delete every unprotected ${kindWords[kind]}, which sync refuses (exit 3)`,
        path: `prune.${kind}`,
        position: origin.prune,
      });
    }
    const globs = state.protect[kind];
    if (globs.length === 0 || !origin?.protect || globs.length * items.length > 1_000_000) continue;
    for (const glob of globs) {
      if (globProblem(glob)) continue;
      const matches = compileGlob(glob);
      for (const item of items) {
        const key = 'username' in item ? item.username : item.name;
        if (item.ensure !== 'present' || !matches(key)) continue;
        const where = item.source ? ` (${item.source.file}:${item.source.line}:${item.source.col})` : '';
        out.push({
          severity: 'warning',
          code: diagnosticCodes.protectMatchesDeclared,
          message: `declared ${kindWords[kind]} ${quote(key)}${where} matches the protect glob ${quote(glob)}, so amsync will never change it`,
          path: `protect.${kind}`,
          position: origin.protect,
        });
      }
    }
  }
  return out;
}

/** " — did you mean 'n1'?" for `N1` or `n-1`, but not for `n2`, which may well be meant. */
function levelSlip(level: string): string {
  const folded = level.toLowerCase().replace(/[^a-z0-9]/g, '');
  const match = knownLevels.find((known) => known === folded);
  return match === undefined ? '' : ` — did you mean ${quote(match)}?`;
}

export function asRecord(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

export function asList(value: unknown): readonly unknown[] {
  return Array.isArray(value) ? value : [];
}
