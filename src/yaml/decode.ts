import type { Diagnostic } from '../model/index.js';
import { diagnosticCodes } from '../model/index.js';
import { limits } from './limits.js';

export type DecodeResult = { readonly text: string; readonly error?: undefined } | { readonly text?: undefined; readonly error: Diagnostic };

/**
 * Bytes of a file the user wrote -> text, refusing what is not UTF-8 text of a sane size.
 * Pure: the caller reads the bytes. A UTF-8 byte-order mark is dropped.
 */
export function decodeText(bytes: Uint8Array, file: string): DecodeResult {
  if (bytes.length > limits.maxFileBytes) {
    return { error: tooLarge(bytes.length, file) };
  }
  if ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff)) {
    return { error: { severity: 'error', code: diagnosticCodes.notUtf8, path: '', message: 'the file is UTF-16 text; save it as UTF-8', position: { file, line: 1, col: 1 } } };
  }
  try {
    return { text: new TextDecoder('utf-8', { fatal: true }).decode(bytes) };
  } catch {
    const offset = firstInvalidUtf8(bytes);
    const { line, col } = bytePosition(bytes, offset);
    const byte = (bytes[offset] ?? 0).toString(16).toUpperCase().padStart(2, '0');
    return {
      error: {
        severity: 'error',
        code: diagnosticCodes.notUtf8,
        path: '',
        message: `the file is not UTF-8 text (byte 0x${byte} cannot start or continue a character); is it binary, or saved in another encoding?`,
        position: { file, line, col },
      },
    };
  }
}

export function tooLarge(size: number, file: string): Diagnostic {
  const mb = (n: number) => `${(n / (1024 * 1024)).toFixed(1)} MB`;
  return {
    severity: 'error',
    code: diagnosticCodes.fileTooLarge,
    path: '',
    message: `the file is ${mb(size)}; amsync reads at most ${mb(limits.maxFileBytes)}`,
    position: { file, line: 1, col: 1 },
  };
}

/** Offset of the first byte that breaks UTF-8 (the decoder said there is one). */
export function firstInvalidUtf8(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i]!;
    let need: number;
    let min: number;
    if (b < 0x80) {
      i += 1;
      continue;
    } else if (b >= 0xc2 && b <= 0xdf) {
      need = 1;
      min = 0x80;
    } else if (b >= 0xe0 && b <= 0xef) {
      need = 2;
      min = 0x800;
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3;
      min = 0x10000;
    } else {
      return i;
    }
    let cp = b & (0x3f >> need);
    for (let k = 1; k <= need; k += 1) {
      const c = bytes[i + k];
      if (c === undefined || (c & 0xc0) !== 0x80) return i;
      cp = (cp << 6) | (c & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
    i += need + 1;
  }
  return bytes.length;
}

/** 1-based line and column (in characters) of a byte offset in valid-until-offset UTF-8. */
function bytePosition(bytes: Uint8Array, offset: number): { line: number; col: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset; i += 1) {
    if (bytes[i] === 0x0a) {
      line += 1;
      lineStart = i + 1;
    }
  }
  const before = new TextDecoder('utf-8').decode(bytes.subarray(lineStart, offset));
  return { line, col: [...before].length + 1 };
}
