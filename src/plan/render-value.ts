import { SENSITIVE } from '../model/index.js';

/**
 * One value as the text and Markdown renderers show it. Strings are JSON-quoted so a name
 * holding control characters or terminal escapes (it comes from the service) cannot move
 * the cursor or fake a line of the plan.
 */
export function renderValue(value: unknown): string {
  if (value === SENSITIVE) return SENSITIVE;
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return `[${value.map(renderValue).join(', ')}]`;
  if (typeof value === 'string') return JSON.stringify(value);
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
  return JSON.stringify(key);
}

/** Free text (messages, errors) with control characters shown as escapes, never sent raw. */
export function safeText(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
