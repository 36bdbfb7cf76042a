import { basename, dirname, extname, join } from 'node:path';
import type { Settings } from '../settings/index.js';
import type { Target } from './target.js';

/**
 * The settings one target runs with: the command's (flags, environment, settings file), with
 * the target's URL and credential instead of any given for a single service, its own
 * overrides (rate, concurrency, caFile, pageSize), and its own state file and token folder
 * (or Kubernetes Secret).
 * Pure.
 */
export function targetSettings(base: Settings, target: Target): Settings {
  const { token: _token, tokenFile: _tokenFile, refreshToken: _refreshToken, refreshTokenFile: _refreshTokenFile, integratorKeySecret: _integratorKeySecret, ...rest } = base;
  const c = target.credentials;
  const credentials =
    c === undefined
      ? {}
      : c.kind === 'token'
        ? { token: c.token }
        : c.kind === 'tokenFile'
          ? { tokenFile: c.tokenFile }
          : c.kind === 'integratorKey'
            ? { refreshToken: c.refreshToken }
            : c.kind === 'integratorKeySecret'
              ? { integratorKeySecret: c.integratorKeySecret }
              : { refreshTokenFile: c.refreshTokenFile };
  const o = target.overrides;
  return {
    ...rest,
    ...credentials,
    url: target.url,
    ...(o.rate === undefined ? {} : { rate: o.rate }),
    ...(o.concurrency === undefined ? {} : { concurrency: o.concurrency }),
    ...(o.pageSize === undefined ? {} : { pageSize: o.pageSize }),
    http: { ...base.http, ...(o.caFile === undefined ? {} : { caFile: o.caFile, caFileOrigin: caFileOrigin(target) }) },
    stateFile: perTargetStateFile(base.stateFile, target.name),
    ...(base.tokensDir === undefined ? {} : { tokensDir: join(base.tokensDir, target.name) }),
    // One Secret per target (NAMESPACE/NAME-<target>): two targets' keys of one name never share a data key.
    ...(base.kubernetesSecret === undefined ? {} : { kubernetesSecret: `${base.kubernetesSecret}-${target.name}` }),
  };
}

/** The words a target's CA file error names: its key, its target and where that is declared. */
function caFileOrigin(target: Target): string {
  const at = target.source === undefined ? '' : `, ${target.source.file}:${target.source.line}:${target.source.col}`;
  return `caFile of target '${target.name}'${at}`;
}

/**
 * One state file per target, beside the configured one: `.amsync/state.json` ->
 * `.amsync/state.sp-1.json` (its key `….json.key` and writer lock `….json.lock` beside it).
 * Targets run at once and save fingerprints as writes succeed: one shared file would need a
 * lock across targets and a merge on every save, and a file that cannot be written would
 * stop every target. Pure.
 */
export function perTargetStateFile(stateFile: string, target: string): string {
  const ext = extname(stateFile);
  const stem = basename(stateFile, ext);
  return join(dirname(stateFile), `${stem}.${target}${ext}`);
}
