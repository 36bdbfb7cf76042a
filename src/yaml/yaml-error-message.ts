/**
 * What the yaml library's structure and indentation errors mean, said for a person editing
 * the file: the library's own sentences ("Sequence item without - indicator") name its
 * grammar, not the mistake. Matched on the library's code and, where one code covers several
 * mistakes, on the start of its message. The first match wins; `undefined` keeps the library's.
 */
const explanations: readonly { readonly code: string; readonly message?: RegExp; readonly text: string }[] = [
  {
    code: 'MISSING_CHAR',
    message: /^sequence item without - indicator/i,
    text: "this line is not lined up with the keys of the list item above it and does not start with '- ': indent it exactly like that item's first key, or start a new item with '- '",
  },
  { code: 'MISSING_CHAR', message: /^missing closing .?quote/i, text: 'a quoted value is not closed: end it with the same quote it starts with' },
  { code: 'MISSING_CHAR', text: "a closing character is missing here (a quote, ']' or '}')" },
  {
    code: 'BAD_INDENT',
    message: /^all mapping items must start at the same column/i,
    text: 'this key is not lined up with the keys above it: the keys of one mapping start at the same column, and a key of a list item lines up with the first key after its "- "',
  },
  { code: 'BAD_INDENT', message: /^all sequence items must start at the same column/i, text: "this list item's '-' is not lined up with the items above it: give every '-' of one list the same indentation" },
  {
    code: 'BAD_INDENT',
    message: /^flow (sequence|mapping)/i,
    text: "a list in [ ] or a mapping in { } is not closed, or a line of it is indented no deeper than its key: close it, on the same line is simplest",
  },
  { code: 'BAD_INDENT', text: 'the indentation of this line does not fit the lines above it: the keys of one mapping and the items of one list line up, one level deeper than the key they belong to' },
  {
    code: 'BLOCK_AS_IMPLICIT_KEY',
    text: 'a line is indented deeper than the key above it while that key already has its value on its own line (or a line holds two keys, `a: b: c`): one key per line, and the keys of one mapping lined up',
  },
  {
    code: 'MULTILINE_IMPLICIT_KEY',
    text: "a key runs over more than one line: a key needs ': ' after it on its own line (is a colon missing?), and a value over several lines is quoted or indented deeper than its key",
  },
  { code: 'UNEXPECTED_TOKEN', text: "something here does not fit the structure around it: a stray character, a '-' or ':' out of place, or a line indented less than the list or mapping it belongs to" },
  { code: 'BLOCK_IN_FLOW', text: "items with '- ' or a mapping over several lines cannot stand inside [ ] or { }: write the list or mapping one way or the other" },
  { code: 'BAD_SCALAR_START', text: 'a value cannot start with @ or ` unquoted: put it in quotes' },
  { code: 'TAB_AS_INDENT', text: 'tabs are not allowed as indentation in YAML; indent with spaces' },
];

/** A sentence for the yaml library's error `code` with `message`, or undefined when it has none. */
export function explainYamlError(code: string, message: string): string | undefined {
  return explanations.find((e) => e.code === code && (e.message === undefined || e.message.test(message)))?.text;
}
