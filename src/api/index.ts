/** The service client (README, "Safety"). Everything other layers may use is exported here. */
export { createClient, type AmClient, type ClientOptions, type CredentialHandover } from './create-client.js';
export { ApiError, endedByStop, stoppedBeforeSending, type ApiErrorCode, type ApiErrorDetails, type ServiceFieldError } from './api-error.js';
export { ListingIncompleteError, type ListingIncompleteCode } from './listing-incomplete-error.js';
export { ClientConfigError, type ClientConfigCode } from './client-config-error.js';
export { isSendableToken } from './token-provider.js';
export { caFileProblem } from './ca-file.js';
export { CredentialError, type CredentialErrorCode } from './credential-error.js';
export type { IntegratorKeyStore, WriteBackStatus } from './integrator-key-provider.js';
export type { ApiRole, ApiScope, ApiUserInfo } from './service-info.js';
export type { ClientEventMap, ClientEvents, CredentialEvent, PageEvent, RequestEvent, RetryEvent, ThrottleEvent, TokenEvent } from './client-events.js';
export type { LimiterView } from './adaptive-limiter.js';
export { decideRetry, defaultRetryOptions } from './retry-policy.js';
export type { AttemptFailure, HttpMethod, RetryDecision, RetryOptions, RetryPolicyOptions, StopReason } from './retry-policy.js';
export { parseRetryAfter } from './retry-after.js';
export type { ApikeyPage, Page, PageCursor, SshUserPage } from './types.js';
export { defaultUserAgent } from './user-agent.js';
export { isLoopbackHost } from './base-url.js';
export type { WriteFence } from './write-fence.js';
