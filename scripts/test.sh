#!/usr/bin/env bash
# The test command (README, .ci/run). Works on a fresh machine: every step installs or
# starts what it needs and skips what is already there.
#
# Steps live in scripts/test.d/NN-name.sh and are sourced in order, so a step can export
# what later steps need (for example the URL of the Redis server it started).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/prover-target}"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
# A fresh clone builds the workspace crates cold anyway (their artifacts are per path), and
# incremental state for every clone path piled up to tens of GB here: off in the test command.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
for step in scripts/test.d/*.sh; do
  echo "==> ${step}"
  start=$(date +%s)
  # shellcheck source=/dev/null
  source "${step}"
  echo "<== ${step} ($(( $(date +%s) - start )) s)"
done
echo "all tests passed"
