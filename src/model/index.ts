export type { SecretRef, SecretValue } from './secret-value.js';
export type { Diagnostic, Severity, SourcePosition } from './source-position.js';
export type { DesiredApikey, DesiredSshUser, DesiredState, Ensure, PerKind, RoleNameRef, TargetSelector } from './desired-state.js';
export { emptyDesiredState } from './desired-state.js';
export type { ActualApikey, ActualSshUser, ActualState, NamedRole } from './actual-state.js';
export type { Action, Change, ChangeResult, FieldChange, ItemRef, Kind, Plan, PlanProblem, PlanSummary, ResultStatus } from './plan.js';
export { SENSITIVE } from './plan.js';
export { diagnosticCodes } from './diagnostic-codes.js';
export { secretCodes } from './diagnostic-codes.js';
