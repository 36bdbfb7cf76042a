import { createHash } from 'node:crypto';
import type { Change, FieldDeclaration } from '../model/index.js';
import { fieldEntries, kinds } from '../model/index.js';

/**
 * Hex digits of an approval hash: 64 bits. Twelve (48 bits) would be easier to type, but a
 * teammate who may write the desired file and wants an escalation through could search for a
 * change whose hash collides with one already approved (an approvals file keeps old ones):
 * 2^48 sha256 is hours on one GPU, 2^64 is out of reach.
 */
export const approvalHashLength = 16;

/** Bumped only if the canonical form below changes: every approval given before then stops matching. */
const scheme = 'amsync-approval/1';

/**
 * The approval hash of one change: sha256 over a canonical form of its kind, key, remote id,
 * action and every field's before and after, passwords left out (a password is `(sensitive)`
 * in a plan anyway, and whether one is sent depends on the machine's state file). Any
 * difference in what the change does gives another hash, so an approval is bound to exactly
 * the change it was given for: a key re-planned with other roles, or a grant to another id,
 * needs a new approval. Pure.
 */
export function approvalHash(change: Change): string {
  return digest(change).slice(0, approvalHashLength);
}

/** The hash that approves a whole set of gated changes at once (order does not matter). */
export function approvalSetHash(changes: readonly Change[]): string {
  const digests = changes.map(digest).sort();
  return sha256(JSON.stringify(['amsync-approval-set/1', ...digests])).slice(0, approvalHashLength);
}

function digest(change: Change): string {
  // Sensitive fields (the password) are left out; the rest sorted by name, whatever the declaration's order.
  const declared: Readonly<Record<string, FieldDeclaration>> = kinds[change.kind].fields;
  const fields = fieldEntries(change)
    .filter(([name]) => declared[name]?.sensitive !== true)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, f]) => [name, f.before, f.after]);
  return sha256(JSON.stringify([scheme, change.kind, change.key, change.id, change.action, fields]));
}

function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** An approval as people write it (`--approve 3F9C…`, a line of an approvals file): lowercase hex, or undefined. */
export function normaliseApproval(text: string): string | undefined {
  const t = text.trim().toLowerCase();
  return new RegExp(`^[0-9a-f]{${approvalHashLength}}$`).test(t) ? t : undefined;
}
