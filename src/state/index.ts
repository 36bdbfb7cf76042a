export { readActualState, normaliseApikey, normaliseSshUser } from './read-actual-state.js';
export type { ActualStateRead, ReadActualStateOptions } from './read-actual-state.js';
export type { ListApikeysOptions, RemoteApikey, RemoteSshUser, ServiceReader } from './service-reader.js';
export { stateFingerprint } from './state-fingerprint.js';
