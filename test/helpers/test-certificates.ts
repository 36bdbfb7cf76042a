import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface KeyPair {
  readonly certFile: string;
  readonly cert: string;
  readonly key: string;
}

export interface TestCertificates {
  readonly dir: string;
  /** Self-signed, for IP 127.0.0.1. */
  readonly selfSigned: KeyPair;
  /** Self-signed, for the name localhost only (not 127.0.0.1). */
  readonly localhostOnly: KeyPair;
  /** A private CA, and a server certificate for 127.0.0.1 it signed. */
  readonly ca: KeyPair;
  readonly signedByCa: KeyPair;
  remove(): void;
}

function openssl(args: readonly string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: 'pipe' });
}

function selfSigned(dir: string, name: string, subject: string, altName: string, extra: readonly string[] = []): KeyPair {
  openssl(
    ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.pem`, '-days', '2', '-subj', subject, '-addext', `subjectAltName=${altName}`, ...extra],
    dir,
  );
  return read(dir, name);
}

function read(dir: string, name: string): KeyPair {
  const certFile = join(dir, `${name}.pem`);
  return { certFile, cert: readFileSync(certFile, 'utf8'), key: readFileSync(join(dir, `${name}.key`), 'utf8') };
}

/**
 * Certificates made for one test run with the openssl command line (EC keys: fast), in a
 * temporary folder: nothing secret or long-lived is kept in the repository.
 */
export function makeTestCertificates(): TestCertificates {
  const dir = mkdtempSync(join(tmpdir(), 'amsync-tls-'));
  const ca = selfSigned(dir, 'ca', '/CN=amsync test CA', 'DNS:amsync-test-ca', ['-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign']);
  openssl(['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'leaf.key', '-out', 'leaf.csr', '-subj', '/CN=127.0.0.1'], dir);
  writeFileSync(join(dir, 'leaf.ext'), 'subjectAltName=IP:127.0.0.1\n');
  openssl(['x509', '-req', '-in', 'leaf.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'leaf.pem', '-days', '2', '-extfile', 'leaf.ext'], dir);
  return {
    dir,
    selfSigned: selfSigned(dir, 'self', '/CN=127.0.0.1', 'IP:127.0.0.1'),
    localhostOnly: selfSigned(dir, 'localhost', '/CN=localhost', 'DNS:localhost'),
    ca,
    signedByCa: read(dir, 'leaf'),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
