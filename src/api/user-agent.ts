import { readFileSync } from 'node:fs';

function readVersion(): string {
  try {
    // src/api/ and dist/api/ are both two levels below package.json.
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version : '0.0.0';
  } catch {
    return '0.0.0';
  }
}

/** `amsync/<version>`, so the service's operators can tell who is calling. */
export const defaultUserAgent = `amsync/${readVersion()}`;
