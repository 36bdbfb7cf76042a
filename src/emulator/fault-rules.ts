import * as z from 'zod';
import type { Rng } from './rng.js';
import type { FaultRule, FaultRuleStats } from './types.js';

/**
 * Fault rules: targeted, countable faults for chaos tests, set through `PUT /_emulator/faults`
 * (`{"rules": [...]}`) or `setFaults({ rules })`. Rules are tried in order; the first that
 * fires shapes the answer. The format of one rule:
 *
 *   match    method?       "POST" or ["PUT","DELETE"], case-insensitive; default any
 *            path?         regular expression tested against the path without query,
 *                          e.g. "^/api/sshusers/\\d+$"; default any
 *            after?        let the first n matching requests through (default 0)
 *            times?        fire at most n times (default unlimited)
 *            probability?  fire with this chance, 0..1, from the seeded generator (default 1)
 *            label?        name shown as `fault` in the request log (default "rule:<index>")
 *            forMs?        once fired, fire only within this many ms of the first firing
 *                          (a window: a maintenance of a few seconds, a 503 storm)
 *   action   (exactly one, optionally with delayMs)
 *            status        answer this status without performing the request; with
 *                          retryAfter (seconds, or an HTTP-date string sent as is),
 *                          retryAfterDateIn (seconds from now, sent as an HTTP-date) and
 *                          errors (the error body). status 102 sends an interim
 *                          "102 Processing" and then the normal answer.
 *            reset: true   destroy the connection before any answer; nothing is performed
 *            commitThenFail: "reset" | 500 | 502 | 504
 *                          perform the request (a write commits), then lose the answer
 *            malformed: true
 *                          perform the request, then answer 200 with truncated JSON
 *            duplicatePage: true   (list routes) `next` moves half a page, so items repeat
 *            cursorLoop: true      (list routes) `next` points back to an earlier cursor
 *            reorderPage: true     (list routes) the page's items in a shuffled order
 *            expireToken: true     the request's bearer token expires now: 401 for it and
 *                                  every later request carrying it (token rotation tests)
 *            concurrentWrite: "create" | "delete"
 *                          another client acts first, just before the request is performed:
 *                          "create" posts the same body (an SSH user's create then gets 409),
 *                          "delete" deletes the item the path names (then 404)
 *            anotherClient: {method, path, body?}
 *                          another client's request (POST, PUT or DELETE of any item),
 *                          performed just before this one, which then proceeds as usual
 *            shiftPage: {id, to}   (list routes) another client renames item `id` to `to` as
 *                          the page is served; lying on an earlier page, it is listed again
 *                          on this one under its new name (a service sorting by name)
 *            endless: true answer 200 with a JSON body that never ends, until the client
 *                          hangs up; nothing is performed
 *            hold: "before" | "after"
 *                          keep the request waiting until released (releaseHeld(), POST
 *                          /_emulator/release): before it is performed, or after (a write
 *                          committed, its answer not sent) — to kill a client at that point
 *            delayMs       wait this long (alone: then answer normally)
 *   with status          echo: "json" | "text"  the error body quotes the request (body,
 *                          its strings, the bearer token, the token of the apikey the path
 *                          names) raw, JSON-escaped and URL-encoded; "text" as text/html
 *
 * Example: the second POST of an SSH user is committed but its answer is lost:
 *   {"method":"POST","path":"^/api/sshusers$","after":1,"times":1,"commitThenFail":504}
 */

const errorTypeSchema = z.enum(['invalid', 'duplicated', 'required', 'not_found', 'rule']);

const fieldErrorSchema = z.strictObject({ field: z.string(), type: errorTypeSchema, msg: z.string() });

const actionKeys = [
  'status',
  'reset',
  'commitThenFail',
  'malformed',
  'duplicatePage',
  'cursorLoop',
  'reorderPage',
  'expireToken',
  'concurrentWrite',
  'anotherClient',
  'shiftPage',
  'endless',
  'hold',
] as const;

const anotherClientSchema = z.strictObject({
  method: z.enum(['POST', 'PUT', 'DELETE']),
  path: z.string().regex(/^\/api\//, 'an API path, starting /api/'),
  body: z.record(z.string(), z.unknown()).optional(),
});

export const faultRuleSchema = z
  .strictObject({
    label: z.string().min(1).optional(),
    method: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]).optional(),
    path: z.string().min(1).optional(),
    after: z.number().int().min(0).optional(),
    times: z.number().int().min(0).optional(),
    probability: z.number().min(0).max(1).optional(),
    status: z
      .number()
      .int()
      .refine((s) => s === 102 || (s >= 200 && s <= 599), 'status must be 102 or from 200 to 599')
      .optional(),
    retryAfter: z.union([z.number().min(0), z.string().min(1)]).optional(),
    retryAfterDateIn: z.number().min(0).optional(),
    errors: z.array(fieldErrorSchema).optional(),
    reset: z.literal(true).optional(),
    commitThenFail: z.union([z.literal('reset'), z.literal(500), z.literal(502), z.literal(504)]).optional(),
    delayMs: z.number().min(0).max(600_000).optional(),
    malformed: z.literal(true).optional(),
    duplicatePage: z.literal(true).optional(),
    cursorLoop: z.literal(true).optional(),
    reorderPage: z.literal(true).optional(),
    expireToken: z.literal(true).optional(),
    concurrentWrite: z.enum(['create', 'delete']).optional(),
    anotherClient: anotherClientSchema.optional(),
    shiftPage: z.strictObject({ id: z.number().int().min(1), to: z.string().min(1) }).optional(),
    echo: z.enum(['json', 'text']).optional(),
    endless: z.literal(true).optional(),
    hold: z.enum(['before', 'after']).optional(),
    forMs: z.number().min(0).max(3_600_000).optional(),
  })
  .superRefine((rule, ctx) => {
    const actions = actionKeys.filter((k) => rule[k] !== undefined);
    if (actions.length > 1) ctx.addIssue({ code: 'custom', message: `a rule does one action, got ${actions.join(' and ')}` });
    if (actions.length === 0 && rule.delayMs === undefined) {
      ctx.addIssue({ code: 'custom', message: `a rule needs an action: one of ${actionKeys.join(', ')}, or delayMs` });
    }
    if (rule.status === undefined && (rule.retryAfter !== undefined || rule.retryAfterDateIn !== undefined || rule.errors !== undefined || rule.echo !== undefined)) {
      ctx.addIssue({ code: 'custom', message: 'retryAfter, retryAfterDateIn, errors and echo go with status' });
    }
    if (rule.echo !== undefined && (rule.errors !== undefined || (rule.status !== undefined && rule.status < 400))) {
      ctx.addIssue({ code: 'custom', message: 'echo makes the error body: it goes with a status from 400 upwards, without errors' });
    }
    if (rule.path !== undefined) {
      try {
        new RegExp(rule.path);
      } catch (error) {
        ctx.addIssue({ code: 'custom', path: ['path'], message: `not a regular expression: ${(error as Error).message}` });
      }
    }
  });

export interface CompiledRule {
  readonly rule: FaultRule;
  readonly label: string;
  readonly methods: ReadonlySet<string> | null;
  readonly path: RegExp | null;
  matched: number;
  fired: number;
  /** Clock reading of the first firing, for `forMs`. */
  firstFiredAt: number | null;
}

/** Rules as validated by faultRuleSchema, with fresh counters. */
export function compileRules(rules: readonly FaultRule[]): CompiledRule[] {
  return rules.map((rule, index) => ({
    rule,
    label: rule.label ?? `rule:${index}`,
    methods: rule.method === undefined ? null : new Set((Array.isArray(rule.method) ? rule.method : [rule.method]).map((m) => m.toUpperCase())),
    path: rule.path === undefined ? null : new RegExp(rule.path),
    matched: 0,
    fired: 0,
    firstFiredAt: null,
  }));
}

/** The first rule that fires for this request, counting matches and firings. */
export function fireRule(rules: readonly CompiledRule[], method: string, path: string, rng: Rng, nowMs: () => number = () => 0): CompiledRule | null {
  for (const r of rules) {
    if (r.methods !== null && !r.methods.has(method)) continue;
    if (r.path !== null && !r.path.test(path)) continue;
    r.matched += 1;
    if (r.matched <= (r.rule.after ?? 0)) continue;
    if (r.rule.times !== undefined && r.fired >= r.rule.times) continue;
    if (r.rule.forMs !== undefined && r.firstFiredAt !== null && nowMs() - r.firstFiredAt > r.rule.forMs) continue;
    if (r.rule.probability !== undefined && rng() >= r.rule.probability) continue;
    r.fired += 1;
    if (r.firstFiredAt === null) r.firstFiredAt = nowMs();
    return r;
  }
  return null;
}

export function ruleStats(rules: readonly CompiledRule[]): FaultRuleStats[] {
  return rules.map((r) => ({ matched: r.matched, fired: r.fired }));
}
