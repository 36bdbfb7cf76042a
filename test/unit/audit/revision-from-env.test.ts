import { describe, expect, it } from 'vitest';
import { revisionFromEnv } from '../../../src/audit/revision-from-env.js';

describe('the revision an audit line names: AMSYNC_REVISION, else GITHUB_SHA, else CI_COMMIT_SHA, else null', () => {
  it.each([
    [{ AMSYNC_REVISION: 'v1.2.3', GITHUB_SHA: 'gh', CI_COMMIT_SHA: 'gl' }, 'v1.2.3'],
    [{ GITHUB_SHA: 'a94a8fe5ccb19ba61c4c0873d391e987982fbbd3', CI_COMMIT_SHA: 'gl' }, 'a94a8fe5ccb19ba61c4c0873d391e987982fbbd3'],
    [{ CI_COMMIT_SHA: 'gl-sha' }, 'gl-sha'],
    [{}, null],
    // An empty variable counts as unset, as every AMSYNC_* variable does.
    [{ AMSYNC_REVISION: '', GITHUB_SHA: ' ', CI_COMMIT_SHA: 'gl-sha' }, 'gl-sha'],
    [{ AMSYNC_REVISION: '  tag-with-spaces  ' }, 'tag-with-spaces'],
  ])('%j -> %s', (env, expected) => {
    expect(revisionFromEnv(env)).toBe(expected);
  });

  it('a very long value is cut: a revision is a commit or a tag, not a document', () => {
    expect(revisionFromEnv({ AMSYNC_REVISION: 'r'.repeat(5000) })).toHaveLength(200);
  });
});
