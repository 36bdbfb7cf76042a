import { GENERATED, SENSITIVE, SENSITIVE_UNAVAILABLE, type Change, type Plan } from '../model/index.js';
import { escapeControls, jsonSafe } from '../text/index.js';

/**
 * One value as the text and Markdown renderers show it. Strings are JSON-quoted, with C1 and
 * bidi controls escaped too, so a name holding terminal escapes or U+202E (it comes from the
 * service) cannot move the cursor, fake a line of the plan or reorder what follows.
 */
export function renderValue(value: unknown): string {
  if (value === SENSITIVE || value === SENSITIVE_UNAVAILABLE || value === GENERATED) return value;
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return `[${value.map(renderValue).join(', ')}]`;
  if (typeof value === 'string') return quoteKey(value);
  return String(value);
}

/**
 * A field's value, with role ids named when names are known: `[3 auditor, 7 billing]`. A name
 * that is not one plain word is quoted, so it cannot fake the rest of the line.
 */
export function renderField(field: string, value: unknown, roleNames: ReadonlyMap<number, string> | undefined): string {
  if (field !== 'roles' || roleNames === undefined || roleNames.size === 0 || !Array.isArray(value)) return renderValue(value);
  return `[${value
    .map((id: unknown) => {
      const name = typeof id === 'number' ? roleNames.get(id) : undefined;
      if (name === undefined) return renderValue(id);
      return `${id} ${/^[\w.@-]{1,64}$/.test(name) ? name : JSON.stringify(name)}`;
    })
    .join(', ')}]`;
}

export function quoteKey(key: string): string {
  return jsonSafe(JSON.stringify(key));
}

/** Free text (messages, errors) with control and bidi characters shown as escapes, never sent raw. */
export function safeText(text: string): string {
  return escapeControls(text);
}

/**
 * A change's value after, as shown: a password this run could not read (`--secrets optional`)
 * is `(sensitive, not available to this run)` instead of `(sensitive)`.
 */
export function afterValue(change: Change, field: string, value: unknown, unavailable: ReadonlySet<string>): unknown {
  return value === SENSITIVE && field === 'password' && change.kind === 'sshUser' && unavailable.has(change.key) ? SENSITIVE_UNAVAILABLE : value;
}

/** The SSH users whose change sends a password the plan was made without. */
export function unavailableOf(plan: Plan): ReadonlySet<string> {
  return new Set(plan.passwordsUnavailable?.changes ?? []);
}
