import { readFile, stat } from 'node:fs/promises';
import * as z from 'zod';
import { InvalidInputError } from '../errors.js';
import { maxPlanFileBytes, parseSavedPlan, serialiseSavedPlan, type SavedPlan } from '../saved-plan/index.js';
import { scrub, writeFileAtomic } from '../secrets/index.js';
import { jsonSafe } from '../text/index.js';
import { targetNamePattern } from '../desired/index.js';

export const fleetPlanKind = 'amsync-fleet-plan';
export const fleetPlanFormatVersion = 1;

/** One target's part of a saved fleet plan: the single-target saved plan, whole. */
export interface SavedTargetPlan {
  readonly name: string;
  readonly url: string;
  readonly plan: SavedPlan;
}

/**
 * A saved fleet plan (`amsync plan --targets FILE --out PLANFILE`): each target's saved plan
 * (its changes, the settings that shaped them, the listing and its fingerprint), so `amsync
 * apply PLANFILE --targets FILE` can check every target before it writes to any. No secret,
 * like a single plan: passwords are references.
 */
export interface SavedFleetPlan {
  readonly formatVersion: typeof fleetPlanFormatVersion;
  readonly kind: typeof fleetPlanKind;
  readonly amsyncVersion: string;
  readonly createdAt: string;
  readonly desiredFile: string;
  readonly desiredFileHash: string;
  /** The targets file as given, for messages; URLs and credentials come from it again at apply time. */
  readonly targetsFile: string;
  readonly targets: readonly SavedTargetPlan[];
}

/**
 * The file's text. Each target's plan is the single plan's own document (so it reads and
 * checks the same way); the listing snapshots make up most of it.
 */
export function serialiseFleetPlan(saved: SavedFleetPlan): string {
  const { targets, ...head } = saved;
  const parts = targets.map((t) => {
    const inner = serialiseSavedPlan(t.plan).trimEnd().split('\n').join('\n      ');
    return `    {\n      "name": ${JSON.stringify(t.name)},\n      "url": ${JSON.stringify(t.url)},\n      "plan": ${inner}\n    }`;
  });
  const headText = JSON.stringify(head, null, 2);
  return `${headText.slice(0, -2)},\n  "targets": [\n${parts.join(',\n')}\n  ]\n}\n`;
}

/** Written like a single plan: 0600, atomically, through the one redaction step. */
export async function writeFleetPlan(path: string, saved: SavedFleetPlan): Promise<void> {
  await writeFileAtomic(path, jsonSafe(scrub(serialiseFleetPlan(saved))), 0o600);
}

const headSchema = z.strictObject({
  formatVersion: z.literal(fleetPlanFormatVersion),
  kind: z.literal(fleetPlanKind),
  amsyncVersion: z.string().min(1),
  createdAt: z.iso.datetime(),
  desiredFile: z.string().min(1),
  desiredFileHash: z.string().regex(/^[0-9a-f]{64}$/),
  targetsFile: z.string().min(1),
  targets: z.array(z.strictObject({ name: z.string().regex(targetNamePattern), url: z.url({ protocol: /^https?$/ }), plan: z.unknown() })).min(1),
});

/** Plan file text -> SavedFleetPlan, or InvalidInputError (exit 65) saying what is wrong. */
export function parseFleetPlan(text: string, shownPath: string): SavedFleetPlan {
  const invalid = (code: string, message: string) => new InvalidInputError(message, [], code);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw invalid('plan_invalid', `${shownPath} is not an amsync plan file: it is not JSON; make one with \`amsync plan --targets FILE --out PLANFILE\``);
  }
  const doc = raw !== null && typeof raw === 'object' && !Array.isArray(raw) ? (raw as Record<string, unknown>) : undefined;
  if (doc?.kind === 'amsync-plan') {
    throw invalid('plan_foreign', `${shownPath} is a plan for one service, not a fleet plan: apply it without --targets (and with --url)`);
  }
  if (doc?.kind !== fleetPlanKind) throw invalid('plan_foreign', `${shownPath} is not an amsync fleet plan (it has no "kind": "${fleetPlanKind}"); make one with \`amsync plan --targets FILE --out PLANFILE\``);
  if (doc.formatVersion !== fleetPlanFormatVersion) {
    throw invalid('plan_version', `${shownPath} is an amsync fleet plan of format ${JSON.stringify(doc.formatVersion)}; this amsync reads format ${fleetPlanFormatVersion}: plan again with this version`);
  }
  const head = headSchema.safeParse(raw);
  if (!head.success) throw invalid('plan_invalid', `${shownPath} is a damaged or edited amsync fleet plan (${head.error.issues[0]?.message ?? 'invalid'}); plan again`);
  const names = new Set<string>();
  const targets = head.data.targets.map((t): SavedTargetPlan => {
    if (names.has(t.name)) throw invalid('plan_invalid', `${shownPath} names target ${t.name} twice; plan again`);
    names.add(t.name);
    const plan = parseSavedPlan(JSON.stringify(t.plan), `${shownPath} (target ${t.name})`);
    if (plan.serviceUrl !== t.url || plan.desiredFileHash !== head.data.desiredFileHash) {
      throw invalid('plan_invalid', `${shownPath} is a damaged or edited amsync fleet plan: the plan of target ${t.name} does not belong to it; plan again`);
    }
    return { name: t.name, url: t.url, plan };
  });
  return { ...head.data, targets };
}

/** Reads and checks a fleet plan file (bounded, a regular file); InvalidInputError (65) otherwise. */
export async function readFleetPlan(path: string, shownPath: string): Promise<SavedFleetPlan> {
  return parseFleetPlan(await readPlanText(path, shownPath), shownPath);
}

/** Whether the file at `path` is a saved fleet plan (for a helpful message when --targets is missing). */
export async function isFleetPlanFile(path: string): Promise<boolean> {
  try {
    const doc = JSON.parse(await readPlanText(path, path)) as { kind?: unknown };
    return doc?.kind === fleetPlanKind;
  } catch {
    return false;
  }
}

async function readPlanText(path: string, shownPath: string): Promise<string> {
  const unreadable = (why: string, cause?: unknown) => new InvalidInputError(`cannot read the plan file ${shownPath}: ${why}`, [], 'plan_unreadable', { cause });
  try {
    const info = await stat(path);
    if (!info.isFile()) throw unreadable(info.isDirectory() ? 'it is a directory' : 'it is not a regular file');
    if (info.size > maxPlanFileBytes) throw unreadable(`it is larger than ${maxPlanFileBytes / 1024 / 1024} MB`);
    return await readFile(path, 'utf8');
  } catch (error) {
    if (error instanceof InvalidInputError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    throw unreadable(code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : String(code ?? 'read error'), error);
  }
}
