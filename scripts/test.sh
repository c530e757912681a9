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
# The same holds for the workspace's own artifacts in debug/deps (a set per clone path and
# change: 16 GB of them had piled up): drop those that no build has touched for two days. An
# artifact is the workspace's when its dep-info (`<name>-<hash>.d`) names no source under
# ~/.cargo/registry; registry crates' artifacts are kept (rebuilding them takes ~28 min).
if [ -d "$CARGO_TARGET_DIR/debug/deps" ] && command -v python3 >/dev/null; then
  python3 - "$CARGO_TARGET_DIR/debug/deps" <<'PRUNE' || true
import os, sys, time
deps, old = sys.argv[1], time.time() - 2 * 86400
files = os.listdir(deps)
for d in files:
    path = os.path.join(deps, d)
    if not d.endswith(".d") or os.path.getmtime(path) >= old:
        continue
    with open(path, errors="replace") as f:
        if "/.cargo/registry/" in f.read():
            continue
    stem = d[:-2]
    for f in files:
        if f == d or f == stem or f.startswith(stem + ".") or f.startswith("lib" + stem + "."):
            try:
                os.remove(os.path.join(deps, f))
            except OSError:
                pass
PRUNE
fi
for step in scripts/test.d/*.sh; do
  echo "==> ${step}"
  start=$(date +%s)
  # shellcheck source=/dev/null
  source "${step}"
  echo "<== ${step} ($(( $(date +%s) - start )) s)"
done
echo "all tests passed"
