/** A path inside a YAML document: keys of mappings and indexes of lists. */
export type DocPath = readonly (string | number)[];

const identifier = /^[A-Za-z_$][A-Za-z0-9_$-]*$/;

/** `sshUsers[1].level`, `protect.sshUsers[0]`, `["odd key"]`; empty for the document itself. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else {
      const key = String(segment);
      out += identifier.test(key) ? (out === '' ? key : `.${key}`) : `[${JSON.stringify(key)}]`;
    }
  }
  return out;
}
