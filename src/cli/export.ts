import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { AmsyncError, UsageError } from '../errors.js';
import type { DesiredApikey, DesiredSshUser, DesiredState, NamedRole } from '../model/index.js';
import { apikeyKind, sshUserKind } from '../model/index.js';
import { desiredFromActual, type DesiredFromActual, type DesiredPiece, namesOf, parseDesired, renderAccessSchema, resolveRoleNames, sameDeclaredItem, stringifyDesiredPieces } from '../desired/index.js';
import { isFsError, localPathError, writeFileAtomic } from '../secrets/index.js';
import { limits } from '../yaml/index.js';
import type { CommandContext } from './command-context.js';
import type { CliIo, OutputStream } from './io.js';
import { addConnectionOptions, refuseOptions, type ServiceOptions } from './shared-options.js';
import { addFleetOptions, checkFleetFlags, resolveTargetsFile, type FleetOptions } from './fleet-options.js';

export interface ExportOptions extends ServiceOptions, FleetOptions {
  readonly output?: string;
  readonly schema?: string;
  /** `--write-schema`: the JSON Schema beside the output, and `$schema` pointing at it. */
  readonly writeSchema?: boolean;
  /** `--role-names`: roles by name where the roles listing answers. */
  readonly roleNames?: boolean;
}

/** The name of the schema `--write-schema` writes beside the export. */
export const schemaFileName = 'access.schema.json';

/** The installed JSON Schema of the desired-state file (dist/cli/ and src/cli/ alike). */
const installedSchema = fileURLToPath(new URL('../../config/access.schema.json', import.meta.url));

/** Flags of the other commands that mean nothing to an export: refused with why, not silently ignored. */
const unusedFlags: readonly { flags: string; flag: string; hint: string }[] = [
  { flags: '-f, --file <FILE>', flag: '-f/--file', hint: 'export writes a desired-state file: name it with -o FILE' },
  { flags: '--out <FILE>', flag: '--out', hint: 'name the output with -o/--output FILE' },
  { flags: '--prune', flag: '--prune', hint: 'an export never prunes: it leaves prune off' },
  { flags: '--max-deletes <N>', flag: '--max-deletes', hint: 'an export deletes nothing' },
  { flags: '--detailed-exitcode', flag: '--detailed-exitcode', hint: 'an export has no plan' },
  { flags: '--json', flag: '--json', hint: 'an export is YAML, a desired-state file' },
  { flags: '--format <FORMAT>', flag: '--format', hint: 'an export is YAML, a desired-state file' },
];

/**
 * `amsync export [-o FILE]`: the actual state as a desired-state file, with no secrets, that
 * validates and plans zero changes against the same service (the import round trip that
 * Terraform's import-verify checks). amsync checks that round trip itself before writing.
 */
export function registerExportCommand(program: Command, ctx: CommandContext): void {
  const cmd = program.command('export').description('write the actual state as a desired-state file (no secrets) that plans zero changes: the way to start managing a service');
  addConnectionOptions(cmd)
    .option('-o, --output <FILE>', 'write to FILE (atomically) instead of stdout')
    .option('--schema <REF>', 'the `$schema` reference in the header (default: the installed config/access.schema.json, relative to the output, when it lies there)')
    .option('--role-names', "write apikey roles by name (GET /api/roles) instead of by id; ids where a name is not unique or the service has no roles listing")
    .option('--write-schema', `also write the JSON Schema beside the output, as ${schemaFileName}, and point \`$schema\` at it (needs -o)`);
  addFleetOptions(cmd, { selector: false, concurrency: false });
  refuseOptions(
    cmd,
    unusedFlags.map(({ flags, flag, hint }) => ({ flags, message: `${flag} has no meaning for export: ${hint}` })),
  ).action(async (opts: ExportOptions) => {
    await runExport(opts, ctx.io);
  });
}

export async function runExport(opts: ExportOptions, io: CliIo): Promise<void> {
  const output = opts.output;
  if (opts.writeSchema === true && output === undefined) throw new UsageError(`--write-schema writes ${schemaFileName} beside the export: name the export with -o FILE`, 'conflicting_flags');
  if (opts.writeSchema === true && opts.schema !== undefined) throw new UsageError('--write-schema and --schema both set the `$schema` reference: give one', 'conflicting_flags');
  // Fleet: --targets FILE --target NAME exports that one target.
  const targetsFile = resolveTargetsFile(opts, io.env);
  checkFleetFlags(opts, targetsFile);
  const settings = targetsFile === undefined ? undefined : await (await import('./fleet.js')).fleetExportSettings(opts, io.env, targetsFile);
  // Loaded here, not at start: a cold `amsync validate` needs neither the client, the state
  // reader, the planner nor the progress line.
  const [{ createServiceContext }, { LiveOutput }, { readActualState }, { plan }] = await Promise.all([
    import('./service-context.js'),
    import('./live-output.js'),
    import('../state/index.js'),
    import('../plan/index.js'),
  ]);
  // The progress of a long listing, on a terminal; logs pass above it.
  const live = new LiveOutput(io, { streamResults: false, color: false });
  const context = await createServiceContext(opts, io, { logStream: live.logStream, ...(settings === undefined ? {} : { settings }) }).catch((error: unknown) => {
    live.close();
    throw error;
  });
  try {
    context.client(); // a missing URL or token is a usage error, found before any request
    // So is an output file that cannot be written (exit 1): found before the listing, not after it.
    await context.checkLocalOutputs({ writes: false, files: exportFiles(output, opts.writeSchema === true) });
    // No tokens: an export writes none (at 1M keys they would be ~100 MB held for nothing).
    const read = readActualState(context.service(live), { tokens: false });
    const { state } = await read.finally(() => live.close());
    const roles = opts.roleNames === true ? await context.client().listRoles() : undefined;
    if (roles === null) io.stderr.write('warning: the service has no roles listing (GET /api/roles answered 404): roles are written as ids\n');
    const exported = withRoleNames(desiredFromActual(state), roles ?? undefined);
    const schemaRef = opts.writeSchema === true ? `./${schemaFileName}` : (opts.schema ?? schemaRefFor(output === undefined ? process.cwd() : dirname(resolve(output))));
    const header = `${exportHeader(context.settings.url!, schemaRef, exported)}\n\n`;
    // Written piece by piece, never as one string: checked first (nothing is written unless
    // the whole file round-trips), then written from the same pieces of the same state.
    const pieces = () => stringifyDesiredPieces(exported.desired, { omitDefaults: true });
    const bytes = verifyRoundTrip(header, pieces(), exported.desired, (desired) => plan(desired, state, { prune: desired.prune, isProtected: () => false, passwords: { mode: 'create-only' } }), roles ?? null);
    if (bytes > limits.maxFileBytes) {
      io.stderr.write(
        `warning: the export is ${(bytes / 1024 / 1024).toFixed(1)} MB, more than the ${limits.maxFileBytes / 1024 / 1024} MB a desired-state file may have; validate and plan will refuse it\n`,
      );
    }
    if (output === undefined) {
      await writeWithBackpressure(io.stdout, exportText(header, pieces()));
      return;
    }
    // Not a secret, so the usual mode; atomic, so an existing file is never left half written.
    const [exportFile, schemaFile] = exportFiles(output, opts.writeSchema === true);
    if (schemaFile) await writeOrSay(schemaFile, () => writeFileAtomic(schemaFile.path, renderAccessSchema(), 0o644));
    await writeOrSay(exportFile!, () => writeFileAtomic(exportFile!.path, exportText(header, pieces()), 0o644));
    const { desired, skipped, pinned } = exported;
    const notes = [pinned > 0 ? `${pinned} apikeys pinned by id` : '', skipped.length > 0 ? `${skipped.length} left out, see the header` : ''].filter(Boolean);
    io.stderr.write(`Exported ${desired.sshUsers.length} SSH users and ${desired.apikeys.length} apikeys to ${output}${notes.length > 0 ? ` (${notes.join('; ')})` : ''}.\n`);
  } finally {
    live.close();
    // A key renewal the last request started is waited for: a rotated key lost fails the run.
    await context.finish(0);
  }
}

/** `-o FILE` and, with --write-schema, the schema beside it: the files an export writes. */
function exportFiles(output: string | undefined, writeSchema: boolean): { what: string; path: string; flag: string; code: string }[] {
  if (output === undefined) return [];
  const file = { what: 'the export', path: resolve(output), flag: '-o/--output', code: 'export_unwritable' };
  return writeSchema ? [file, { what: 'the schema file', path: join(dirname(resolve(output)), schemaFileName), flag: '-o/--output (--write-schema writes it beside)', code: 'export_unwritable' }] : [file];
}

/** A write that fails after the check (a disk filled meanwhile) is the same one line. */
async function writeOrSay(file: { what: string; path: string; flag: string; code: string }, write: () => Promise<void>): Promise<void> {
  try {
    await write();
  } catch (error) {
    if (!isFsError(error)) throw error;
    throw localPathError(error, { what: file.what, path: file.path, setting: file.flag, knob: '-o' }, { code: file.code });
  }
}

/** The export's text, chunk by chunk: the header, then each piece of the YAML. */
function* exportText(header: string, pieces: Iterable<DesiredPiece>): Generator<string, void, undefined> {
  yield header;
  for (const piece of pieces) yield piece.text;
}

/** Each chunk written once the stream has room for it (stdout to a slow pipe holds at most one). */
export async function writeWithBackpressure(stream: OutputStream, chunks: Iterable<string>): Promise<void> {
  for (const chunk of chunks) {
    if (!stream.write(chunk) && stream.once !== undefined) await new Promise<void>((resolve) => stream.once!('drain', resolve));
  }
}

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
function withRoleNames(exported: DesiredFromActual, roles: readonly NamedRole[] | undefined): DesiredFromActual {
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

/**
 * Import-verify, built in: the text must parse as a valid desired-state file and plan zero
 * changes against the listing it came from. Anything else is a bug in amsync, and nothing
 * is written rather than a file that would change the service.
 *
 * Checked piece by piece, without the text (28 MB at 1M items) or a second parsed state in
 * memory: each piece of items, as a document of its own, must parse to exactly the items it
 * was written from; what lies around the lists (header, `prune`, `protect`) must parse to the
 * state's; no identity may be declared twice across pieces (as the file's own check would
 * find); and the state written must plan zero changes. Together these are the whole file's
 * round trip. Returns the text's size in bytes.
 */
export function verifyRoundTrip(
  header: string,
  pieces: Iterable<DesiredPiece>,
  written: DesiredState,
  planAgainstListing: (desired: DesiredState) => { readonly changes: readonly unknown[]; readonly problems: readonly unknown[] },
  roles: readonly NamedRole[] | null,
): number {
  const invalid = (detail: string): AmsyncError =>
    new AmsyncError('export_invalid', `the export does not validate (${detail}); nothing was written. This is a bug in amsync: please report it`);
  const parse = (text: string): DesiredState => {
    // amsync's own output is checked whatever its size: the 10 MB limit is for files people give it.
    const parsed = parseDesired(text, { file: 'export', env: {}, readSecretFile: () => new Error('an export references no secret file'), maxBytes: Number.POSITIVE_INFINITY });
    const resolved = parsed.value === undefined ? undefined : resolveRoleNames(parsed.value, roles);
    if (!parsed.value || !resolved?.ok) {
      const first = parsed.errors[0] ?? (resolved?.ok === false ? resolved.diagnostics[0] : undefined);
      throw invalid(first ? `${first.message} at ${first.path}` : 'unknown error');
    }
    return resolved.desired;
  };
  let bytes = Buffer.byteLength(header);
  // Everything but the items: the header, each list's key written as an empty list, the tail.
  let frame = header;
  const identities = new IdentityCheck();
  for (const piece of pieces) {
    bytes += Buffer.byteLength(piece.text);
    if (piece.kind === 'text') frame += piece.text;
    else if (piece.kind === 'key') frame += `${piece.list}: []\n`;
    else {
      const read = parse(`${piece.list}:\n${piece.text}`);
      const expected = resolveRoleNames({ ...emptyState, apikeys: piece.list === 'apikeys' ? piece.items : [] }, roles);
      if (!expected.ok) throw invalid(expected.message);
      if (piece.list === 'sshUsers') {
        if (read.apikeys.length > 0 || !sameList(read.sshUsers, piece.items, sameSshUser)) throw invalid(`SSH users from ${quoteName(piece.items[0]?.username)} read back differently`);
        for (const u of piece.items) identities.add('SSH user', u.username, u.id, false);
      } else {
        if (read.sshUsers.length > 0 || !sameList(read.apikeys, expected.desired.apikeys, sameApikey)) throw invalid(`apikeys from ${quoteName(piece.items[0]?.name)} read back differently`);
        for (const k of piece.items) identities.add('apikey', k.name, k.id, true);
      }
    }
  }
  const around = parse(frame);
  if (around.sshUsers.length > 0 || around.apikeys.length > 0 || !sameSettings(around, written)) throw invalid('what surrounds the lists reads back differently');
  const resolved = resolveRoleNames(written, roles);
  if (!resolved.ok) throw invalid(resolved.message);
  const roundTrip = planAgainstListing(resolved.desired);
  if (roundTrip.changes.length > 0 || roundTrip.problems.length > 0) {
    throw new AmsyncError(
      'export_not_round_trip',
      `the export would plan ${roundTrip.changes.length} changes and ${roundTrip.problems.length} problems instead of none; nothing was written. This is a bug in amsync: please report it`,
    );
  }
  return bytes;
}

const emptyState: DesiredState = { sshUsers: [], apikeys: [], prune: { sshUsers: false, apikeys: false }, protect: { sshUsers: [], apikeys: [] } };

const quoteName = (name: string | undefined): string => JSON.stringify(name ?? '');

/**
 * The desired-state file's own rule across the whole file (check-desired): a name declared
 * once, apikeys that share a name told apart by a pinned id, and an id pinned once per kind.
 */
class IdentityCheck {
  readonly #names = new Map<string, Set<string>>();
  readonly #ids = new Map<string, Set<number>>();

  add(kind: string, name: string, id: number | undefined, pinnedNamesMayRepeat: boolean): void {
    if (!(pinnedNamesMayRepeat && id !== undefined)) this.#once(this.#names, kind, name, `${kind} ${JSON.stringify(name)} is declared twice`);
    if (id !== undefined) this.#once(this.#ids, kind, id, `id ${id} is pinned twice`);
  }

  #once<T>(seen: Map<string, Set<T>>, kind: string, value: T, message: string): void {
    const set = seen.get(kind) ?? seen.set(kind, new Set()).get(kind)!;
    if (set.has(value)) throw new AmsyncError('export_invalid', `the export does not validate (${message}); nothing was written. This is a bug in amsync: please report it`);
    set.add(value);
  }
}

function sameList<T>(read: readonly T[], written: readonly T[], same: (a: T, b: T) => boolean): boolean {
  if (read.length !== written.length) return false;
  for (let i = 0; i < read.length; i += 1) if (!same(read[i]!, written[i]!)) return false;
  return true;
}

// What the planner reads of an item, by its kind's declaration (source positions differ by construction).
const sameSshUser = (a: DesiredSshUser, b: DesiredSshUser): boolean => sameDeclaredItem(sshUserKind, a, b);
const sameApikey = (a: DesiredApikey, b: DesiredApikey): boolean => sameDeclaredItem(apikeyKind, a, b);

function sameSettings(a: DesiredState, b: DesiredState): boolean {
  const sameGlobs = (x: readonly string[], y: readonly string[]) => x.length === y.length && x.every((g, i) => g === y[i]);
  return a.prune.sshUsers === b.prune.sshUsers && a.prune.apikeys === b.prune.apikeys && sameGlobs(a.protect.sshUsers, b.protect.sshUsers) && sameGlobs(a.protect.apikeys, b.protect.apikeys);
}
