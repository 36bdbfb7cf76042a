export type { Report } from './report.js';
export { positionText } from './report.js';
export { renderJson, toJsonDocument } from './render-json.js';
export { applySummary, defaultListLimit, renderNotStarted, renderPlanText, renderResultLine, renderText } from './render-text.js';
export type { TextOptions } from './render-text.js';
export { renderMarkdown, type MarkdownOptions } from './render-markdown.js';
export { mdCode, mdText } from './markdown-escape.js';
export { quoteKey } from './render-value.js';
export { renderValue } from './render-value.js';
