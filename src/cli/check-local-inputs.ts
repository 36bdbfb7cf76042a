import { readFileSync, statSync } from 'node:fs';
import { isSendableToken } from '../api/index.js';
import { UsageError } from '../errors.js';
import type { Settings } from '../settings/index.js';

/** A token is a line, not a megabyte (and /dev/zero must not hang the check). */
const maxTokenFileBytes = 64 * 1024;

const sendable = 'a bearer token is one word of printable ASCII (no white space inside, no other characters)';

/**
 * Checks what the settings name on this machine before the first request is sent, so that a
 * token that cannot be sent, a token file that cannot be read or a tokens folder that is not a
 * folder is a usage error (exit 64) with nothing sent (DESIGN.md §8), instead of a failed
 * listing or an apikey created whose token cannot be stored. The client still re-reads the
 * token file on every 401 (rotation); this is the check at start. Never shows a token.
 */
export function checkLocalInputs(settings: Pick<Settings, 'token' | 'tokenFile' | 'tokensDir'>): void {
  checkToken(settings);
  if (settings.tokensDir !== undefined) checkTokensDir(settings.tokensDir);
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

function checkTokensDir(dir: string): void {
  try {
    if (!statSync(dir).isDirectory()) {
      throw new UsageError(`tokensDir ${dir} (--tokens-dir, AMSYNC_TOKENS_DIR) is not a folder; nothing was sent`, 'tokens_dir');
    }
  } catch (error) {
    if (error instanceof UsageError) throw error;
    // Absent: created with the first token written.
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw new UsageError(`cannot use tokensDir ${dir} (--tokens-dir, AMSYNC_TOKENS_DIR): ${String((error as NodeJS.ErrnoException).code ?? 'error')}; nothing was sent`, 'tokens_dir');
  }
}
