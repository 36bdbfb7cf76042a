import { X509Certificate } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { ClientConfigError } from './client-config-error.js';

const pemBlock = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;
/** A CA bundle is kilobytes; a larger file is not one (and /dev/zero must not hang the check). */
const maxCaFileBytes = 4 * 1024 * 1024;

/** The setting's names, unless it was set elsewhere (a fleet target's `caFile`). */
const settingNames = '--ca-file, AMSYNC_CA_FILE, http.caFile';

/** What is wrong with a CA bundle, said after its path. */
class CaProblem extends Error {}

function readText(caFile: string): string {
  let info;
  try {
    info = statSync(caFile);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw new CaProblem(`cannot be read (${typeof code === 'string' ? code : 'read error'})`);
  }
  if (!info.isFile()) throw new CaProblem(info.isDirectory() ? 'is a directory' : 'is not a regular file');
  if (info.size > maxCaFileBytes) throw new CaProblem(`is larger than ${maxCaFileBytes / 1024 / 1024} MB: not a PEM bundle`);
  try {
    return readFileSync(caFile, 'latin1');
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw new CaProblem(`cannot be read (${typeof code === 'string' ? code : 'read error'})`);
  }
}

/**
 * What is wrong with a CA bundle ("cannot be read (ENOENT)", "holds no PEM certificate …"), or
 * undefined when it can be used. `validate --targets` names the target's key itself.
 */
export function caFileProblem(caFile: string): string | undefined {
  try {
    const blocks = readText(caFile).match(pemBlock) ?? [];
    if (blocks.length === 0) return 'holds no PEM certificate (-----BEGIN CERTIFICATE-----)';
    for (const [index, block] of blocks.entries()) {
      try {
        new X509Certificate(block);
      } catch {
        return `holds a certificate that does not parse (the ${ordinal(index + 1)} PEM block)`;
      }
    }
    return undefined;
  } catch (error) {
    if (error instanceof CaProblem) return error.message;
    throw error;
  }
}

/**
 * Reads and parses a private CA bundle before anything is sent. Node accepts a file that holds
 * no certificate without a word and then fails every handshake as "self-signed"; here such a
 * file is a configuration error that names the file and where it was set (`origin`: by default
 * the flag, variable and settings key; a fleet target's key and position for its `caFile`).
 */
export function checkCaFile(caFile: string, origin = settingNames): void {
  const problem = caFileProblem(caFile);
  if (problem !== undefined) throw new ClientConfigError('ca_file', `the CA file ${caFile} (${origin}) ${problem}; nothing was sent`);
}

function ordinal(n: number): string {
  const suffix = n % 10 === 1 && n % 100 !== 11 ? 'st' : n % 10 === 2 && n % 100 !== 12 ? 'nd' : n % 10 === 3 && n % 100 !== 13 ? 'rd' : 'th';
  return `${n}${suffix}`;
}
