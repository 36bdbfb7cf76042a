import type { AccessService, Change, ChangeOf, DesiredApikey, DesiredSshUser, SecretValue, WriteOutcome } from '../model/index.js';
import { GENERATED } from '../model/index.js';
import { generatePassword } from '../secrets/index.js';
import { AmsyncError } from '../errors.js';
import { apikeyBody, newApikey, newSshUser, sshUserBody } from './request-body.js';
import type { PasswordRecorder } from './password-recorder.js';
import type { TouchedIds } from './touched-ids.js';

export interface ChangeWriterDeps {
  readonly writer: AccessService;
  readonly touched: TouchedIds;
  readonly passwords?: PasswordRecorder;
  /** Receives each created apikey's token (the token sink); false: it could not be kept. */
  readonly onToken?: (name: string, token: SecretValue) => Promise<boolean | void>;
  /** Told before each request that writes (a drift re-write too): the audit log's "attempt" line. */
  readonly onAttempt?: (change: Change) => void;
  /**
   * Keeps a password amsync generated and the service accepted (the password sink, the state
   * file). Throws when the sink could not take it: the change then fails (the password is lost
   * and the state file says so, so that the next run sets a new one). Absent: no sink, and a
   * change that would generate one is not sent.
   */
  readonly onGeneratedPassword?: (username: string, id: number, password: SecretValue) => Promise<void>;
  /**
   * Awaited before a successor's create (a rotation, --replace) is sent: the state file records
   * that it begins, so a run killed after the POST finds its twin. Throws: nothing is sent.
   */
  readonly beforeSuccessor?: (change: Change) => Promise<void>;
}

/**
 * Sends one change: the request for its kind and action, and what a successful write leaves
 * behind (the id claimed by this run, the password's fingerprint, a new key's token).
 */
export class ChangeWriter {
  readonly #deps: ChangeWriterDeps;
  /** Creates whose new token the sink took (a replaced key's delete waits for it). */
  readonly #delivered = new WeakSet<Change>();

  constructor(deps: ChangeWriterDeps) {
    this.#deps = deps;
  }

  async write(change: Change, item: DesiredSshUser | DesiredApikey | undefined): Promise<WriteOutcome> {
    if (change.action !== 'delete') this.#deps.touched.add(change.kind, change.id);
    this.#deps.onAttempt?.(change);
    return change.kind === 'sshUser' ? this.#writeSshUser(change, item as DesiredSshUser | undefined) : this.#writeApikey(change);
  }

  async #writeSshUser(change: ChangeOf<'sshUser'>, user: DesiredSshUser | undefined): Promise<WriteOutcome> {
    const { writer, passwords, touched } = this.#deps;
    if (change.action === 'delete') {
      await writer.deleteSshUser(change.id!);
      passwords?.forget(change.id!);
      return { accepted: false, id: change.id! };
    }
    // `(generated)`: the password is made now, just before the request that sets it.
    const generated = change.fields.password?.after === GENERATED ? this.#generate(change, user) : undefined;
    const body = sshUserBody(change, generated === undefined ? user : { ...user!, password: generated });
    const outcome =
      change.action === 'create'
        ? await writer.createSshUser(newSshUser(change.key, body))
        : await writer.updateSshUser(change.id!, body);
    const id = outcome.id ?? change.id;
    touched.add('sshUser', id);
    if (generated !== undefined && id !== null && id !== undefined) {
      await this.#deps.onGeneratedPassword!(change.key, id, generated);
      return outcome;
    }
    if (body.password && id !== null && id !== undefined) passwords?.record(id, body.password);
    return outcome;
  }

  /** A new password for a change marked `(generated)`; refused before anything is sent when it could not be kept. */
  #generate(change: ChangeOf<'sshUser'>, user: DesiredSshUser | undefined): SecretValue {
    if (user?.passwordGenerated === undefined) throw new AmsyncError('password_not_generated', `SSH user "${change.key}" no longer declares \`password: {generate}\`; nothing was sent`);
    if (this.#deps.onGeneratedPassword === undefined) {
      throw new AmsyncError('password_sink_missing', `SSH user "${change.key}": a generated password needs a password sink: set tokensDir (--tokens-dir DIR or AMSYNC_TOKENS_DIR) or kubernetesSecret (--kubernetes-secret NAMESPACE/NAME); nothing was sent`);
    }
    return generatePassword(user.passwordGenerated);
  }

  async #writeApikey(change: ChangeOf<'apikey'>): Promise<WriteOutcome> {
    const { writer, onToken, touched } = this.#deps;
    if (change.action === 'delete') {
      await writer.deleteApikey(change.id!);
      return { accepted: false, id: change.id! };
    }
    const body = apikeyBody(change);
    if (change.action === 'create' && change.replaces !== undefined) await this.#deps.beforeSuccessor?.(change);
    const outcome =
      change.action === 'create'
        ? await writer.createApikey(newApikey(change.key, body))
        : await writer.updateApikey(change.id!, body);
    touched.add('apikey', outcome.id);
    if (outcome.token && onToken && (await onToken(body.name ?? change.key, outcome.token)) !== false) this.#delivered.add(change);
    return outcome;
  }

  /** Whether this change's write received a token and the sink kept it. */
  tokenDelivered(change: Change): boolean {
    return this.#delivered.has(change);
  }
}
