/**
 * Plain words for a value found in a file: "a number (42)", "the string 'yes'", "nothing".
 * Callers pass `reveal: false` under a password, so a secret never reaches a message.
 */
export function describeValue(value: unknown, reveal = true): string {
  if (value === null || value === undefined) return 'nothing (an empty value)';
  if (typeof value === 'string') return reveal ? `the string ${quote(value)}` : 'a string';
  if (typeof value === 'number') {
    if (!reveal) return 'a number';
    return Number.isFinite(value) ? `${Number.isInteger(value) ? 'the number' : 'the fraction'} ${value}` : `the number ${value}`;
  }
  if (typeof value === 'boolean') return reveal ? `${value}` : 'a boolean';
  if (Array.isArray(value)) return 'a list';
  if (value instanceof Uint8Array) return 'binary data';
  if (value instanceof Date) return 'a date';
  if (typeof value === 'object') return 'a mapping';
  return `a ${typeof value}`;
}

/** `'abc'`, shortened when long, with control characters escaped. */
export function quote(text: string): string {
  const short = text.length > 60 ? `${text.slice(0, 57)}...` : text;
  // eslint-disable-next-line no-control-regex
  return `'${short.replace(/[\u0000-\u001f\u007f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)}'`;
}

/** Words for what a schema expected, from zod's `expected` names. */
export function describeExpected(expected: string): string {
  switch (expected) {
    case 'string':
      return 'a string';
    case 'number':
      return 'a number';
    case 'int':
    case 'integer':
      return 'a whole number';
    case 'boolean':
      return 'true or false';
    case 'array':
      return 'a list';
    case 'object':
    case 'record':
      return 'a mapping';
    case 'null':
      return 'nothing';
    default:
      return expected;
  }
}

/**
 * "a number greater than 0", "a whole number from 1 upwards": the words used for a numeric
 * bound in the settings file, in environment variables and in flags alike.
 */
export function rangeWords(kind: 'number' | 'int', min: number, inclusive: boolean, max?: number): string {
  const noun = kind === 'int' ? 'a whole number' : 'a number';
  if (max !== undefined) return `${noun} from ${min} to ${max}`;
  return inclusive ? `${noun} from ${min} upwards` : `${noun} greater than ${min}`;
}
