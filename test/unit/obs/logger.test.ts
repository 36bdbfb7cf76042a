import { describe, expect, it } from 'vitest';
import { commandLogLevel } from '../../../src/obs/logger.js';

describe('commandLogLevel: a one-shot command at a terminal logs nothing at info unless asked', () => {
  it('at a terminal, the default info becomes warn', () => {
    expect(commandLogLevel('info', { terminal: true, asked: false })).toBe('warn');
  });

  it('a level asked for is kept, at a terminal or not', () => {
    for (const level of ['trace', 'debug', 'info', 'warn', 'error', 'silent'] as const) {
      expect(commandLogLevel(level, { terminal: true, asked: true })).toBe(level);
      expect(commandLogLevel(level, { terminal: false, asked: true })).toBe(level);
    }
  });

  it('not at a terminal (CI, a pipe, a collector), the setting as it is', () => {
    expect(commandLogLevel('info', { terminal: false, asked: false })).toBe('info');
  });
});
