import type { DesiredOrigin, DesiredState, Diagnostic, SourcePosition, TargetSelector } from '../model/index.js';
import { diagnosticCodes } from '../model/index.js';
import { quote } from '../yaml/index.js';
import type { Sections } from './parse-desired.js';

/** One file's part of a desired state. */
export interface DesiredPart {
  readonly file: string;
  readonly value: DesiredState;
  readonly sections: Sections;
}

/**
 * Several files as one desired state (README, "Teams and governance"). Each file owns the items it declares:
 * an identity (username, apikey name, or a pinned id) declared in two files is an error at the
 * second, naming both positions, as is `prune:`, `protect:` or `policy:` written in more than
 * one file. Items keep their order, file after file, and their positions. Pure.
 */
export function mergeDesired(parts: readonly DesiredPart[]): { value: DesiredState; errors: Diagnostic[] } {
  const errors: Diagnostic[] = [];
  const claims = new Map<string, SourcePosition | undefined>();
  const claim = (identity: string, what: string, field: string, source: SourcePosition | undefined, path: string): void => {
    if (!claims.has(identity)) {
      claims.set(identity, source);
      return;
    }
    const first = claims.get(identity);
    // Within one file parseDesired has reported it already.
    if (first?.file === source?.file) return;
    errors.push({
      severity: 'error',
      code: diagnosticCodes.duplicateIdentity,
      message: `${what} is declared in two files, ${at(first)} and ${at(source)}; each ${field} belongs to one file: remove one of them`,
      path,
      ...(source ? { position: source } : {}),
    });
  };
  for (const part of parts) {
    part.value.sshUsers.forEach((u, i) => {
      claim(`sshUser\0${u.username}`, `SSH user ${quote(u.username)}`, 'username', u.source, `sshUsers[${i}].username`);
      if (u.id !== undefined) claim(`sshUser#${u.id}`, `SSH user id ${u.id}`, 'pinned id', u.source, `sshUsers[${i}].id`);
      for (const former of u.renamedFrom ?? []) claim(`sshUser~${former}`, `former username ${quote(former)} (renamedFrom)`, 'former username', u.source, `sshUsers[${i}].renamedFrom`);
    });
    part.value.apikeys.forEach((k, i) => {
      // Apikeys that share a name are declared apart by `id:` (as within one file).
      if (k.id === undefined) claim(`apikey\0${k.name}`, `apikey ${quote(k.name)}`, 'name', k.source, `apikeys[${i}].name`);
      else claim(`apikey#${k.id}`, `apikey id ${k.id}`, 'pinned id', k.source, `apikeys[${i}].id`);
      for (const former of k.renamedFrom ?? []) claim(`apikey~${former}`, `former apikey name ${quote(former)} (renamedFrom)`, 'former name', k.source, `apikeys[${i}].renamedFrom`);
    });
  }

  const origin: { -readonly [K in keyof DesiredOrigin]: DesiredOrigin[K] } = { files: parts.map((p) => p.file) };
  const owner: Partial<Record<keyof Sections, DesiredPart>> = {};
  for (const section of ['prune', 'protect', 'policy'] as const) {
    for (const part of parts) {
      const here = part.sections[section];
      if (here === undefined) continue;
      const first = owner[section];
      if (first === undefined) {
        owner[section] = part;
        origin[section] = here;
        continue;
      }
      errors.push({
        severity: 'error',
        code: diagnosticCodes.sectionRepeated,
        message: `${section}: is written in two files, ${at(first.sections[section])} and ${at(here)}; it may be written in one file only`,
        path: section,
        position: here,
      });
    }
  }

  const empty = { sshUsers: false, apikeys: false };
  const value: DesiredState = {
    // A file's top-level `targets:` (fleet) is the default of that file's items only: each
    // team's file may aim at its own targets.
    sshUsers: parts.flatMap((p) => withDefaultTargets(p.value.sshUsers, p.value.targets)),
    apikeys: parts.flatMap((p) => withDefaultTargets(p.value.apikeys, p.value.targets)),
    prune: owner.prune?.value.prune ?? empty,
    protect: owner.protect?.value.protect ?? { sshUsers: [], apikeys: [] },
    ...(owner.policy?.value.policy ? { policy: owner.policy.value.policy } : {}),
    origin,
  };
  return { value, errors };
}

function withDefaultTargets<T extends { readonly targets?: TargetSelector }>(items: readonly T[], targets: TargetSelector | undefined): readonly T[] {
  return targets === undefined ? items : items.map((item) => (item.targets === undefined ? { ...item, targets } : item));
}

function at(position: SourcePosition | undefined): string {
  return position === undefined ? 'another file' : `${position.file}:${position.line}:${position.col}`;
}
