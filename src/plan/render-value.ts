import { SENSITIVE } from '../model/index.js';
import { escapeControls, jsonSafe } from '../text/safe-text.js';

/**
 * One value as the text and Markdown renderers show it. Strings are JSON-quoted, with C1 and
 * bidi controls escaped too, so a name holding terminal escapes or U+202E (it comes from the
 * service) cannot move the cursor, fake a line of the plan or reorder what follows.
 */
export function renderValue(value: unknown): string {
  if (value === SENSITIVE) return SENSITIVE;
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return `[${value.map(renderValue).join(', ')}]`;
  if (typeof value === 'string') return quoteKey(value);
  return String(value);
}

export function quoteKey(key: string): string {
  return jsonSafe(JSON.stringify(key));
}

/** Free text (messages, errors) with control and bidi characters shown as escapes, never sent raw. */
export function safeText(text: string): string {
  return escapeControls(text);
}
