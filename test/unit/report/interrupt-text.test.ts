import { describe, expect, it } from 'vitest';
import type { ChangeResult } from '../../../src/model/index.js';
import { interruptedSummary, stoppingMessage } from '../../../src/report/index.js';

const result = (status: ChangeResult['status'], notStarted = false): ChangeResult => ({ kind: 'sshUser', action: 'create', key: 'u', id: null, status, ...(notStarted ? { notStarted: true } : {}) }) as ChangeResult;

describe('what an interrupted run says happened', () => {
  it('counts applied, failed and never sent, and says what was on the wire', () => {
    const results = [result('applied'), result('applied'), result('failed'), result('skipped', true), result('skipped', true), result('skipped')];
    expect(interruptedSummary({ received: 'SIGINT', sentAtSignal: 3 }, results)).toBe(
      'interrupted by SIGINT: 2 applied, 1 failed, 2 not started (never sent), 1 skipped; nothing was sent after the signal but the 3 requests already on the wire, which finished; the results above are saved',
    );
  });

  it('before any change: nothing was written', () => {
    expect(interruptedSummary({ received: 'SIGTERM', sentAtSignal: 0 }, [])).toBe('interrupted by SIGTERM before any change was sent: nothing was written');
  });

  it('the line at the signal names what still finishes, and never claims requests in flight when there are none', () => {
    expect(stoppingMessage('SIGINT', 0)).toBe('SIGINT: stopping: nothing more is sent, and no request is waiting for an answer (again to quit at once)');
    expect(stoppingMessage('SIGINT', 1)).toContain('the 1 request already sent finishes');
  });
});
