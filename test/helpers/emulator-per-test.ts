import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { defaultFaultSettings, startEmulator, type RunningEmulator, type RunningTenants } from '../../src/emulator/index.js';

/**
 * The end-to-end tests' usual ground: one emulator for the file (accepting `token`), reset
 * with an empty request log before each test, and a fresh temporary folder per test, removed
 * after it. `use` is told both before each test (the file keeps them in its own variables);
 * a `beforeEach` of the file, registered after this, runs after it.
 */
export function emulatorPerTest(token: string, folderPrefix: string, use: (emu: RunningEmulator, dir: string) => void): void {
  let emu: RunningEmulator | undefined;
  let dir: string | undefined;
  beforeAll(async () => {
    emu = await startEmulator({ tokens: [token] });
  });
  afterAll(async () => {
    await emu?.close();
  });
  beforeEach(async () => {
    emu!.reset();
    emu!.clearRequests();
    dir = await mkdtemp(join(tmpdir(), folderPrefix));
    use(emu!, dir);
  });
  afterEach(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });
}

/** As emulatorPerTest, for a fleet: one emulator serving `tenants`, each put back before each test (resetTenants). */
export function tenantsPerTest(token: string, tenants: readonly string[], folderPrefix: string, use: (emu: RunningTenants, dir: string) => void): void {
  let emu: RunningTenants | undefined;
  let dir: string | undefined;
  beforeAll(async () => {
    emu = await startEmulator({ tokens: [token], tenants: [...tenants] });
  });
  afterAll(async () => {
    await emu?.close();
  });
  beforeEach(async () => {
    resetTenants(emu!);
    dir = await mkdtemp(join(tmpdir(), folderPrefix));
    use(emu!, dir);
  });
  afterEach(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });
}

/**
 * Puts every tenant of a multi-tenant emulator back as it started, for the next test: no
 * fault, the given tokens (when given), an empty store and request log.
 */
export function resetTenants(emu: RunningTenants, tokens?: { tokens: string[]; readOnlyTokens: string[] }): void {
  for (const name of emu.tenantNames) {
    const t = emu.tenant(name);
    t.setFaults({ ...defaultFaultSettings, rules: [] });
    if (tokens) t.setTokens({ ...tokens, expiredTokens: [] });
    t.reset();
    t.clearRequests();
  }
}
