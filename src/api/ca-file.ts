import { X509Certificate } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { ClientConfigError } from './client-config-error.js';

const pemBlock = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;
/** A CA bundle is kilobytes; a larger file is not one (and /dev/zero must not hang the check). */
const maxCaFileBytes = 4 * 1024 * 1024;

function caFileError(caFile: string, problem: string): ClientConfigError {
  return new ClientConfigError('ca_file', `the CA file ${caFile} (--ca-file, AMSYNC_CA_FILE, http.caFile) ${problem}; nothing was sent`);
}

function readText(caFile: string): string {
  try {
    const info = statSync(caFile);
    if (!info.isFile()) throw caFileError(caFile, info.isDirectory() ? 'is a directory' : 'is not a regular file');
    if (info.size > maxCaFileBytes) throw caFileError(caFile, `is larger than ${maxCaFileBytes / 1024 / 1024} MB: not a PEM bundle`);
    return readFileSync(caFile, 'latin1');
  } catch (error) {
    if (error instanceof ClientConfigError) throw error;
    const code = (error as { code?: unknown }).code;
    throw caFileError(caFile, `cannot be read (${typeof code === 'string' ? code : 'read error'})`);
  }
}

/**
 * Reads and parses a private CA bundle before anything is sent. Node accepts a file that holds
 * no certificate without a word and then fails every handshake as "self-signed"; here such a
 * file is a configuration error that names the file.
 */
export function checkCaFile(caFile: string): void {
  const blocks = readText(caFile).match(pemBlock) ?? [];
  if (blocks.length === 0) throw caFileError(caFile, 'holds no PEM certificate (-----BEGIN CERTIFICATE-----)');
  blocks.forEach((block, index) => {
    try {
      new X509Certificate(block);
    } catch {
      throw caFileError(caFile, `holds a certificate that does not parse (the ${ordinal(index + 1)} PEM block)`);
    }
  });
}

function ordinal(n: number): string {
  const suffix = n % 10 === 1 && n % 100 !== 11 ? 'st' : n % 10 === 2 && n % 100 !== 12 ? 'nd' : n % 10 === 3 && n % 100 !== 13 ? 'rd' : 'th';
  return `${n}${suffix}`;
}
