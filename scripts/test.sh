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
# A full disk fails the build twelve minutes in with "No space left on device" from the linker
# (CI failed so once, with a second target dir of 35 GB beside this one). Check first: below
# 20 GiB free, drop all incremental state (a slower rebuild, nothing else); below 8 GiB, stop
# here and say where the space went.
free_gib() { df -Pk "$1" | awk 'NR == 2 { print int($4 / 1048576) }'; }
mkdir -p "$CARGO_TARGET_DIR"
if [ "$(free_gib "$CARGO_TARGET_DIR")" -lt 20 ] && [ -d "$CARGO_TARGET_DIR/debug/incremental" ]; then
  echo "only $(free_gib "$CARGO_TARGET_DIR") GiB free: dropping $CARGO_TARGET_DIR/debug/incremental"
  rm -rf "$CARGO_TARGET_DIR/debug/incremental"
fi
if [ "$(free_gib "$CARGO_TARGET_DIR")" -lt 8 ]; then
  echo "test.sh: only $(free_gib "$CARGO_TARGET_DIR") GiB free on the disk of $CARGO_TARGET_DIR; a build needs about 15." >&2
  du -sh "$HOME"/.cache/* /tmp 2>/dev/null | sort -h | tail -8 >&2
  exit 1
fi
# The workspace's build runs from here, beside the steps before the cargo step: those are mostly
# Go builds and downloads (14 minutes on a fresh machine), and a cold cargo build (about 50
# minutes) leaves a core idle for much of its length (single crates at opt-level 3, links).
# 50-cargo-test.sh waits for it; what it printed is in $PROVER_TEST_PREBUILD_LOG, shown there
# if it failed (the cargo step then builds again in the foreground, printing the errors).
PROVER_TEST_PREBUILD_LOG="$(mktemp)"
(cargo test --workspace --locked --lib --bins --tests --no-run && cargo check --workspace --locked --examples) >"$PROVER_TEST_PREBUILD_LOG" 2>&1 &
PROVER_TEST_PREBUILD_PID=$!
# A step that fails stops the build too (the EXIT traps the steps set chain to this one). Under
# `set -e` a failing command in an EXIT trap becomes the script's exit status: pkill finds no
# process once the build has ended (CI failed so once, after "all tests passed"), so nothing here
# may fail.
stop_prebuild() {
  pkill -P "$PROVER_TEST_PREBUILD_PID" 2>/dev/null || true
  kill "$PROVER_TEST_PREBUILD_PID" 2>/dev/null || true
}
trap stop_prebuild EXIT
for step in scripts/test.d/*.sh; do
  echo "==> ${step}"
  start=$(date +%s)
  # shellcheck source=/dev/null
  source "${step}"
  echo "<== ${step} ($(( $(date +%s) - start )) s)"
done
echo "all tests passed"
