import type { ApprovalStatus, Change, ChangeResult, PasswordsUnavailable } from '../model/index.js';
import { positionText, type Report } from './report.js';
import { expiredReason, summarize } from '../plan/index.js';
import { jsonSafe } from '../text/index.js';
import { unavailableOf } from './render-value.js';

/**
 * The `--json` document (README, "Reports and summaries"). `formatVersion` changes only with a breaking change.
 * `problems`, `protected` and `notes` appear only when there are some; `results` only when
 * something was applied.
 */
export function toJsonDocument(report: Report): Record<string, unknown> {
  const { plan } = report;
  const unavailable = unavailableOf(plan);
  const doc: Record<string, unknown> = {
    formatVersion: 1,
    dryRun: report.dryRun,
    summary: summarize(plan),
    changes: plan.changes.map((c, i) => jsonChange(c, i, report, unavailable)),
    unmanaged: plan.unmanaged.map((u) => ({ kind: u.kind, key: u.key, id: u.id })),
  };
  const approvals = approvalsDocument(report.approval, plan.changes);
  if (approvals !== undefined) doc.approvals = approvals;
  const warnings = report.approval?.review.warnings ?? [];
  if (warnings.length > 0) doc.policyWarnings = warnings.map((w) => ({ rule: w.rule, message: w.message }));
  if (plan.protected.length > 0) doc.protected = plan.protected.map((p) => ({ kind: p.kind, key: p.key, id: p.id }));
  if (plan.problems.length > 0) doc.problems = plan.problems.map((p) => ({ kind: p.kind, key: p.key, code: p.code, message: p.message }));
  if (plan.notes.length > 0) doc.notes = [...plan.notes];
  // `--secrets optional`: what the plan was made without (references, never values).
  if (plan.passwordsUnavailable) doc.passwordsUnavailable = passwordsUnavailableDocument(plan.passwordsUnavailable);
  if (plan.selection !== undefined) doc.selection = { only: [...plan.selection.only], exclude: [...plan.selection.exclude], omitted: { ...plan.selection.omitted } };
  // Issue 29: present only when used, so a document of a plan without them is unchanged.
  if (plan.observed) doc.observed = plan.observed.map((c) => observedChange(c, report));
  // Issue 30: declared items with an expiry ahead (`expiresAt`); absent when there are none.
  if (plan.expiries) doc.expiries = plan.expiries.map((e) => ({ kind: e.kind, key: e.key, id: e.id, expiresAt: e.expiresAt, remainingSeconds: e.remainingSeconds }));
  if (plan.ignored) doc.ignored = plan.ignored.map((i) => ({ kind: i.kind, field: i.field, keys: i.keys === 'all' ? 'all' : [...i.keys] }));
  const roleNames = namedRoles(plan.changes, report.roleNames);
  if (roleNames !== undefined) doc.roleNames = roleNames;
  if (report.results && report.results.length > 0) doc.results = report.results.map(jsonResult);
  return doc;
}

/** C1 and bidi controls in names come out as `\uXXXX` escapes: the same document, safe on a terminal. */
export function renderJson(report: Report): string {
  return `${jsonSafe(JSON.stringify(toJsonDocument(report), null, 2))}\n`;
}

/** `{"3": "auditor"}` for the role ids the changes mention, when names are known; fields keep ids. */
function namedRoles(changes: readonly Change[], names: ReadonlyMap<number, string> | undefined): Record<string, string> | undefined {
  if (names === undefined || names.size === 0) return undefined;
  const out: Record<string, string> = {};
  for (const c of changes) {
    const roles = c.kind === 'apikey' ? c.fields.roles : undefined;
    if (roles === undefined) continue;
    for (const value of [roles.before, roles.after]) {
      if (!Array.isArray(value)) continue;
      for (const id of value) {
        const name = typeof id === 'number' ? names.get(id) : undefined;
        if (name !== undefined) out[String(id)] = name;
      }
    }
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

function passwordsUnavailableDocument(u: PasswordsUnavailable): Record<string, unknown> {
  return { references: [...u.references], changes: [...u.changes], driftNotChecked: [...u.driftNotChecked] };
}

/** A change an observed item would need: never written (`observed` of the document). */
function observedChange(c: Change, report: Report): Record<string, unknown> {
  const out: Record<string, unknown> = { kind: c.kind, action: c.action, key: c.key, id: c.id, fields: c.fields };
  if (c.renamedFrom !== undefined) out.renamedFrom = c.renamedFrom;
  if (report.sources && c.source !== undefined) out.source = positionText(c.source);
  return out;
}

function jsonChange(c: Change, index: number, report: Report, unavailable: ReadonlySet<string>): Record<string, unknown> {
  const out: Record<string, unknown> = { kind: c.kind, action: c.action, key: c.key, id: c.id, fields: c.fields };
  if (c.renamedFrom !== undefined) out.renamedFrom = c.renamedFrom;
  // The field stays `(sensitive)`, as in every plan; this says the run did not have it.
  if (c.kind === 'sshUser' && 'password' in c.fields && unavailable.has(c.key)) out.passwordAvailable = false;
  if (report.sources && c.source !== undefined) out.source = positionText(c.source);
  if (c.replaces !== undefined) out.replaces = c.replaces;
  if (c.replaced === true) out.replaced = true;
  // The delete of an expired item (issue 30); other reasons are the text's prose, not in --json.
  if (c.reason === expiredReason) out.reason = expiredReason;
  const gate = report.approval?.review.gates.find((g) => g.index === index);
  if (gate) out.approval = { hash: gate.hash, rules: [...gate.rules], approved: report.approval!.approved.includes(index) };
  else if (report.approval?.withheld.includes(index)) out.approval = { waitsForApproval: true };
  return out;
}

/**
 * The changes that need approval, when there are some: the hash of the whole set (one
 * `--approve` for all), and which are approved and which are not (not written by this run).
 */
function approvalsDocument(status: ApprovalStatus | undefined, changes: readonly Change[]): Record<string, unknown> | undefined {
  if (!status || status.review.gates.length === 0) return undefined;
  const approved = new Set(status.approved);
  const describe = (i: number) => ({ kind: changes[i]!.kind, action: changes[i]!.action, key: changes[i]!.key, id: changes[i]!.id });
  return {
    setHash: status.review.setHash,
    approved: status.review.gates.filter((g) => approved.has(g.index)).map((g) => g.hash),
    pending: status.review.gates.filter((g) => !approved.has(g.index)).map((g) => g.hash),
    withheld: status.withheld.map(describe),
  };
}

function jsonResult(r: ChangeResult): Record<string, unknown> {
  const out: Record<string, unknown> = { kind: r.kind, key: r.key, action: r.action, status: r.status };
  if (r.error !== undefined) out.error = r.error;
  if (r.drift !== undefined) out.drift = r.drift;
  if (r.approval !== undefined) out.approval = r.approval;
  if (r.notStarted === true) out.notStarted = true;
  // A replacement's two results carry both ids (the successor's and the replaced key's).
  if (r.replaces !== undefined || r.replacedBy !== undefined) out.id = r.id ?? null;
  if (r.replaces !== undefined) out.replaces = r.replaces;
  if (r.replacedBy !== undefined) out.replacedBy = r.replacedBy;
  return out;
}
