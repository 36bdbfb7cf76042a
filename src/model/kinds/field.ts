/** The value types a field can have, and what each is in the model. */
export interface ValueTypes {
  /** A string. */
  readonly text: string;
  readonly flag: boolean;
  /** Role ids: sorted and unique in the model; on the wire ids or `{id}` objects. */
  readonly roleIds: readonly number[];
  /** A secret (model/secret-value.ts's SecretValue, written out: kinds/ imports nothing). */
  readonly secret: { reveal(): string };
}

export type ValueType = keyof ValueTypes;

/**
 * How two values of a field compare: `exact` (===), or `set` (as sets: order and repeats do
 * not matter; a changed set is shown sorted and unique).
 */
export type Comparison = 'exact' | 'set';

/**
 * One field of a kind: what the service calls it, its type, and how amsync treats it. The
 * field's key in its kind's `fields` is its name in the model and in the desired file.
 */
export interface FieldDeclaration<T extends ValueType = ValueType> {
  readonly type: T;
  /** Its name in the service's JSON (request bodies and listings). */
  readonly wire: string;
  /** The item's identity (username, name): required in the file, at most one per kind. */
  readonly identity?: true;
  /** The desired file's value when the key is left out; absent: required, or optional for a write-only field. */
  readonly default?: ValueTypes[T];
  /** Shown as `(sensitive)` in plans, reports and saved plans. */
  readonly sensitive: boolean;
  /** Never listed by the service: not part of the actual state, the fingerprint or an export. */
  readonly writeOnly: boolean;
  /** Sent on an update when it differs; false: sent on create only, never compared. */
  readonly updatable: boolean;
  readonly compare: Comparison;
  /** The desired file's description of the key (editors show it; the JSON Schema carries it). */
  readonly description: string;
}

/** The model's value of a field. */
export type ValueOf<F extends FieldDeclaration> = ValueTypes[F['type']];

/** What a plan shows of a field: `(sensitive)` for a sensitive one, else its value. */
/** A sensitive field is shown `(sensitive)`, or `(generated)` for a password amsync generates when it writes it. */
export type ShownValueOf<F extends FieldDeclaration> = F['sensitive'] extends true ? '(sensitive)' | '(generated)' : ValueOf<F>;
