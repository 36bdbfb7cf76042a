import { escapeControls } from './safe-text.js';

/** The five characters HTML gives a meaning in text and in quoted attribute values. */
const special: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/**
 * Text for an HTML page (element content or a double- or single-quoted attribute value):
 * `& < > " '` as character references, so a name from the service or a file (`<script>`,
 * `<img onerror=…>`, a quote closing an attribute) stays text; then the controls, line
 * separators and bidirectional controls as visible `\uXXXX` (escapeControls): a name cannot
 * reorder what the page shows next to it. Pure.
 */
export function escapeHtml(text: string): string {
  return escapeControls(text).replace(/[&<>"']/g, (ch) => special[ch]!);
}
