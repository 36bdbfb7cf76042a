type Env = Readonly<Record<string, string | undefined>>;

/**
 * The revision of the desired state a run applies, as the CI system or the operator names it:
 * AMSYNC_REVISION (set it in the sidecar's manifest, or to a Git commit in any pipeline), else
 * GITHUB_SHA (GitHub Actions), else CI_COMMIT_SHA (GitLab CI), else null. An empty variable
 * counts as unset, as every AMSYNC_* variable does. Pure: the environment is passed in.
 */
export function revisionFromEnv(env: Env): string | null {
  for (const name of revisionVariables) {
    const value = env[name]?.trim();
    if (value) return value.slice(0, maxRevisionLength);
  }
  return null;
}

/** Checked in this order. */
export const revisionVariables = ['AMSYNC_REVISION', 'GITHUB_SHA', 'CI_COMMIT_SHA'] as const;

/** A commit hash is 40 or 64 characters; a tag or a description longer than this is cut. */
const maxRevisionLength = 200;
