export type { SecretRef, SecretValue } from './secret-value.js';
export type { Diagnostic, Severity, SourcePosition } from './source-position.js';
export { formatDiagnostic } from './source-position.js';
export type { AccessPolicy, DesiredApikey, DesiredOrigin, DesiredSshUser, DesiredState, Ensure, ItemControls, ItemMode, KeyRotation, PerKind, RoleNameRef, SuperuserRule, TargetSelector } from './desired-state.js';
export type { ApprovalGate, ApprovalStatus, GateRule, PlanReview, PolicyFinding } from './approval.js';
export { noReview } from './approval.js';
export { approvalHint, type ApprovalHint } from './approval-hint.js';
export { emptyDesiredState } from './desired-state.js';
export type { ActualApikey, ActualSshUser, ActualState, NamedRole } from './actual-state.js';
export type { Action, Change, ChangeOf, ChangeResult, FieldChange, IgnoredFields, ItemRef, Kind, PasswordsUnavailable, Plan, PlanProblem, PlanSelection, PlanSummary, ResultStatus } from './plan.js';
export { fieldEntries, SENSITIVE, SENSITIVE_UNAVAILABLE } from './plan.js';
export { GENERATED } from './plan.js';
export type { GeneratedPassword, PasswordClass } from './generated-password.js';
export { passwordClasses } from './generated-password.js';
export { diagnosticCodes } from './diagnostic-codes.js';
export { secretCodes } from './diagnostic-codes.js';
export { notifyEventNames, type NotifyChange, type NotifyEvent, type NotifyEventName, type NotifySummary } from './notify-event.js';
export type {
  AccessService,
  ApikeyChanges,
  ListApikeysOptions,
  ListedApikey,
  NewApikey,
  NewSshUser,
  SshUserChanges,
  TokenInfo,
  TokenScope,
  WriteOutcome,
} from './access-service.js';
export type {
  ActualOf,
  ApikeyKind,
  BodyOf,
  Comparison,
  DesiredFieldsOf,
  FieldChangesOf,
  FieldDeclaration,
  FieldName,
  IdentityFieldName,
  KindDeclaration,
  KindOf,
  NewOf,
  RequiredOnCreateName,
  ShownValueOf,
  SshUserKind,
  StateFieldName,
  ValueOf,
  ValueType,
  ValueTypes,
  WriteOnlyFieldName,
} from './kinds/index.js';
export { apikeyKind, canonicalValue, fieldsOf, identityOf, ignorableFieldsOf, kinds, listedItem, listedRow, sameValue, sortedUnique, sshUserKind, stateFieldsOf } from './kinds/index.js';
export { expiresAtMs, formatRemaining, instantText, ttlMs, type CreatedTimes, type PlanClock, type PlannedExpiry, type RotatingKey } from './expiry.js';
