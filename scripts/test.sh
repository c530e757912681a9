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
# Incremental state is kept per clone path, so fresh clones in new directories leave theirs
# behind (36 GB had piled up here and filled the disk): drop what no build has touched for two
# days. A clone in a path used before still reuses its own (a rebuild after a change: ~2 min
# with it, ~10 without).
if [ -d "$CARGO_TARGET_DIR/debug/incremental" ]; then
  find "$CARGO_TARGET_DIR/debug/incremental" -mindepth 1 -maxdepth 1 -type d -mtime +2 -exec rm -rf {} + 2>/dev/null || true
fi
for step in scripts/test.d/*.sh; do
  echo "==> ${step}"
  start=$(date +%s)
  # shellcheck source=/dev/null
  source "${step}"
  echo "<== ${step} ($(( $(date +%s) - start )) s)"
done
echo "all tests passed"
