//! Compiles `proto/` with protox (pure Rust, so no `protoc` on the build machine) and generates
//! the tonic client and server; also writes the descriptor set served by gRPC reflection.

use prost::Message;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Read at run time, not baked in with env!(): cargo treats workspace crates as relocatable,
    // so a build script compiled in another checkout of the same target dir can be reused here.
    let root = std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?).join("../../proto");
    let file = root.join("prover/v1/jobs.proto");
    println!("cargo:rerun-if-changed={}", file.display());
    let fds = protox::compile([&file], [&root])?;
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR")?);
    std::fs::write(out.join("prover_v1_descriptor.bin"), fds.encode_to_vec())?;
    tonic_prost_build::configure().compile_fds(fds)?;
    Ok(())
}
