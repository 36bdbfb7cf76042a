import { isAbsolute, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DesiredApikey, NamedRole } from '../model/index.js';
import { namesOf, type DesiredFromActual } from '../desired/index.js';

/** The name of the schema `--write-schema` writes beside the export. */
export const schemaFileName = 'access.schema.json';

/** The installed JSON Schema of the desired-state file (dist/app/, src/app/ and the bundle alike). */
const installedSchema = fileURLToPath(new URL('../../config/access.schema.json', import.meta.url));

/**
 * The header: what the file is, why it holds no secrets, and what was left out. Names are
 * JSON-quoted in comments, so a name with a line break cannot end the comment and inject YAML.
 */
export function exportHeader(serviceUrl: string, schemaRef: string | undefined, exported: DesiredFromActual): string {
  const url = new URL(serviceUrl);
  const lines = [
    ...(schemaRef === undefined ? [] : [`yaml-language-server: $schema=${schemaRef}`, '']),
    `The actual state of ${url.origin}${url.pathname.replace(/\/+$/, '')} as a desired-state file, written by \`amsync export\`.`,
    'As it is, it plans zero changes against that service (`amsync plan --detailed-exitcode` exits 0).',
    '',
    '- No secrets: passwords are write-only and apikey tokens are made by the service, so neither',
    '  is here. An existing SSH user needs no password (its password is left alone); add',
    '  `password: { env: NAME }` to a user for amsync to set and track it.',
    '- Values equal to the defaults are left out: level n1, superuser false, roles [].',
    ...(exported.desired.apikeys.some((k) => k.roleNames !== undefined)
      ? ["- Roles are written by name where the service's roles listing names them uniquely, else by id."]
      : []),
    ...(exported.pinned > 0 ? ['- Apikeys that share a name carry `id:`, which tells them apart (names are not unique).'] : []),
    '- prune is off: an item removed from this file is left alone on the service, not deleted.',
    ...(schemaRef === undefined
      ? [`- For completion in editors: \`amsync export --write-schema -o FILE\` writes the JSON Schema beside the file and points to it (or \`amsync schema > ${schemaFileName}\`).`]
      : []),
  ];
  if (exported.skipped.length > 0) {
    lines.push('- Left out, as a desired-state file cannot declare them (they stay unmanaged):');
    for (const s of exported.skipped) lines.push(`    ${s.kind} ${JSON.stringify(s.key)} (id ${s.id}): ${s.reason}`);
  }
  return lines.map((l) => (l === '' ? '#' : `# ${l}`)).join('\n');
}

/**
 * `--role-names`: each apikey's roles by name where the listing names the role uniquely and
 * the name can be written in a desired-state file; by id otherwise.
 */
export function withRoleNames(exported: DesiredFromActual, roles: readonly NamedRole[] | undefined): DesiredFromActual {
  if (roles === undefined) return exported;
  const names = namesOf(roles);
  const writable = (name: string | undefined): name is string => name !== undefined && name !== '' && name.trim() === name;
  const apikeys = exported.desired.apikeys.map((k): DesiredApikey => {
    const named = k.roles.filter((id) => writable(names.get(id)));
    if (named.length === 0) return k;
    return { ...k, roles: k.roles.filter((id) => !named.includes(id)), roleNames: named.map((id) => ({ name: names.get(id) as string })) };
  });
  return { ...exported, desired: { ...exported.desired, apikeys } };
}

/**
 * The installed schema, relative to the folder the file is written to (a language server
 * resolves it from there), when that path stays inside the folder's tree or leads into a
 * node_modules: a path that climbs out to wherever amsync happens to be installed would be
 * meaningless in a repository. Otherwise none: a reference that resolves nowhere is worse
 * than none (the header says how to get one: --write-schema).
 */
export function schemaRefFor(folder: string, schemaPath: string = installedSchema): string | undefined {
  const ref = relative(folder, schemaPath).split('\\').join('/');
  if (!isAbsolute(ref) && (!ref.startsWith('../') || ref.includes('/node_modules/'))) return ref;
  return undefined;
}

