import type { FieldDeclaration, ShownValueOf, ValueOf } from './field.js';

/**
 * One resource kind of the service, declared once (as Terraform's plugin framework declares a
 * resource's schema): its fields, in the order that is written everywhere — request bodies,
 * the state fingerprint, plan changes, stringified files, saved plans. That order is part of
 * hashes and files already written: append new fields, never reorder.
 */
export interface KindDeclaration {
  /** The plan's name of the kind (`Change.kind`). */
  readonly kind: 'sshUser' | 'apikey';
  /** Its list in the desired file and in a listing snapshot (`sshUsers`, `apikeys`). */
  readonly list: 'sshUsers' | 'apikeys';
  /** How messages name one (`SSH user`). */
  readonly noun: string;
  /** Whether the service keeps the identity unique (usernames are; apikey names are not). */
  readonly uniqueIdentity: boolean;
  /** The desired file's title of an item (its JSON Schema `title`). */
  readonly title: string;
  /** A secret the service generates and lists (the apikey token): its wire name. Never state. */
  readonly generatedSecret?: string;
  readonly fields: Readonly<Record<string, FieldDeclaration>>;
}

type Fields<K extends KindDeclaration> = K['fields'];

/** The names of a kind's fields. */
export type FieldName<K extends KindDeclaration> = keyof Fields<K> & string;

/** The fields the service lists (all but the write-only ones). */
export type StateFieldName<K extends KindDeclaration> = { [F in FieldName<K>]: Fields<K>[F]['writeOnly'] extends true ? never : F }[FieldName<K>];

/** The identity field (`username`, `name`). */
export type IdentityFieldName<K extends KindDeclaration> = { [F in FieldName<K>]: Fields<K>[F]['identity'] extends true ? F : never }[FieldName<K>];

/** The write-only fields (the SSH password). */
export type WriteOnlyFieldName<K extends KindDeclaration> = Exclude<FieldName<K>, StateFieldName<K>>;

/** An item as the service lists it, normalised: its id and its listed fields. */
export type ActualOf<K extends KindDeclaration> = { readonly id: number } & { readonly [F in StateFieldName<K>]: ValueOf<Fields<K>[F]> };

/** The declared fields of a desired item: the listed ones required (defaults filled in), write-only ones optional. */
export type DesiredFieldsOf<K extends KindDeclaration> = { readonly [F in StateFieldName<K>]: ValueOf<Fields<K>[F]> } & {
  readonly [F in WriteOnlyFieldName<K>]?: ValueOf<Fields<K>[F]>;
};

/** A request body of an update (or a create): the fields to send, any of them. */
export type BodyOf<K extends KindDeclaration> = { readonly [F in FieldName<K>]?: ValueOf<Fields<K>[F]> };

/** The fields without a default: a create must send them (the identity, the SSH password). */
export type RequiredOnCreateName<K extends KindDeclaration> = { [F in FieldName<K>]: Fields<K>[F] extends { readonly default: unknown } ? never : F }[FieldName<K>];

/** A create's body: the fields without a default required, the others left to the service when omitted. */
export type NewOf<K extends KindDeclaration> = { readonly [F in RequiredOnCreateName<K>]: ValueOf<Fields<K>[F]> } & BodyOf<K>;

/** A field's before and after in a plan: null before a create and after a delete. */
export interface FieldChange<T = unknown> {
  readonly before: T | null;
  readonly after: T | null;
}

/** The field changes of one change of a kind: each field at most once, typed by its declaration. */
export type FieldChangesOf<K extends KindDeclaration> = { readonly [F in FieldName<K>]?: FieldChange<ShownValueOf<Fields<K>[F]>> };
