import * as z from 'zod';
import { EmulatorError } from './errors.js';
import { compileRules, faultRuleSchema, fireRule, ruleStats, type CompiledRule } from './fault-rules.js';
import { oneError, type Reply } from './reply.js';
import type { Rng } from './rng.js';
import { defaultBurst, TokenBucket } from './token-bucket.js';
import type { AnotherClientRequest, FaultRuleStats, FaultSettings } from './types.js';

/** A change of fault settings: any subset; `rules`, when given, replaces all rules. */
export const faultSettingsPatchSchema = z.strictObject({
  rateLimit: z.number().positive().finite().nullable().optional(),
  rateLimitBurst: z.number().min(1).finite().nullable().optional(),
  rateLimitRetryAfter: z.boolean().optional(),
  latencyMs: z.number().min(0).max(600_000).optional(),
  failRate: z.number().min(0).max(1).optional(),
  maintenance: z.boolean().optional(),
  asyncWrites: z.boolean().optional(),
  asyncDelayMs: z.number().min(0).max(600_000).optional(),
  rules: z.array(faultRuleSchema).optional(),
});

export const defaultFaultSettings: Readonly<FaultSettings> = {
  rateLimit: null,
  rateLimitBurst: null,
  latencyMs: 0,
  failRate: 0,
  maintenance: false,
  asyncWrites: false,
  asyncDelayMs: 50,
  rules: [],
};

export type ListMode = 'normal' | 'duplicatePage' | 'cursorLoop' | 'reorderPage';

/** How the faults shape one API request, decided when it arrives. */
export interface FaultPlan {
  /** Answer this instead of performing the request. */
  answer?: Reply;
  /** For the request log. */
  label?: string;
  delayMs: number;
  /** Destroy the connection before answering; the request is not performed. */
  reset: boolean;
  /** Send an interim 102 before the answer. */
  processing: boolean;
  commitThenFail?: 'reset' | 500 | 502 | 504;
  malformed: boolean;
  listMode: ListMode;
  /** Expire the request's bearer token before authenticating it (it then answers 401). */
  expireToken: boolean;
  /** Another client's write to the same item, performed just before this request. */
  concurrentWrite?: 'create' | 'delete';
  /** Another client's request to any item, performed just before this request. */
  anotherClient?: AnotherClientRequest;
  /** List routes: an item renamed as the page is served, listed again if already passed. */
  shiftPage?: { id: number; to: string };
  /** `answer` is to quote the request in every encoding (the HTTP layer has the request). */
  echo?: 'json' | 'text';
  /** Answer a body that never ends. */
  endless: boolean;
  /** Held until released: before it is performed, or after (its answer held back). */
  hold?: 'before' | 'after';
}

/**
 * The faults of one emulator: settings, the rate-limit bucket, the rules and their counters.
 * Randomness and the clock come in, so a seed replays the same chaos.
 */
export class FaultController {
  private settings: FaultSettings;
  private bucket: TokenBucket | null = null;
  private rules: CompiledRule[] = [];

  constructor(
    initial: Partial<FaultSettings>,
    private readonly rng: Rng,
    private readonly nowMs: () => number,
  ) {
    this.settings = { ...defaultFaultSettings };
    this.update(initial);
  }

  get current(): FaultSettings {
    return { ...this.settings, rules: [...this.settings.rules] };
  }

  get stats(): FaultRuleStats[] {
    return ruleStats(this.rules);
  }

  /** Validates and applies a change; throws EmulatorError('emulator_faults') on a bad one. */
  update(patch: unknown): FaultSettings {
    const parsed = faultSettingsPatchSchema.safeParse(patch);
    if (!parsed.success) {
      throw new EmulatorError('emulator_faults', `Invalid fault settings: ${z.prettifyError(parsed.error)}`, { cause: parsed.error });
    }
    const p = parsed.data;
    const next: FaultSettings = { ...this.settings };
    for (const key of Object.keys(p) as (keyof FaultSettings)[]) {
      if (p[key] !== undefined) (next as unknown as Record<string, unknown>)[key] = p[key];
    }
    if (p.rules !== undefined) this.rules = compileRules(p.rules);
    if (p.rateLimit !== undefined || p.rateLimitBurst !== undefined) {
      this.bucket = next.rateLimit === null ? null : new TokenBucket(next.rateLimit, next.rateLimitBurst ?? defaultBurst(next.rateLimit), this.nowMs);
    }
    this.settings = next;
    return this.current;
  }

  /** Decides the faults of one API request; call once per request, in arrival order. */
  admit(method: string, path: string): FaultPlan {
    const plan: FaultPlan = { delayMs: 0, reset: false, processing: false, malformed: false, listMode: 'normal', expireToken: false, endless: false };
    const s = this.settings;
    if (s.maintenance) {
      plan.answer = oneError(503, 'service', 'rule', 'the service is unavailable for maintenance');
      plan.label = 'maintenance';
      return plan;
    }
    if (this.bucket) {
      const take = this.bucket.take();
      if (!take.ok) {
        const seconds = Math.max(1, Math.ceil(take.retryAfterMs / 1000));
        const headers: Record<string, string> = s.rateLimitRetryAfter === false ? {} : { 'Retry-After': String(seconds) };
        plan.answer = oneError(503, 'rate', 'rule', 'too many requests', headers);
        plan.label = 'rate-limit';
        return plan;
      }
    }
    if (s.latencyMs > 0) plan.delayMs = s.latencyMs * (0.5 + this.rng());
    const fired = fireRule(this.rules, method, path, this.rng, this.nowMs);
    if (fired) {
      this.applyRule(fired, plan);
      return plan;
    }
    if (s.failRate > 0 && this.rng() < s.failRate) {
      const status = [500, 502, 504][Math.floor(this.rng() * 3)] ?? 500;
      plan.answer = oneError(status, 'service', 'rule', `injected failure ${status}`);
      plan.label = 'fail-rate';
    }
    return plan;
  }

  private applyRule(r: CompiledRule, plan: FaultPlan): void {
    const rule = r.rule;
    plan.label = r.label;
    plan.delayMs += rule.delayMs ?? 0;
    if (rule.status === 102) {
      plan.processing = true;
    } else if (rule.status !== undefined) {
      const headers: Record<string, string> = {};
      if (rule.retryAfter !== undefined) headers['Retry-After'] = String(rule.retryAfter);
      if (rule.retryAfterDateIn !== undefined) {
        headers['Retry-After'] = new Date(this.nowMs() + plan.delayMs + rule.retryAfterDateIn * 1000).toUTCString();
      }
      plan.answer = {
        status: rule.status,
        body: rule.status >= 400 ? { errors: rule.errors ?? [{ field: 'service', type: 'rule', msg: `injected fault ${rule.status}` }] } : {},
        headers,
      };
    }
    plan.reset = rule.reset === true;
    if (rule.commitThenFail !== undefined) plan.commitThenFail = rule.commitThenFail;
    plan.malformed = rule.malformed === true;
    if (rule.duplicatePage) plan.listMode = 'duplicatePage';
    if (rule.cursorLoop) plan.listMode = 'cursorLoop';
    if (rule.reorderPage) plan.listMode = 'reorderPage';
    plan.expireToken = rule.expireToken === true;
    if (rule.concurrentWrite !== undefined) plan.concurrentWrite = rule.concurrentWrite;
    if (rule.anotherClient !== undefined) plan.anotherClient = rule.anotherClient;
    if (rule.shiftPage !== undefined) plan.shiftPage = rule.shiftPage;
    if (rule.echo !== undefined) plan.echo = rule.echo;
    plan.endless = rule.endless === true;
    if (rule.hold !== undefined) plan.hold = rule.hold;
  }
}
