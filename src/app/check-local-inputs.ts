import { readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { isSendableToken } from '../api/index.js';
import { UsageError } from '../errors.js';
import { localPathError } from '../secrets/index.js';
import type { Settings } from '../settings/index.js';
import { settingWords } from './check-local-outputs.js';

/** A token is a line, not a megabyte (and /dev/zero must not hang the check). */
const maxTokenFileBytes = 64 * 1024;

const sendable = 'a bearer token is one word of printable ASCII (no white space inside, no other characters)';

/**
 * Checks what the settings name on this machine before the first request is sent, so that a
 * token that cannot be sent or a token file that cannot be read is a usage error (exit 64),
 * and a tokens folder that is not a folder a LocalPathError (exit 1), with nothing sent
 * (README, "Safety"), instead of a failed listing or an apikey created whose token cannot be stored. The client still re-reads the
 * token file on every 401 (rotation); this is the check at start. Never shows a token.
 */
export function checkLocalInputs(settings: Pick<Settings, 'token' | 'tokenFile' | 'tokensDir' | 'kubernetesSecret'>): void {
  checkToken(settings);
  checkOneSink(settings);
  if (settings.tokensDir !== undefined) checkTokensDir(settings.tokensDir);
}

/** Tokens go to one place: two sinks would leave a key's token current in one and stale in the other after a failed write. */
function checkOneSink({ tokensDir, kubernetesSecret }: Pick<Settings, 'tokensDir' | 'kubernetesSecret'>): void {
  if (tokensDir === undefined || kubernetesSecret === undefined) return;
  throw new UsageError(
    `tokensDir and kubernetesSecret are both set: apikey tokens go to one place; unset one (--tokens-dir, AMSYNC_TOKENS_DIR, tokensDir or --kubernetes-secret, AMSYNC_KUBERNETES_SECRET, kubernetesSecret); nothing was sent`,
    'two_token_sinks',
  );
}

function checkToken({ token, tokenFile }: Pick<Settings, 'token' | 'tokenFile'>): void {
  // The client uses AMSYNC_TOKEN first, and the token file when there is no usable one.
  if (token !== undefined && isSendableToken(token.reveal().trim())) return;
  if (tokenFile === undefined) {
    if (token === undefined) return;
    throw new UsageError(`AMSYNC_TOKEN cannot be sent: ${sendable}; nothing was sent`, 'bad_token');
  }
  const unreadable = (why: string) => new UsageError(`cannot read the token file ${tokenFile}: ${why}; nothing was sent`, 'token_file');
  let text: string;
  try {
    const info = statSync(tokenFile);
    if (!info.isFile()) throw unreadable(info.isDirectory() ? 'it is a directory' : 'it is not a regular file');
    if (info.size > maxTokenFileBytes) throw unreadable(`it is larger than ${maxTokenFileBytes / 1024} KB`);
    text = readFileSync(tokenFile, 'utf8');
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw unreadable(String((error as NodeJS.ErrnoException).code ?? 'read error'));
  }
  if (!isSendableToken(text.trim())) {
    throw new UsageError(`the token file ${tokenFile} holds no token that can be sent: ${text.trim() === '' ? 'it is empty' : sendable}; nothing was sent`, 'token_file');
  }
}

/**
 * A tokensDir that is a file, or under one: every command that talks to the service refuses
 * it (exit 1, the same line as checkLocalOutputs gives), whether or not it writes tokens. A
 * sync's checkLocalOutputs then also checks that the folder can be written.
 */
function checkTokensDir(dir: string): void {
  let error: unknown;
  try {
    if (statSync(dir).isDirectory()) return;
    error = Object.assign(new Error(`ENOTDIR: not a directory, '${dir}'`), { code: 'ENOTDIR', path: dir });
  } catch (caught) {
    // Absent: created with the first token written.
    if ((caught as NodeJS.ErrnoException).code === 'ENOENT') return;
    error = caught;
  }
  const target = { what: 'tokensDir', path: resolve(dir), setting: settingWords('tokensDir'), knob: '--tokens-dir', folder: true };
  throw localPathError(error, target, { code: 'tokens_dir', nothingSent: true });
}
