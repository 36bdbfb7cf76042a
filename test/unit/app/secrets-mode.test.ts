import { describe, expect, it } from 'vitest';
import { checkSecretsMode } from '../../../src/app/index.js';
import { UsageError } from '../../../src/errors.js';

describe('--secrets', () => {
  it('optional is for a dry-run of one service; anything else is a usage error before anything is read', () => {
    expect(() => checkSecretsMode('optional', { dryRun: true, fleet: false })).not.toThrow();
    expect(() => checkSecretsMode('required', { dryRun: false, fleet: true })).not.toThrow();
    expect(() => checkSecretsMode(undefined, { dryRun: false, fleet: false })).not.toThrow();
    expect(() => checkSecretsMode('optional', { dryRun: false, fleet: false })).toThrow(UsageError);
    expect(() => checkSecretsMode('optional', { dryRun: false, fleet: false })).toThrow(/a sync writes and needs every one of them/);
    expect(() => checkSecretsMode('optional', { dryRun: true, fleet: true })).toThrow(/not supported with --targets/);
  });
});
