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

export function quoteKey(key: string): string {
  return JSON.stringify(key);
}

/** Free text (messages, errors) with control characters shown as escapes, never sent raw. */
export function safeText(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
