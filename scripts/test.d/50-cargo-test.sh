# Unit, property and integration tests of every crate in the workspace.
cargo test --workspace --locked
