import { randomBytes } from 'node:crypto';
import { constants, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import * as z from 'zod';
import { AmsyncError } from '../errors.js';
import { writeFileAtomic } from './atomic-write.js';
import { localPathError, notRegularFile } from './local-path-error.js';

/**
 * The state file keeps, per service URL, a fingerprint of each password amsync last applied,
 * by SSH user id. It never holds a password or a token. Absent file: nothing was applied yet.
 */
const buildStateFileSchema = () =>
  z.object({
    version: z.literal(1),
    // createdAt (issue 30): when amsync created (or first managed) an item with a `ttl:`, by
    // `<kind>:<id>`, RFC 3339 UTC. Written only when there is one: older files stay as they were.
    services: z.record(
      z.string(),
      z.object({
        sshUserPasswords: z.record(z.string(), z.string()),
        createdAt: z.record(z.string(), z.string()).optional(),
        // Generated passwords (password: {generate}), by SSH user id: when amsync set each, and
        // whether its sink write failed. Absent until one is generated (older files lack it).
        generatedPasswords: z.record(z.string(), z.object({ setAt: z.iso.datetime(), lost: z.literal(true).optional() })).optional(),
        // Apikeys in rotation (rotate: {every, overlap}), by the predecessor's id: its successor's
        // id and when that was created. Absent until a key rotates (older files lack it).
        rotating: z.record(z.string(), z.object({ successor: z.int().positive(), since: z.iso.datetime() })).optional(),
        // Successor creates begun (a rotation, --replace), by the predecessor's id: the name and
        // when, saved before the POST. A run killed after it finds the twin it made by this.
        rotationIntents: z.record(z.string(), z.object({ name: z.string(), startedAt: z.iso.datetime() })).optional(),
      }),
    ),
  });
type StateFileContent = z.infer<ReturnType<typeof buildStateFileSchema>>;

// Built when a state file is first read: every command loads this module, few read the file.
let stateFileSchema: ReturnType<typeof buildStateFileSchema> | undefined;

export interface PasswordState {
  /** False when no state file exists yet: passwords are then set on create only. */
  readonly exists: boolean;
  /** Last applied fingerprints by SSH user id (as a string). */
  readonly applied: Map<string, string>;
  readonly key: Buffer;
  /** Records a password applied to user `id`; persisted by `save`. */
  record(id: number, fingerprint: string): void;
  /** Forgets the user's fingerprint and generated-password record (a deleted user). */
  forget(id: number): void;
  /** Create times of items with a `ttl:`, in ms, by `<kind>:<id>` (createdKey). Absent: none kept (a state made in code). */
  readonly createdAt?: ReadonlyMap<string, number>;
  /** Records when item `kind`/`id` was created (ms); persisted by `save`, merged like fingerprints. */
  recordCreated?(kind: string, id: number, at: number): void;
  /** Generated passwords set by amsync, by SSH user id (as a string). Optional: a state made in code may keep none. */
  readonly generated?: ReadonlyMap<string, GeneratedPasswordRecord>;
  /** Records that a generated password was set on user `id` (`lost`: its sink write failed); persisted by `save`. */
  recordGenerated?(id: number, record: GeneratedPasswordRecord): void;
  /** Apikeys in rotation, by the predecessor's id (as a string). Optional: a state made in code may keep none. */
  readonly rotating?: ReadonlyMap<string, RotatingRecord>;
  /** Records that `successor` replaces apikey `predecessor` (null: forgets the pair, the predecessor is gone); persisted by `save`. */
  recordRotating?(predecessor: number, record: RotatingRecord | null): void;
  /** Successor creates begun and not yet known to have ended, by the predecessor's id (as a string). */
  readonly rotationIntents?: ReadonlyMap<string, RotationIntent>;
  /** Records (or, null, forgets) the start of a successor's create for `predecessor`; persisted by `save`. */
  recordRotationIntent?(predecessor: number, intent: RotationIntent | null): void;
  readonly dirty: boolean;
  save(): Promise<void>;
}

/** An apikey in rotation: its successor's id and when the successor was created (epoch ms). */
export interface RotatingRecord {
  readonly successor: number;
  readonly since: number;
}

/** A successor's create begun for an apikey: its name and when (epoch ms), saved before the create is sent. */
export interface RotationIntent {
  readonly name: string;
  readonly startedAt: number;
}

/** When amsync set a generated password (epoch ms), and whether the sink lost it. */
export interface GeneratedPasswordRecord {
  readonly setAt: number;
  readonly lost?: true;
}

export interface OpenStateOptions {
  path: string;
  serviceUrl: string;
  /** AMSYNC_STATE_KEY; otherwise a random key kept beside the state file (`<path>.key`). */
  keyFromEnv?: string;
  /** How the user sets the path, for messages. @default '--state-file, AMSYNC_STATE_FILE, stateFile' */
  setting?: string;
}

const defaultSetting = '--state-file, AMSYNC_STATE_FILE, stateFile';

export async function openPasswordState(options: OpenStateOptions): Promise<PasswordState> {
  const setting = options.setting ?? defaultSetting;
  const content = await readState(options.path, setting);
  const key = await loadKey(options, content !== undefined);
  const doc: StateFileContent = content ?? { version: 1, services: {} };
  const service = normaliseUrl(options.serviceUrl);
  const applied = new Map(Object.entries(doc.services[service]?.sshUserPasswords ?? {}));
  const createdAt = new Map(Object.entries(doc.services[service]?.createdAt ?? {}).map(([k, iso]) => [k, Date.parse(iso)] as const).filter(([, ms]) => Number.isFinite(ms)));
  const ownCreated = new Map<string, string>();
  const generated = new Map(Object.entries(doc.services[service]?.generatedPasswords ?? {}).map(([id, r]) => [id, recordFromFile(r)]));
  // This run's own generated records (null: forgotten), merged like `own` below.
  const ownGenerated = new Map<string, GeneratedPasswordRecord | null>();
  const rotating = new Map(Object.entries(doc.services[service]?.rotating ?? {}).map(([id, r]) => [id, { successor: r.successor, since: Date.parse(r.since) }] as const));
  const ownRotating = new Map<string, RotatingRecord | null>();
  const intents = intentRecords(doc.services[service]?.rotationIntents, () => (changes += 1));
  // This run's own records (a fingerprint) and forgets (null), by id: a save writes them over
  // the file as it is then, not over the file as it was read, so what another run saved since
  // (one that took the writer lock from this one while it was paused) is kept.
  const own = new Map<string, string | null>();
  // Changes recorded, and how many of them the file on disk holds: a record made while a
  // save is being written must keep the state dirty (saves run during an apply).
  let changes = 0;
  let saved = 0;
  // A generated key is saved with the first state file (an empty AMSYNC_STATE_KEY counts as unset).
  let keyPending = key.generated && content === undefined;

  return {
    exists: content !== undefined,
    applied,
    key: key.value,
    get dirty() {
      return changes !== saved;
    },
    record(id, fp) {
      if (applied.get(String(id)) === fp) return;
      applied.set(String(id), fp);
      own.set(String(id), fp);
      changes += 1;
    },
    forget(id) {
      own.set(String(id), null);
      if (applied.delete(String(id))) changes += 1;
      if (generated.delete(String(id))) {
        ownGenerated.set(String(id), null);
        changes += 1;
      }
    },
    generated,
    recordGenerated(id, record) {
      generated.set(String(id), record);
      ownGenerated.set(String(id), record);
      changes += 1;
    },
    rotating,
    recordRotating(predecessor, record) {
      if (record === null ? rotating.delete(String(predecessor)) : rotating.set(String(predecessor), record)) {
        ownRotating.set(String(predecessor), record);
        changes += 1;
      }
    },
    ...intents.api,
    createdAt,
    recordCreated(kind, id, at) {
      const k = createdKey(kind, id);
      if (createdAt.get(k) === at) return;
      createdAt.set(k, at);
      ownCreated.set(k, new Date(at).toISOString());
      changes += 1;
    },
    async save() {
      if (changes === saved) return;
      const upTo = changes;
      if (keyPending && key.generated) {
        await writeFileAtomic(keyPath(options.path), key.value.toString('hex'), 0o600);
        keyPending = false;
      }
      const current = (await readState(options.path, setting)) ?? doc;
      const sorted = mergeById(current.services[service]?.sshUserPasswords, own, (fp) => fp) ?? {};
      const created = { ...(current.services[service]?.createdAt ?? {}), ...Object.fromEntries(ownCreated) };
      const createdPart = Object.keys(created).length === 0 ? {} : { createdAt: Object.fromEntries(Object.entries(created).sort(([a], [b]) => a.localeCompare(b))) };
      // Written only once there is one: a state file of a run without them is what it always was.
      const generatedPasswords = part('generatedPasswords', mergeById(current.services[service]?.generatedPasswords, ownGenerated, recordToFile));
      const rotatingPart = part('rotating', mergeById(current.services[service]?.rotating, ownRotating, (r) => ({ successor: r.successor, since: new Date(r.since).toISOString() })));
      const next: StateFileContent = { ...current, services: { ...current.services, [service]: { sshUserPasswords: sorted, ...createdPart, ...generatedPasswords, ...rotatingPart, ...intents.toFile(current.services[service]?.rotationIntents) } } };
      await writeFileAtomic(options.path, `${JSON.stringify(next, null, 2)}\n`, 0o600);
      saved = upTo;
    },
  };
}

type IntentsInFile = Record<string, { name: string; startedAt: string }>;

/** The successor creates begun (rotationIntents): as read, this run's own records (null: forgotten), and the file's part. */
function intentRecords(inFile: IntentsInFile | undefined, changed: () => void) {
  const current = new Map(Object.entries(inFile ?? {}).map(([id, r]) => [id, { name: r.name, startedAt: Date.parse(r.startedAt) }] as const));
  const own = new Map<string, RotationIntent | null>();
  return {
    api: {
      rotationIntents: current as ReadonlyMap<string, RotationIntent>,
      recordRotationIntent(predecessor: number, intent: RotationIntent | null): void {
        const id = String(predecessor);
        if (intent === null ? !current.delete(id) : (current.set(id, intent), false)) return;
        own.set(id, intent);
        changed();
      },
    },
    /** Written only once there is one: a state file of a run without them is what it always was. */
    toFile(latest: IntentsInFile | undefined): { rotationIntents?: IntentsInFile } {
      const merged = mergeById(latest, own, (r) => ({ name: r.name, startedAt: new Date(r.startedAt).toISOString() }));
      return part('rotationIntents', merged);
    },
  };
}

/** `{[key]: records}`, or nothing when there are none. */
function part<K extends string, V>(key: K, records: V | undefined): { [P in K]?: V } {
  return (records === undefined ? {} : { [key]: records }) as { [P in K]?: V };
}

/** The file's records by id with this run's own over them (null: forgotten), sorted by id; undefined when none is left. */
function mergeById<R, F>(inFile: Record<string, F> | undefined, own: ReadonlyMap<string, R | null>, toFile: (r: R) => F): Record<string, F> | undefined {
  const merged = new Map(Object.entries(inFile ?? {}));
  for (const [id, r] of own) {
    if (r === null) merged.delete(id);
    else merged.set(id, toFile(r));
  }
  return merged.size === 0 ? undefined : Object.fromEntries([...merged.entries()].sort(([a], [b]) => Number(a) - Number(b)));
}

function recordFromFile(r: { setAt: string; lost?: true | undefined }): GeneratedPasswordRecord {
  return { setAt: Date.parse(r.setAt), ...(r.lost === true ? { lost: true as const } : {}) };
}

function recordToFile(r: GeneratedPasswordRecord): { setAt: string; lost?: true } {
  return { setAt: new Date(r.setAt).toISOString(), ...(r.lost === true ? { lost: true as const } : {}) };
}

function keyPath(statePath: string): string {
  return `${statePath}.key`;
}

async function readState(path: string, setting: string): Promise<StateFileContent | undefined> {
  let text: string | undefined;
  try {
    text = await readIfPresent(path);
  } catch (error) {
    throw localPathError(error, { what: 'the state file', path, setting, knob: '--state-file' }, { code: 'state_file_unreadable', verb: 'read' });
  }
  if (text === undefined) return undefined;
  try {
    return (stateFileSchema ??= buildStateFileSchema()).parse(JSON.parse(text));
  } catch (error) {
    throw new AmsyncError('state_file_invalid', `the state file ${path} is not a valid amsync state file; move it away to start afresh (passwords are then set on create only)`, { cause: error });
  }
}

async function loadKey(options: OpenStateOptions, stateExists: boolean): Promise<{ value: Buffer; generated: boolean }> {
  if (options.keyFromEnv !== undefined && options.keyFromEnv !== '') return { value: Buffer.from(options.keyFromEnv, 'utf8'), generated: false };
  let text: string | undefined;
  try {
    text = await readIfPresent(keyPath(options.path));
  } catch (error) {
    const setting = `beside the state file: ${options.setting ?? defaultSetting}; or set AMSYNC_STATE_KEY`;
    throw localPathError(error, { what: 'the state key file', path: keyPath(options.path), setting, knob: '--state-file' }, { code: 'state_key_unreadable', verb: 'read' });
  }
  if (text !== undefined) {
    const hex = text.trim();
    if (/^[0-9a-f]{64}$/.test(hex)) return { value: Buffer.from(hex, 'hex'), generated: false };
    throw new AmsyncError('state_key_invalid', `the state key file ${keyPath(options.path)} is not 64 hex digits`);
  }
  if (stateExists) {
    // Fingerprints without their key cannot be compared; a fresh key makes them all differ,
    // which would re-set every password. Refuse instead.
    throw new AmsyncError('state_key_missing', `the state file ${options.path} exists but its key ${keyPath(options.path)} does not; set AMSYNC_STATE_KEY or restore the key file`);
  }
  return { value: randomBytes(32), generated: true };
}

/**
 * A file's text, or undefined when there is no file. Most targets of a fleet have no state file
 * and no key yet: a failed open costs a trip through the thread pool and an error (~0.1 ms, two
 * a target), a stat that finds nothing a few µs. Absent at the stat is as good an answer as
 * absent at the open; a file removed between them is still ENOENT from the open.
 */
async function readIfPresent(path: string): Promise<string | undefined> {
  if (statSync(path, { throwIfNoEntry: false }) === undefined) return undefined;
  try {
    return await readRegularFile(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * A file's text, opened without blocking and checked to be a regular file on its handle: a
 * FIFO at the path would otherwise wait for a writer forever (ENOTREG), a folder is EISDIR.
 */
async function readRegularFile(path: string): Promise<string> {
  const handle = await open(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  try {
    const refused = notRegularFile(path, await handle.stat());
    if (refused) throw refused;
    return await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
}

function normaliseUrl(url: string): string {
  return url.replace(/\/+$/, '');
}

/** The state file's key of an item's create time: `sshUser:12`. */
export function createdKey(kind: string, id: number): string {
  return `${kind}:${id}`;
}
