import { createRequire } from 'node:module';
import type * as Yaml from 'yaml';
import type { Alias, CST, Document, LineCounter, Node, YAMLError } from 'yaml';
import type { Diagnostic, SourcePosition } from '../model/index.js';
import { diagnosticCodes } from '../model/index.js';
import { tooLarge } from './decode.js';
import { formatPath, type DocPath } from './doc-path.js';
import { quote } from './describe-value.js';
import { limits } from './limits.js';
import { sortDiagnostics } from './sort-diagnostics.js';
import { explainYamlError } from './yaml-error-message.js';

/** A parsed YAML file that can say where any path inside it was written. */
export interface YamlSource {
  readonly file: string;
  /** The document as plain data (aliases expanded, bounded); `null` for an empty file. */
  readonly value: unknown;
  /**
   * Where `path` was written: its value (default) or its key. A path that does not exist
   * (a missing key) points at the nearest enclosing node that does.
   */
  locate(path: DocPath, at?: 'value' | 'key'): SourcePosition;
  /** The text written for a scalar at `path` (e.g. `0755`, where the value is 755). */
  rawText(path: DocPath): string | undefined;
}

export interface YamlReadResult {
  readonly source?: YamlSource;
  readonly errors: readonly Diagnostic[];
  readonly warnings: readonly Diagnostic[];
}

// yaml is loaded when a text first needs it: the fast reader (plain-yaml.ts) takes the files
// amsync writes and most that people write, so a cold `amsync validate` of such a file does
// not pay for loading it (~40 ms, a third of that command's start).
let yamlModule: typeof Yaml | undefined;
function yaml(): typeof Yaml {
  yamlModule ??= createRequire(import.meta.url)('yaml') as typeof Yaml;
  return yamlModule;
}
const isAlias = ((node: unknown) => yaml().isAlias(node)) as typeof Yaml.isAlias;
const isMap = ((node: unknown) => yaml().isMap(node)) as typeof Yaml.isMap;
const isScalar = ((node: unknown) => yaml().isScalar(node)) as typeof Yaml.isScalar;
const isSeq = ((node: unknown) => yaml().isSeq(node)) as typeof Yaml.isSeq;

// C0 controls other than tab, LF and CR, and DEL: YAML forbids them raw, and they mean binary.
// eslint-disable-next-line no-control-regex
const forbiddenControl = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;

/**
 * Text -> one YAML document with positions, or positioned errors. Pure. Guards, in order:
 * size, binary content, nesting depth (checked on yaml's iterative CST before the recursive
 * composer runs), syntax, several documents, duplicate keys, alias expansion.
 */
export function readYaml(text: string, file: string, maxBytes: number = limits.maxFileBytes): YamlReadResult {
  const size = utf8Length(text);
  if (size > maxBytes) return fail(tooLarge(size, file));
  const lineCounter = new (yaml().LineCounter)();
  const at = (offset: number): SourcePosition => {
    const { line, col } = lineCounter.linePos(offset);
    return { file, line: Math.max(line, 1), col: Math.max(col, 1) };
  };
  const control = controlCharacter(text, file);
  if (control) return fail(control);
  const parsed = parseDocuments(text, file, lineCounter, at);
  if ('error' in parsed) return fail(parsed.error);
  return readDocument(parsed.docs, text, file, at);
}

/** A control character YAML forbids raw: the text looks binary. */
function controlCharacter(text: string, file: string): Diagnostic | undefined {
  const control = forbiddenControl.exec(text);
  if (!control) return undefined;
  // Count lines ourselves: the line counter has not seen the text yet.
  const before = text.slice(0, control.index);
  const line = before.split('\n').length;
  const col = control.index - before.lastIndexOf('\n');
  const code = control[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0');
  return {
    severity: 'error',
    code: diagnosticCodes.binaryContent,
    path: '',
    message: `control character U+${code} in the file: it looks binary, not YAML text`,
    position: { file, line, col },
  };
}

/** The CST, its depth bounded, composed into documents; or the first thing that stops it. */
function parseDocuments(text: string, file: string, lineCounter: LineCounter, at: (offset: number) => SourcePosition): { docs: Document.Parsed[] } | { error: Diagnostic } {
  const { Composer, Parser } = yaml();
  let tokens: CST.Token[];
  try {
    tokens = Array.from(new Parser(lineCounter.addNewLine).parse(text));
  } catch (error) {
    return { error: yamlFailure(error, file) };
  }
  const deep = tooDeepAt(tokens);
  if (deep !== undefined) {
    return {
      error: {
        severity: 'error',
        code: diagnosticCodes.tooDeep,
        path: '',
        message: `collections nested more than ${limits.maxDepth} levels deep (amsync's files need at most 4)`,
        position: at(deep),
      },
    };
  }
  let docs: Document.Parsed[];
  try {
    // uniqueKeys is off because yaml's own check is quadratic in the keys of a map (a 10 MB
    // map of distinct keys would hang); duplicateKeys() below does it with a Set.
    docs = Array.from(new Composer({ uniqueKeys: false, prettyErrors: false, strict: true }).compose(tokens, true, text.length));
  } catch (error) {
    return { error: yamlFailure(error, file) };
  }
  // The CST is about 85 bytes per byte of input; let it go before the document is walked.
  tokens.length = 0;
  return { docs };
}

/** The one document with content: its value and positions, or what is wrong with the documents. */
function readDocument(docs: readonly Document.Parsed[], text: string, file: string, at: (offset: number) => SourcePosition): YamlReadResult {
  const errors: Diagnostic[] = [];
  const warnings: Diagnostic[] = [];
  for (const doc of docs) {
    for (const e of doc.errors) errors.push(fromYamlError(e, diagnosticCodes.yamlSyntax, 'error', at));
    for (const w of doc.warnings) warnings.push(fromYamlError(w, diagnosticCodes.yamlWarning, 'warning', at));
  }
  const withContent = docs.filter((d) => d.contents !== null && !(isScalar(d.contents) && d.contents.value === null));
  if (withContent.length > 1) errors.push(severalDocuments(withContent, at));
  const doc = withContent[0] ?? docs[0];
  if (doc === undefined) return { errors, warnings };
  errors.push(...duplicateKeys(doc, at));
  // A garbage file can make thousands of syntax errors; the first ones are what a reader needs.
  if (errors.length > 0) return { errors: sortDiagnostics(errors).slice(0, limits.maxDiagnostics), warnings: warnings.slice(0, limits.maxDiagnostics) };
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: limits.maxAliasCount });
  } catch (error) {
    return { errors: [aliasFailure(error, doc, at)], warnings };
  }
  return { source: yamlSource(doc, value, text, file, at), errors: [], warnings };
}

function severalDocuments(withContent: readonly Document.Parsed[], at: (offset: number) => SourcePosition): Diagnostic {
  const second = withContent[1]!;
  return {
    severity: 'error',
    code: diagnosticCodes.multipleDocuments,
    path: '',
    message: `the file holds ${withContent.length} YAML documents (separated by '---'); amsync reads exactly one`,
    position: at(second.contents?.range[0] ?? second.range[0]),
  };
}

function yamlSource(doc: Document.Parsed, value: unknown, text: string, file: string, at: (offset: number) => SourcePosition): YamlSource {
  return {
    file,
    value: value ?? null,
    locate: (path, target) => locate(doc, path, target ?? 'value', at),
    rawText: (path) => {
      const node = nodeAt(doc, path);
      return isScalar(node) && node.range ? text.slice(node.range[0], node.range[1]) : undefined;
    },
  };
}

function fail(error: Diagnostic): YamlReadResult {
  return { errors: [error], warnings: [] };
}

/** Bytes the text takes as UTF-8, without allocating a copy of it. */
export function utf8Length(text: string): number {
  if (text.length > limits.maxFileBytes) return text.length;
  // Native, and it allocates nothing: a loop over the chars took ~0.2 s for a 100k-item file.
  return Buffer.byteLength(text, 'utf8');
}

/** Offset of the first collection nested deeper than the limit, walking the CST without recursion. */
function tooDeepAt(tokens: readonly CST.Token[]): number | undefined {
  const stack: [CST.Token, number][] = tokens.map((t) => [t, 0]);
  while (stack.length > 0) {
    const [token, depth] = stack.pop()!;
    if (token.type === 'document') {
      if (token.value) stack.push([token.value, depth]);
      continue;
    }
    if (token.type === 'block-map' || token.type === 'block-seq' || token.type === 'flow-collection') {
      const inner = depth + 1;
      if (inner > limits.maxDepth) return token.offset;
      for (const item of token.items as CST.CollectionItem[]) {
        if (item.key) stack.push([item.key, inner]);
        if (item.value) stack.push([item.value, inner]);
      }
    }
  }
  return undefined;
}

function fromYamlError(e: YAMLError, code: string, severity: 'error' | 'warning', at: (offset: number) => SourcePosition): Diagnostic {
  const message = explainYamlError(e.code, e.message) ?? lowerFirst(e.message);
  return { severity, code, path: '', message: `${message} (YAML ${e.code})`, position: at(e.pos[0]) };
}

function yamlFailure(error: unknown, file: string): Diagnostic {
  const message = error instanceof Error ? error.message : String(error);
  return { severity: 'error', code: diagnosticCodes.yamlSyntax, path: '', message: `cannot read the YAML: ${message}`, position: { file, line: 1, col: 1 } };
}

function aliasFailure(error: unknown, doc: Document.Parsed, at: (offset: number) => SourcePosition): Diagnostic {
  const message = error instanceof Error ? error.message : String(error);
  const aliases = aliasesOf(doc);
  if (/excessive alias count/i.test(message)) {
    return {
      severity: 'error',
      code: diagnosticCodes.aliasLimit,
      path: '',
      message: `aliases expand to too much data (limit ${limits.maxAliasCount}); this looks like a YAML alias bomb`,
      position: at(aliases[0]?.range?.[0] ?? 0),
    };
  }
  const unresolved = aliases.find((a) => a.resolve(doc) === undefined);
  if (unresolved) {
    return {
      severity: 'error',
      code: diagnosticCodes.unresolvedAlias,
      path: '',
      message: `alias ${quote(`*${unresolved.source}`)} refers to no anchor; an anchor (&${unresolved.source}) must come before its aliases`,
      position: at(unresolved.range?.[0] ?? 0),
    };
  }
  if (error instanceof RangeError) {
    return { severity: 'error', code: diagnosticCodes.tooDeep, path: '', message: 'aliases nest too deeply to expand', position: at(aliases[0]?.range?.[0] ?? 0) };
  }
  return { severity: 'error', code: diagnosticCodes.yamlSyntax, path: '', message: `cannot read the YAML: ${lowerFirst(message)}`, position: at(0) };
}

/** A path kept as links to its parent, so walking a million nodes allocates little. */
interface PathLink {
  readonly up: PathLink | undefined;
  readonly segment: string | number;
}

function pathOf(link: PathLink | undefined): (string | number)[] {
  const out: (string | number)[] = [];
  for (let l = link; l; l = l.up) out.unshift(l.segment);
  return out;
}

/** Calls `visit` on every node of the document, depth-first, without following aliases. */
function eachNode(doc: Document.Parsed, visit: (node: Node, path: PathLink | undefined) => void): void {
  const stack: [unknown, PathLink | undefined][] = [[doc.contents, undefined]];
  while (stack.length > 0) {
    const [node, path] = stack.pop()!;
    if (isMap(node)) {
      visit(node, path);
      for (let i = node.items.length - 1; i >= 0; i -= 1) {
        const pair = node.items[i]!;
        const key = keyText(pair.key);
        stack.push([pair.value, { up: path, segment: key ?? '?' }]);
        if (!isScalar(pair.key)) stack.push([pair.key, path]);
      }
    } else if (isSeq(node)) {
      visit(node, path);
      for (let i = node.items.length - 1; i >= 0; i -= 1) stack.push([node.items[i], { up: path, segment: i }]);
    } else if (isScalar(node) || isAlias(node)) {
      visit(node, path);
    }
  }
}

/** Every alias node, in document order. */
function aliasesOf(doc: Document.Parsed): Alias[] {
  const out: Alias[] = [];
  eachNode(doc, (node) => {
    if (isAlias(node)) out.push(node);
  });
  return out;
}

function keyText(key: unknown): string | undefined {
  if (isScalar(key)) return String(key.value);
  return undefined;
}

function duplicateKeys(doc: Document.Parsed, at: (offset: number) => SourcePosition): Diagnostic[] {
  const out: Diagnostic[] = [];
  eachNode(doc, (node, path) => {
    if (!isMap(node) || out.length >= limits.maxDiagnostics) return;
    const seen = new Map<string, number>();
    for (const pair of node.items) {
      const key = keyText(pair.key);
      if (key === undefined) continue;
      const offset = (pair.key as Node).range?.[0] ?? 0;
      const first = seen.get(key);
      if (first === undefined) {
        seen.set(key, offset);
        continue;
      }
      out.push({
        severity: 'error',
        code: diagnosticCodes.duplicateKey,
        path: formatPath([...pathOf(path), key]),
        message: `duplicate key ${quote(key)} in one mapping (first at line ${at(first).line}); YAML keeps only one of them`,
        position: at(offset),
      });
    }
  });
  return out;
}

function locate(doc: Document.Parsed, path: DocPath, target: 'value' | 'key', at: (offset: number) => SourcePosition): SourcePosition {
  let node: unknown = doc.contents;
  let fallback = doc.contents?.range[0] ?? 0;
  for (let i = 0; i < path.length; i += 1) {
    const segment = path[i]!;
    // Below an alias, everything was written at the alias: point there, not at the anchor.
    if (isAlias(node)) return at(node.range?.[0] ?? fallback);
    const here = (node as Node | null)?.range?.[0];
    if (here !== undefined) fallback = here;
    if (isMap(node)) {
      const pair = node.items.find((p) => keyText(p.key) === String(segment));
      if (!pair) return at(fallback);
      const keyOffset = (pair.key as Node | null)?.range?.[0] ?? fallback;
      const value = pair.value as Node | null;
      const last = i === path.length - 1;
      if (last && target === 'key') return at(keyOffset);
      // `level:` with nothing after it: the value node is empty, so point at the key.
      if (!value || !value.range || (isScalar(value) && value.range[0] === value.range[1])) return at(keyOffset);
      node = value;
    } else if (isSeq(node) && typeof segment === 'number') {
      const item = node.items[segment];
      if (!item) return at(fallback);
      node = item;
    } else {
      return at(fallback);
    }
  }
  if (isAlias(node) && node.range) return at(node.range[0]);
  return at((node as Node | null)?.range?.[0] ?? fallback);
}

/** The node at `path`, following aliases; undefined when the path does not exist. */
function nodeAt(doc: Document.Parsed, path: DocPath): unknown {
  let node: unknown = doc.contents;
  for (const segment of path) {
    if (isAlias(node)) node = node.resolve(doc);
    if (isMap(node)) node = node.items.find((p) => keyText(p.key) === String(segment))?.value;
    else if (isSeq(node) && typeof segment === 'number') node = node.items[segment];
    else return undefined;
  }
  return isAlias(node) ? node.resolve(doc) : node;
}


function lowerFirst(s: string): string {
  return s.length > 0 ? s[0]!.toLowerCase() + s.slice(1) : s;
}
