#!/usr/bin/env bash
# The steps of the amsync GitHub Action (action.yml at the repository root).
#
#   github-action.sh install   install amsync once per job, from INPUT_TARBALL or built from
#                              the action's own checkout; put it on PATH
#   github-action.sh run       run INPUT_COMMAND with the exit-code contract of the README
#
# The inputs arrive as INPUT_* variables (action.yml maps them), never spliced into the script
# text, so no input can inject shell. Also runnable outside GitHub: test/project/
# github-action.test.ts drives it with RUNNER_TEMP, GITHUB_OUTPUT and GITHUB_PATH of its own.
set -euo pipefail

prefix="${RUNNER_TEMP:?RUNNER_TEMP is not set}/amsync"
amsync="$prefix/bin/amsync"

output() { printf '%s=%s\n' "$1" "$2" >>"${GITHUB_OUTPUT:?GITHUB_OUTPUT is not set}"; }
fail() {
  printf '::error title=amsync::%s\n' "$1"
  exit 1
}

install() {
  if [ ! -x "$amsync" ]; then
    local tarball="${INPUT_TARBALL:-}"
    if [ -z "$tarball" ]; then
      # The tarball `npm pack` makes, built from the ref this action was used at.
      local out="$RUNNER_TEMP/amsync-pack"
      mkdir -p "$out"
      (cd "${GITHUB_ACTION_PATH:?GITHUB_ACTION_PATH is not set}" &&
        npm ci --no-audit --no-fund &&
        npm pack --ignore-scripts --pack-destination "$out" >/dev/null)
      tarball="$(find "$out" -name 'amsync-*.tgz' -print -quit)"
    fi
    # A tarball carries the compiled code: no install script is needed, and none runs.
    npm install --global --prefix "$prefix" --prefer-offline --omit=dev --ignore-scripts \
      --no-audit --no-fund "$tarball"
  fi
  local version
  version="$("$amsync" --version)"
  # A saved plan is applied only by the amsync version that made it: pin it.
  if [ -n "${INPUT_VERSION:-}" ] && [ "$version" != "${INPUT_VERSION#v}" ]; then
    fail "amsync $version is installed, but version: ${INPUT_VERSION} was asked for"
  fi
  echo "$prefix/bin" >>"${GITHUB_PATH:?GITHUB_PATH is not set}"
  output version "$version"
  echo "amsync $version"
}

run() {
  local command="${INPUT_COMMAND:-plan}"
  local file="${INPUT_FILE:-access.yaml}"
  local plan="${INPUT_PLAN:-plan.json}"
  local summary="$RUNNER_TEMP/amsync-$command.md"
  # Extra arguments, split on whitespace (no quoting).
  local -a extra=()
  read -r -a extra <<<"${INPUT_ARGS:-}"
  local -a cmd
  case "$command" in
    setup) return 0 ;;
    validate) cmd=(validate -f "$file") ;;
    plan) cmd=(plan -f "$file" --detailed-exitcode --format markdown --out "$plan") ;;
    sync) cmd=(sync -f "$file" --format markdown) ;;
    apply) cmd=(apply "$plan" -f "$file" --format markdown) ;;
    *) fail "command must be setup, validate, plan, sync or apply, not '$command'" ;;
  esac
  local code=0
  if [ "$command" = validate ]; then
    "$amsync" "${cmd[@]}" "${extra[@]}" || code=$?
    : >"$summary"
  else
    "$amsync" "${cmd[@]}" "${extra[@]}" >"$summary" || code=$?
    cat "$summary"
  fi
  output exitcode "$code"
  # 2: changes pending (plan, or sync --dry-run --detailed-exitcode); what a pull request is for.
  output has-changes "$([ "$code" -eq 2 ] && echo true || echo false)"
  output summary "$summary"
  if [ "$command" = plan ] && [ -f "$plan" ]; then output plan "$plan"; fi
  # 0 and 2 succeed. 1: the service or some changes failed; 3: a safety guard refused (a stale
  # saved plan, the deletion budget); 64: bad command line; 65: invalid file. Nothing was
  # written on 3, 64 and 65.
  if [ "$code" -ne 0 ] && [ "$code" -ne 2 ]; then
    printf '::error title=amsync %s::exit %s (1 failed, 3 refused by a safety guard, 64 bad command line, 65 invalid file)\n' "$command" "$code"
    exit "$code"
  fi
}

case "${1:-}" in
  install) install ;;
  run) run ;;
  *)
    echo "usage: github-action.sh install|run" >&2
    exit 64
    ;;
esac
