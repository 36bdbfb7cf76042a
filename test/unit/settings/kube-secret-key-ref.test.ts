import { describe, expect, it } from 'vitest';
import { parseKubeSecretKeyRef } from '../../../src/settings/index.js';

describe('parseKubeSecretKeyRef: NAMESPACE/NAME[/KEY] (integratorKeySecret)', () => {
  it('takes the data key from the third part, integrator-key without one', () => {
    expect(parseKubeSecretKeyRef('amsync/billing-app-amsync')).toEqual({ namespace: 'amsync', name: 'billing-app-amsync', key: 'integrator-key' });
    expect(parseKubeSecretKeyRef('amsync/creds/refresh_token.v2')).toEqual({ namespace: 'amsync', name: 'creds', key: 'refresh_token.v2' });
  });

  it('refuses what is not a namespace, a Secret name and a data key', () => {
    for (const text of ['amsync', 'Amsync/creds', 'amsync/creds/', 'amsync/creds/a b', 'amsync/creds/..x', 'amsync/creds/.', 'a/b/c/d', `amsync/creds/${'k'.repeat(254)}`]) {
      expect(parseKubeSecretKeyRef(text), text).toBeUndefined();
    }
  });
});
