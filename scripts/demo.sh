#!/usr/bin/env bash
# README command 1: the embedded demo (`prover dev`), built on the profile and in the target
# directory the test command uses, so the two commands share one build: run after the tests it
# only links `prover`; run first, the tests reuse every dependency it compiled. (Dependencies
# are always optimised — see [profile.dev.package."*"] in Cargo.toml — so proving is not slowed
# by the debug profile; our own crates are built at opt-level 1.)
#
#   bash scripts/demo.sh                 # ℓ = 10, q = 3, |I| = 4, two workers
#   bash scripts/demo.sh --log-n 12 ...  # any `prover dev` option
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/prover-target}"
# `--workspace`: the same feature unification as `cargo test --workspace`, so no dependency
# is compiled twice with different features (`-p prover-cli` would rebuild several).
cargo build --workspace --locked --bin prover
exec "$CARGO_TARGET_DIR/debug/prover" dev "$@"
