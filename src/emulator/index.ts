/** The Access Management Service emulator: a real HTTP server for tests, demos and CI. */
export { startEmulator, type RunningEmulator, type RunningTenants, type TenantEmulator } from './emulator.js';
export type { EmulatorControl } from './instance.js';
export { defaultRoles, type EmulatorOptions } from './options.js';
export { describeOptions, emulatorFlagTable, emulatorHelpAfter, optionsFromFlags, type EmulatorFlags } from './flag-options.js';
export { describeTenantNames, MAX_TENANTS, numberedTenants, TENANT_NAME_PATTERN } from './tenants.js';
export { EmulatorError, EmulatorSeedError, type EmulatorErrorCode } from './errors.js';
export { compileRules, faultRuleSchema } from './fault-rules.js';
export { defaultFaultSettings } from './faults.js';
export { Store, type StoreDeps, type StoreResult } from './store.js';
export { TokenBucket } from './token-bucket.js';
export type {
  ApikeyView,
  EmulatorStateSnapshot,
  ErrorType,
  FaultRule,
  FaultRuleStats,
  FaultSettings,
  FieldError,
  PageCursor,
  RequestLogEntry,
  RoleDetailView,
  RoleInput,
  RoleView,
  ScopeView,
  SeedApikey,
  SeedData,
  SeedResult,
  SeedSshUser,
  SshUserState,
  SshUserView,
  TokenSettings,
} from './types.js';
