/**
 * Every way a server is known to write back a value it was sent: what a canary test looks
 * for in output, and what the hostile fake service echoes.
 */

function hex4(unit: number, upper: boolean): string {
  const hex = unit.toString(16).padStart(4, '0');
  return upper ? hex.toUpperCase() : hex;
}

/** JSON with every non-ASCII and control code unit as `\uXXXX` and `/` as `\/` (PHP's json_encode, Jackson's ESCAPE_NON_ASCII). */
function asciiJson(value: string, upper: boolean): string {
  let out = '';
  for (let i = 0; i < value.length; i += 1) {
    const ch = value[i]!;
    const unit = value.charCodeAt(i);
    if (ch === '"' || ch === '\\' || ch === '/') out += `\\${ch}`;
    else if (unit < 0x20 || unit > 0x7e) out += `\\u${hex4(unit, upper)}`;
    else out += ch;
  }
  return out;
}

function html(value: string): string {
  const named: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
  return [...value].map((ch) => named[ch] ?? (ch.codePointAt(0)! > 0x7e ? `&#${ch.codePointAt(0)};` : ch)).join('');
}

/** The value in each encoding, by name. Forms equal to the raw value are kept (they are still checked). */
export function everyEncoding(value: string): Record<string, string> {
  const json = JSON.stringify(value).slice(1, -1);
  const url = encodeURIComponent(value);
  return {
    raw: value,
    json,
    jsonAsciiLower: asciiJson(value, false),
    jsonAsciiUpper: asciiJson(value, true),
    jsonEveryUnit: [...Array(value.length).keys()].map((i) => `\\u${hex4(value.charCodeAt(i), true)}`).join(''),
    jsonTwice: JSON.stringify(JSON.stringify(value)).slice(1, -1),
    url,
    urlLowerHex: url.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()),
    form: new URLSearchParams({ v: value }).toString().slice(2),
    urlOfJson: encodeURIComponent(json),
    urlTwice: encodeURIComponent(url),
    html: html(value),
    htmlOfJson: html(json),
  };
}

/** Every encoded form of every value, for `not.toContain` checks. */
export function forms(values: readonly string[]): string[] {
  return [...new Set(values.flatMap((v) => Object.values(everyEncoding(v))))];
}

/** Text that quotes each value in every encoding, labelled: what a hostile server answers. */
export function echoEverywhere(values: readonly string[]): string {
  return values.flatMap((v) => Object.entries(everyEncoding(v)).map(([name, form]) => `${name}=${form}`)).join(' | ');
}
