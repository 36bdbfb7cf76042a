import { randomBytes } from 'node:crypto';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import * as z from 'zod';
import { EmulatorError } from './errors.js';
import type { StoreData } from './store.js';

/** The `--data FILE` format, checked on load: a file edited by hand must not corrupt state. */
const isoString = z.string().min(1);
const storeDataSchema = z.object({
  version: z.literal(1),
  passwordPepper: z.string().min(1),
  nextIds: z.object({ sshUsers: z.number().int().min(1), apikeys: z.number().int().min(1) }),
  sshUsers: z.array(
    z.object({
      id: z.number().int().min(1),
      username: z.string().min(1),
      level: z.string().min(1),
      passwordHash: z.string().nullable(),
      passwordVersion: z.number().int().min(0),
      created_at: isoString,
      updated_at: isoString,
    }),
  ),
  apikeys: z.array(
    z.object({
      id: z.number().int().min(1),
      name: z.string().min(1),
      superuser: z.boolean(),
      roles: z.array(z.number().int()),
      token: z.string().min(1),
      created_at: isoString,
      updated_at: isoString,
    }),
  ),
});

/** The data file's content, or null when there is no file yet. */
export async function loadDataFile(file: string): Promise<StoreData | null> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new EmulatorError('emulator_data_file', `Cannot read the data file ${file}: ${(error as Error).message}`, { cause: error });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new EmulatorError('emulator_data_file', `The data file ${file} is not JSON: ${(error as Error).message}`, { cause: error });
  }
  const parsed = storeDataSchema.safeParse(json);
  if (!parsed.success) {
    throw new EmulatorError('emulator_data_file', `The data file ${file} is not an emulator data file:\n${z.prettifyError(parsed.error)}`, { cause: parsed.error });
  }
  const ids = new Set<number>();
  const names = new Set<string>();
  for (const u of parsed.data.sshUsers) {
    if (ids.has(u.id) || names.has(u.username)) throw new EmulatorError('emulator_data_file', `The data file ${file} repeats SSH user ${u.id} '${u.username}'.`);
    ids.add(u.id);
    names.add(u.username);
  }
  ids.clear();
  for (const k of parsed.data.apikeys) {
    if (ids.has(k.id)) throw new EmulatorError('emulator_data_file', `The data file ${file} repeats apikey ${k.id}.`);
    ids.add(k.id);
  }
  return parsed.data as StoreData;
}

/**
 * Writes the state after every write with group commit: callers await a write that began
 * after their change, and changes arriving during a write share the next one. Each write
 * goes to a temporary file renamed over the old one, so a crash leaves the old or the new
 * state, never half of one.
 */
export class DataFilePersister {
  private requested = 0;
  private written = 0;
  private running: Promise<void> | null = null;
  private waiters: { gen: number; resolve: () => void; reject: (e: unknown) => void }[] = [];

  constructor(
    private readonly file: string,
    private readonly snapshot: () => StoreData,
  ) {}

  persist(): Promise<void> {
    this.requested += 1;
    const gen = this.requested;
    const done = new Promise<void>((resolve, reject) => this.waiters.push({ gen, resolve, reject }));
    this.running ??= this.loop();
    return done;
  }

  /** Waits for writes in flight (close). */
  async flush(): Promise<void> {
    while (this.running) await this.running;
  }

  private async loop(): Promise<void> {
    try {
      while (this.written < this.requested) {
        const gen = this.requested;
        try {
          await writeAtomically(this.file, JSON.stringify(this.snapshot()));
          this.written = gen;
          this.settle(gen, null);
        } catch (error) {
          this.written = gen;
          this.settle(gen, new EmulatorError('emulator_data_file', `Cannot write the data file ${this.file}: ${(error as Error).message}`, { cause: error }));
        }
      }
    } finally {
      this.running = null;
    }
  }

  private settle(gen: number, error: unknown): void {
    const ready = this.waiters.filter((w) => w.gen <= gen);
    this.waiters = this.waiters.filter((w) => w.gen > gen);
    for (const w of ready) {
      if (error === null) w.resolve();
      else w.reject(error);
    }
  }
}

async function writeAtomically(file: string, text: string): Promise<void> {
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await writeFile(tmp, text, { mode: 0o600 });
    await rename(tmp, file);
  } catch (error) {
    await rm(tmp, { force: true });
    throw error;
  }
}
