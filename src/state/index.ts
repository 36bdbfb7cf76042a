export { readActualState, withoutTokens } from './read-actual-state.js';
export type { ActualStateRead, ReadActualStateOptions, StateSource } from './read-actual-state.js';
export { stateFingerprint } from './state-fingerprint.js';
