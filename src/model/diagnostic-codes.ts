/** Stable codes of what can go wrong (or be doubtful) when a reference is resolved. */
export const secretCodes = {
  plaintextPassword: 'plaintext_password',
  emptyPassword: 'empty_password',
  secretEnvUnset: 'secret_env_unset',
  secretEnvEmpty: 'secret_env_empty',
  secretFileUnreadable: 'secret_file_unreadable',
  secretFileEmpty: 'secret_file_empty',
  secretLiteralUnavailable: 'secret_literal_unavailable',
} as const;

/**
 * The stable codes of every finding about a file the user wrote. Tests, the CLI and JSON
 * output key on these; the messages are for people and may be reworded.
 */
export const diagnosticCodes = {
  // reading the bytes
  fileUnreadable: 'file_unreadable',
  fileTooLarge: 'file_too_large',
  notUtf8: 'not_utf8',
  binaryContent: 'binary_content',
  // YAML
  yamlSyntax: 'yaml_syntax',
  yamlWarning: 'yaml_warning',
  multipleDocuments: 'multiple_documents',
  duplicateKey: 'duplicate_key',
  tooDeep: 'too_deep',
  aliasLimit: 'alias_limit',
  unresolvedAlias: 'unresolved_alias',
  // shape (from the zod schema)
  notAMapping: 'not_a_mapping',
  unknownKey: 'unknown_key',
  missingKey: 'missing_key',
  invalidType: 'invalid_type',
  invalidValue: 'invalid_value',
  outOfRange: 'out_of_range',
  // meaning
  duplicateIdentity: 'duplicate_identity',
  unknownLevel: 'unknown_level',
  duplicateRole: 'duplicate_role',
  invalidGlob: 'invalid_glob',
  protectMatchesDeclared: 'protect_matches_declared',
  pruneEverything: 'prune_everything',
  ignoredOnAbsent: 'ignored_on_absent',
  // several files and the policy (README, "Teams and governance")
  sectionRepeated: 'section_repeated',
  noDesiredFiles: 'no_desired_files',
  invalidPattern: 'invalid_pattern',
  policyViolation: 'policy_violation',
  // role names, resolved against the service's roles listing
  unknownRole: 'unknown_role',
  ambiguousRole: 'ambiguous_role',
  roleNamesUnsupported: 'role_names_unsupported',
  // secrets: plaintext_password, empty_password, secret_env_unset, secret_env_empty,
  // secret_file_unreadable, secret_file_empty
  ...secretCodes,
  tooManyProblems: 'too_many_problems',
  // fleet: `targets:` in the desired file, and the targets file (README, "Fleet: one access file, many services")
  targetsNeedFleet: 'targets_need_fleet',
  unknownTarget: 'unknown_target',
  noTargetSelected: 'no_target_selected',
  duplicateTarget: 'duplicate_target',
  targetCredential: 'target_credential',
  targetCaFile: 'target_ca_file',
  // settings
  invalidEnv: 'invalid_env',
  // expiry (issue 30): `expires:` and `ttl:` both given; an expiry already past (validate)
  expiryConflict: 'expiry_conflict',
  alreadyExpired: 'already_expired',
  // an item whose secret the token/password sink cannot store under its name (too long a file name or data key)
  sinkName: 'secret_sink_name',
} as const;

export type DiagnosticCode = (typeof diagnosticCodes)[keyof typeof diagnosticCodes];
