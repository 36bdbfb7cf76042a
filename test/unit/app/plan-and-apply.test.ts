import { describe, expect, it } from 'vitest';
import { checkReplaceSink } from '../../../src/app/plan-and-apply.js';

describe('an apikey whose token is issued again needs a token sink', () => {
  it('names what the user typed: --replace, or amsync rotate', () => {
    expect(() => checkReplaceSink({ only: [], exclude: [], replace: ['apikey:ci'] }, undefined)).toThrowError(/^--replace apikey:ci issues a new apikey token, which needs a token sink/);
    expect(() => checkReplaceSink({ only: ['apikey:ci'], exclude: [], replace: ['apikey:ci'], command: 'rotate' }, undefined)).toThrowError(/^rotate apikey:ci issues a new apikey token, which needs a token sink/);
    expect(() => checkReplaceSink({ only: [], exclude: [], replace: ['apikey:ci'] }, 'tokens')).not.toThrow();
  });
});
