# Unit, property and integration tests of every crate in the workspace.
#
# Examples are benchmarks and tools (none is a test), and building them took a large share of
# this step: 25 binaries, most over the opt-level-3 proof crates. They are type-checked instead
# (no code generation, no linking), so one that stops compiling still fails the command.
#
# test.sh started the build in the background (PROVER_TEST_PREBUILD_PID); wait for it here.
if [ -n "${PROVER_TEST_PREBUILD_PID:-}" ]; then
  if wait "$PROVER_TEST_PREBUILD_PID"; then
    echo "background build: done ($(grep -c '^ *Compiling' "$PROVER_TEST_PREBUILD_LOG") crates compiled)"
  else
    echo "background build failed; its last lines (the foreground build below prints the errors):"
    tail -20 "$PROVER_TEST_PREBUILD_LOG"
  fi
fi
cargo test --workspace --locked --lib --bins --tests
cargo check --workspace --locked --examples
