import type { SourcePosition } from '../model/index.js';
import type { Secret } from '../secrets/index.js';

/**
 * How amsync logs in to one target, as the targets file references it: the value itself is
 * read from the environment or stays in its file (re-read on a 401, or written back when the
 * service rotates an integrator key). Never a literal in the file.
 */
export type TargetCredentials =
  | { readonly kind: 'token'; readonly token: Secret }
  | { readonly kind: 'tokenFile'; readonly tokenFile: string }
  | { readonly kind: 'integratorKey'; readonly refreshToken: Secret }
  | { readonly kind: 'integratorKeyFile'; readonly refreshTokenFile: string }
  /** NAMESPACE/NAME[/KEY] of the Kubernetes Secret holding it. */
  | { readonly kind: 'integratorKeySecret'; readonly integratorKeySecret: string };

/** What a target may set of the client's settings, over the command's. */
export interface TargetOverrides {
  readonly rate?: number;
  readonly concurrency?: number;
  /** Absolute (relative paths start from the targets file's folder). */
  readonly caFile?: string;
  readonly pageSize?: number;
}

/** One service of the fleet (README, "Fleet: one access file, many services"). */
export interface Target {
  readonly name: string;
  readonly url: string;
  readonly labels: Readonly<Record<string, string>>;
  /** Undefined only when `validate` could not resolve it (an unset variable is a warning there). */
  readonly credentials: TargetCredentials | undefined;
  readonly overrides: TargetOverrides;
  /** Where it is declared in the targets file. */
  readonly source?: SourcePosition;
  /** `observe`: drift on this target is reported (plan, metrics, notifications), never written; absent: applied. */
  readonly mode?: 'observe';
}

/** A loaded targets file. */
export interface TargetsFile {
  /** The file as given (`--targets` or AMSYNC_TARGETS), for messages. */
  readonly file: string;
  readonly targets: readonly Target[];
  /** sha256 (hex) of the file's bytes. */
  readonly fileHash: string;
}
