/**
 * What the model knows about a secret: it can be revealed where a request body is built,
 * and nothing else. The concrete type (with redacting toString/toJSON/inspect) lives in
 * src/secrets/secret.ts; the model stays import-free.
 */
export interface SecretValue {
  reveal(): string;
}

/** Where a secret came from. Saved plans keep references, never values. */
export type SecretRef =
  | { readonly kind: 'env'; readonly name: string }
  | { readonly kind: 'file'; readonly path: string }
  | { readonly kind: 'literal' };
