import * as z from 'zod';
import type { TargetSelector } from '../model/index.js';

/**
 * `targets:` in the desired file (README, "Fleet: one access file, many services"): which targets of a fleet an item is for.
 * The names and labels it refers to are those of the targets file (src/fleet/), which checks
 * them against the same patterns.
 */

/** A target's name: a DNS label, so it can name a Lease, a folder and a metrics label value. */
export const targetNamePattern = /^[a-z0-9][a-z0-9-]{0,62}$/;
/** A label key, as Kubernetes spells them (`site`, `example.com/tier`). */
export const labelKeyPattern = /^[A-Za-z0-9]([A-Za-z0-9._/-]{0,62})$/;
/** A label value: one word of at most 63 characters. */
export const labelValuePattern = /^[A-Za-z0-9._-]{1,63}$/;

// Built when first asked for (a memo each): every command loads this module, and a desired
// file the quick check accepts (quick-check.ts) never needs them.
let nameSchema: z.ZodString | undefined;
let labelSchema: z.ZodRecord<z.ZodString, z.ZodString> | undefined;

export function targetNameSchema(): z.ZodString {
  nameSchema ??= z
    .string()
    .regex(targetNamePattern, { error: (issue) => `${JSON.stringify(issue.input)} is not a target name (lowercase letters, digits and -, at most 63, not starting with -)` })
    .meta({ description: 'A target of the targets file, by name.' });
  return nameSchema;
}

export function labelsSchema(): z.ZodRecord<z.ZodString, z.ZodString> {
  labelSchema ??= z
    .record(
      z.string().regex(labelKeyPattern, { error: (issue) => `${JSON.stringify(issue.input)} is not a label key (letters, digits, . _ / -, at most 63)` }),
      z.string().regex(labelValuePattern, { error: 'a label value is one word of letters, digits, . _ and - (at most 63)' }),
    )
    .meta({ description: 'Labels, `{site: sp, env: prod}`.' });
  return labelSchema;
}

export const buildTargetSelectorSchema = () =>
  z
    .union([
      z.array(targetNameSchema()).meta({ title: 'target names', description: 'These targets, by name: `[sp-1, rj-2]`.' }),
      labelsSchema().meta({ title: 'label selector', description: 'Every target carrying all these labels: `{site: sp, env: prod}`; `{}` selects every target.' }),
    ])
    .meta({ description: 'Fleet only (--targets): the targets this is for, by name or by labels (ANDed). Default: every target.' });

/** The file's form of a selector -> the model's. */
export function toTargetSelector(written: readonly string[] | Readonly<Record<string, string>>): TargetSelector {
  return Array.isArray(written) ? { names: [...(written as readonly string[])] } : { labels: { ...(written as Readonly<Record<string, string>>) } };
}

/** A target as selectors see it. */
export interface SelectableTarget {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
}

/** Whether `selector` (absent: every target) selects `target`. Pure. */
export function selectorMatches(selector: TargetSelector | undefined, target: SelectableTarget): boolean {
  if (selector === undefined) return true;
  if ('names' in selector) return selector.names.includes(target.name);
  for (const [key, value] of Object.entries(selector.labels)) if (target.labels[key] !== value) return false;
  return true;
}
