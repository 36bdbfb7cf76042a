import type { Plan, PlanSummary } from '../model/index.js';

export function summarize(plan: Plan): PlanSummary {
  const count = (action: string) => plan.changes.filter((c) => c.action === action).length;
  return {
    create: count('create'),
    update: count('update'),
    delete: count('delete'),
    unchanged: plan.unchanged,
    unmanaged: plan.unmanaged.length,
  };
}
