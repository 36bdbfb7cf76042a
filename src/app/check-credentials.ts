import { randomBytes } from 'node:crypto';
import { closeSync, openSync, readFileSync, statSync, unlinkSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { CredentialError, isSendableToken } from '../api/index.js';
import { UsageError } from '../errors.js';
import type { Settings } from '../settings/index.js';

type Credentials = Pick<Settings, 'token' | 'tokenFile' | 'refreshToken' | 'refreshTokenFile' | 'integratorKeySecret'> & Partial<Pick<Settings, 'kubernetesSecret'>>;

/** How the user set a credential, when not by the single-service flags and variables. */
export interface CredentialNames {
  /** A fleet target's key file: `integratorKey.file of target sp-1 in targets.yaml`. */
  readonly keyFile?: string;
}

/**
 * Creates and removes an empty file in `dir`, as writing a key back does (a new file beside
 * the old one, renamed over it). Throws the system's error.
 */
export type WriteProbe = (dir: string, name: string) => void;

const probeByCreating: WriteProbe = (dir, name) => {
  const path = join(dir, name);
  closeSync(openSync(path, 'wx', 0o600));
  unlinkSync(path);
};

/** A key is a line, not a megabyte (and /dev/zero must not hang the check). */
const maxKeyFileBytes = 64 * 1024;

/**
 * Exactly one way to log in, checked before anything is sent (exit 64): an access token
 * (AMSYNC_TOKEN, or a token file) or an integrator key (AMSYNC_REFRESH_TOKEN, or a key file).
 * Both at once would leave which one is used to a rule nobody remembers; neither cannot work.
 * The integrator key is checked to be sendable, and a key file to be one amsync can write a
 * rotated key back to (exit 1 otherwise). Never shows a token or a key.
 */
export function checkCredentials(settings: Credentials, probe: WriteProbe = probeByCreating, names: CredentialNames = {}): void {
  const access = [settings.token === undefined ? '' : 'AMSYNC_TOKEN', settings.tokenFile === undefined ? '' : 'AMSYNC_TOKEN_FILE / --token-file'].filter(Boolean);
  const refresh = [
    settings.refreshToken === undefined ? '' : 'AMSYNC_REFRESH_TOKEN',
    settings.refreshTokenFile === undefined ? '' : 'AMSYNC_REFRESH_TOKEN_FILE / --refresh-token-file',
    settings.integratorKeySecret === undefined ? '' : 'AMSYNC_INTEGRATOR_KEY_SECRET / integratorKeySecret',
  ].filter(Boolean);
  if (access.length > 0 && refresh.length > 0) {
    throw new UsageError(
      `both an access token (${access.join(', ')}) and an integrator key (${refresh.join(', ')}) are set: use one of them (the integrator key renews access tokens by itself); nothing was sent`,
      'conflicting_credentials',
    );
  }
  if (refresh.length > 1 && settings.integratorKeySecret !== undefined) {
    throw new UsageError(`more than one integrator key is set (${refresh.join(', ')}): use one of them; nothing was sent`, 'conflicting_credentials');
  }
  if (refresh.length > 1) {
    throw new UsageError(`both AMSYNC_REFRESH_TOKEN and AMSYNC_REFRESH_TOKEN_FILE / --refresh-token-file are set: use one of them (the file, so a rotated key is kept); nothing was sent`, 'conflicting_credentials');
  }
  if (access.length === 0 && refresh.length === 0) {
    throw new UsageError(
      'no bearer token or integrator key: set AMSYNC_TOKEN, or AMSYNC_TOKEN_FILE / --token-file PATH, or an integrator key with AMSYNC_REFRESH_TOKEN_FILE / --refresh-token-file PATH (a token is never a command-line argument)',
      'no_token',
    );
  }
  if (settings.refreshToken !== undefined && !isSendableToken(settings.refreshToken.reveal().trim())) {
    throw new UsageError('AMSYNC_REFRESH_TOKEN cannot be sent: an integrator key is one word of printable ASCII; nothing was sent', 'bad_token');
  }
  checkSecretsApart(settings);
  if (settings.refreshTokenFile !== undefined) {
    checkKeyFile(settings.refreshTokenFile, names.keyFile);
    checkWriteBack(settings.refreshTokenFile, probe, names.keyFile ?? 'AMSYNC_REFRESH_TOKEN_FILE / --refresh-token-file');
  }
}

/**
 * A service that rotates the key answers each exchange with a new one and retires the old: a
 * key file amsync cannot write leaves a retired key behind, and the next run is locked out.
 * Whether the service rotates is known only after the first exchange, which already retires
 * the key: so the folder is tried before anything is sent (exit 1, as the key is fine and the
 * place is not). A key from AMSYNC_REFRESH_TOKEN has no place at all: the first rotation
 * fails the run (integrator_key_not_persisted), as nothing can be checked before.
 */
function checkWriteBack(file: string, probe: WriteProbe, setting: string): void {
  const dir = dirname(file);
  try {
    probe(dir, `.${basename(file)}.${randomBytes(6).toString('hex')}.probe`);
  } catch (error) {
    const code = String((error as NodeJS.ErrnoException).code ?? 'error');
    throw new CredentialError(
      'integrator_key_not_writable',
      `the integrator key file ${file} cannot be written back (${code} creating a file in ${dir}): a service that rotates the key would retire the one there, and the next run would be locked out. Keep the key file in a folder amsync can write (${setting}), or, in Kubernetes, the key in its Secret with AMSYNC_INTEGRATOR_KEY_SECRET (integratorKeySecret), which amsync writes back to; nothing was sent`,
    );
  }
}

function checkKeyFile(file: string, setting: string | undefined): void {
  const named = setting === undefined ? file : `${file} (${setting})`;
  const unreadable = (why: string) => new UsageError(`cannot read the integrator key file ${named}: ${why}; nothing was sent`, 'token_file');
  let text: string;
  try {
    const info = statSync(file);
    if (!info.isFile()) throw unreadable(info.isDirectory() ? 'it is a directory' : 'it is not a regular file');
    if (info.size > maxKeyFileBytes) throw unreadable(`it is larger than ${maxKeyFileBytes / 1024} KB`);
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw unreadable(String((error as NodeJS.ErrnoException).code ?? 'read error'));
  }
  if (!isSendableToken(text.trim())) {
    throw new UsageError(`the integrator key file ${named} holds no key that can be sent: ${text.trim() === '' ? 'it is empty' : 'a key is one word of printable ASCII'}; nothing was sent`, 'token_file');
  }
}

/**
 * The integrator key's Secret is not the token sink's: tokens and passwords are written there
 * by name, and an apikey whose data key were the key's (`integrator-key`) would overwrite the
 * integrator key at the next sync, which amsync would then send to the service as its key.
 */
function checkSecretsApart(settings: Credentials): void {
  if (settings.integratorKeySecret === undefined || settings.kubernetesSecret === undefined) return;
  const keySecret = settings.integratorKeySecret.split('/').slice(0, 2).join('/');
  if (keySecret !== settings.kubernetesSecret) return;
  throw new UsageError(
    `the integrator key's Secret (integratorKeySecret ${settings.integratorKeySecret}) is also the Secret tokens and passwords are written to (kubernetesSecret ${settings.kubernetesSecret}): an apikey's token could overwrite the key; keep the key in a Secret of its own; nothing was sent`,
    'conflicting_credentials',
  );
}
