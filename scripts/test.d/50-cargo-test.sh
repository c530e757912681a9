# Unit, property and integration tests of every crate in the workspace.
#
# Examples are benchmarks and tools (none is a test), and building them took a large share of
# this step: 25 binaries, most over the opt-level-3 proof crates. They are type-checked instead
# (no code generation, no linking), so one that stops compiling still fails the command.
cargo test --workspace --locked --lib --bins --tests
cargo check --workspace --locked --examples
