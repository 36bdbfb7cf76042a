import { dirname, join, resolve } from 'node:path';
import { desiredFromActual, renderAccessSchema, stringifyDesiredPieces, type DesiredPiece } from '../desired/index.js';
import { plan } from '../plan/index.js';
import { isFsError, localPathError, writeFileAtomic } from '../secrets/index.js';
import { readActualState } from '../state/index.js';
import { limits } from '../yaml/index.js';
import type { ServiceContext } from './app-context.js';
import { exportHeader, schemaFileName, schemaRefFor, withRoleNames } from './export-header.js';
import { verifyRoundTrip } from './export-round-trip.js';
import type { ServiceObserver } from './observed-service.js';

/** Where an export writes besides its file: stdout (no -o) and the notes on stderr. */
export interface ExportStreams {
  readonly stdout: ChunkStream;
  readonly stderr: { write(text: string): unknown };
}

/** A stream that says when it is full (`write` false) and, when it can, when it drained. */
export interface ChunkStream {
  write(chunk: string): boolean;
  once?(event: 'drain', listener: () => void): unknown;
}

export interface ExportRequest {
  /** `-o FILE`; stdout without. */
  readonly output: string | undefined;
  /** `--write-schema`: the JSON Schema beside the output, and `$schema` pointing at it. */
  readonly writeSchema: boolean;
  /** `--schema REF`. */
  readonly schema: string | undefined;
  /** `--role-names`. */
  readonly roleNames: boolean;
  /** Sees the listing's pages (the progress line); told `done` once the listing ended. */
  readonly observer?: ServiceObserver;
  readonly listed?: () => void;
  /** The folder a relative schema reference is made from when there is no -o. */
  readonly cwd: string;
}

/**
 * The export use case: the actual state as a desired-state file with no secrets, checked to
 * validate and plan zero changes against the listing it came from (Terraform's import-verify)
 * before a byte is written, then written piece by piece. The caller opens and finishes `context`.
 */
export async function exportState(context: ServiceContext, request: ExportRequest, streams: ExportStreams): Promise<void> {
  const { output } = request;
  context.client(); // a missing URL or token is a usage error, found before any request
  // So is an output file that cannot be written (exit 1): found before the listing, not after it.
  await context.checkLocalOutputs({ writes: false, files: exportFiles(output, request.writeSchema) });
  // No tokens: an export writes none (at 1M keys they would be ~100 MB held for nothing).
  const read = readActualState(context.service(request.observer), { tokens: false });
  const { state } = await read.finally(() => request.listed?.());
  const roles = request.roleNames ? await context.client().listRoles() : undefined;
  if (roles === null) streams.stderr.write('warning: the service has no roles listing (GET /api/roles answered 404): roles are written as ids\n');
  const exported = withRoleNames(desiredFromActual(state), roles ?? undefined);
  const schemaRef = request.writeSchema ? `./${schemaFileName}` : (request.schema ?? schemaRefFor(output === undefined ? request.cwd : dirname(resolve(output))));
  const header = `${exportHeader(context.settings.url!, schemaRef, exported)}\n\n`;
  // Written piece by piece, never as one string: checked first (nothing is written unless
  // the whole file round-trips), then written from the same pieces of the same state.
  const pieces = () => stringifyDesiredPieces(exported.desired, { omitDefaults: true });
  const bytes = verifyRoundTrip(header, pieces(), exported.desired, (desired) => plan(desired, state, { prune: desired.prune, isProtected: () => false, passwords: { mode: 'create-only' } }), roles ?? null);
  if (bytes > limits.maxFileBytes) {
    streams.stderr.write(
      `warning: the export is ${(bytes / 1024 / 1024).toFixed(1)} MB, more than the ${limits.maxFileBytes / 1024 / 1024} MB a desired-state file may have; validate and plan will refuse it\n`,
    );
  }
  if (output === undefined) {
    await writeWithBackpressure(streams.stdout, exportText(header, pieces()));
    return;
  }
  // Not a secret, so the usual mode; atomic, so an existing file is never left half written.
  const [exportFile, schemaFile] = exportFiles(output, request.writeSchema);
  if (schemaFile) await writeOrSay(schemaFile, () => writeFileAtomic(schemaFile.path, renderAccessSchema(), 0o644));
  await writeOrSay(exportFile!, () => writeFileAtomic(exportFile!.path, exportText(header, pieces()), 0o644));
  const { desired, skipped, pinned } = exported;
  const notes = [pinned > 0 ? `${pinned} apikeys pinned by id` : '', skipped.length > 0 ? `${skipped.length} left out, see the header` : ''].filter(Boolean);
  streams.stderr.write(`Exported ${desired.sshUsers.length} SSH users and ${desired.apikeys.length} apikeys to ${output}${notes.length > 0 ? ` (${notes.join('; ')})` : ''}.\n`);
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
export async function writeWithBackpressure(stream: ChunkStream, chunks: Iterable<string>): Promise<void> {
  for (const chunk of chunks) {
    if (!stream.write(chunk) && stream.once !== undefined) await new Promise<void>((resolve) => stream.once!('drain', resolve));
  }
}
