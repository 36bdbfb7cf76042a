import type { Plan, PlanSummary } from '../model/index.js';
import { expiredReason } from './expiry-plan.js';

export function summarize(plan: Plan): PlanSummary {
  const count = (action: string) => plan.changes.filter((c) => c.action === action).length;
  return {
    create: count('create'),
    update: count('update'),
    delete: count('delete'),
    unchanged: plan.unchanged,
    unmanaged: plan.unmanaged.length,
    ...expiredCount(plan),
  };
}

/** The deletes of expired items, counted apart (only when there are some: summaries of other plans are as they were). */
function expiredCount(plan: Plan): { expired?: number } {
  const n = plan.changes.filter((c) => c.action === 'delete' && c.reason === expiredReason).length;
  return n > 0 ? { expired: n } : {};
}
