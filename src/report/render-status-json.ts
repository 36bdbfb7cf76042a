import { jsonSafe } from '../text/index.js';
import type { StatusSnapshot } from './status-snapshot.js';

/**
 * `GET /status.json`: the snapshot the page is rendered from, as it is (formatVersion 1), so a
 * script reads the same facts a person sees. Controls and bidi characters as `\uXXXX`. Pure.
 */
export function renderStatusJson(snapshot: StatusSnapshot): string {
  return `${jsonSafe(JSON.stringify({ formatVersion: 1, ...snapshot }, null, 2))}\n`;
}
