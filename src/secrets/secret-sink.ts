import type { SecretValue } from '../model/index.js';
import type { AmsyncError } from '../errors.js';

/** One item's secret to keep current (keepCurrent): an apikey's token under its declared name. */
export interface TokenFile {
  readonly name: string;
  readonly token: SecretValue;
}

/** What keepCurrent did: secrets written, and the items whose secret could not be (one line each, no secret). */
export interface KeptCurrent {
  readonly written: number;
  readonly errors: readonly { readonly name: string; readonly error: AmsyncError }[];
}

/**
 * Where server-generated secrets go, one per declared item name: the file sink (tokensDir,
 * TokenSink) or a Kubernetes Secret (kubernetesSecret, src/kube/). Kept small on purpose: a
 * new kind of secret (a generated password) is one more name space of items in the same two
 * calls, not a new method per sink.
 */
export interface SecretSink {
  /** Where the secrets go, for messages: `tokensDir /var/lib/amsync/tokens`, `the Secret amsync/amsync-tokens`. */
  readonly describe: string;
  /** Writes one item's secret; true when it changed (new or different). Throws an AmsyncError naming the item. */
  write(name: string, secret: SecretValue): Promise<boolean>;
  /**
   * Why an item of this name could never have its secret written here (its file name or data
   * key, made as `write` makes it, is too long or invalid), or undefined when it could. Pure: no
   * I/O. Checked for every declared item before anything is sent.
   */
  nameProblem(name: string): string | undefined;
  /** Every item's secret current, written only where it differs; one item's failure does not cost the others theirs. */
  keepCurrent(items: Iterable<TokenFile>): Promise<KeptCurrent>;
  /**
   * Where this sink keeps generated SSH passwords (`password: {generate}`), apart from the
   * tokens so that a user and an apikey of one name never share a place: `passwords~/<username>`
   * in tokensDir, the data key `password__<username>` in the Secret.
   */
  passwordSink?(): PasswordSink;
}

/** Where generated SSH passwords go, one per username. */
export interface PasswordSink {
  /** Where they go, for messages. */
  readonly describe: string;
  /** Writes one user's password; true when it changed. Throws an AmsyncError (never with the value). */
  write(username: string, password: SecretValue): Promise<boolean>;
  /** As SecretSink.nameProblem, for a user's password. */
  nameProblem(username: string): string | undefined;
  /**
   * What the sink holds now for each of `usernames` that has something readable there (one
   * read of the Secret; one read per file). A user missing from the map has nothing the sink
   * could give back; a store that cannot be read at all leaves every user out.
   */
  readAll(usernames: readonly string[]): Promise<ReadonlyMap<string, string>>;
}
