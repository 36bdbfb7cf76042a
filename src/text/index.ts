export { escapeControls } from './safe-text.js';
export { jsonSafe } from './safe-text.js';
export { compareStrings } from './compare.js';
export { escapeHtml } from './html-escape.js';
