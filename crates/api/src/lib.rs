//! Generated types, client and server for the `prover.v1` gRPC API (`proto/prover/v1/jobs.proto`).

#![allow(clippy::all)]

pub use prost;

/// Largest gRPC message the server decodes and the CLI sends: inline leaves of a 2^22-leaf tree
/// fit; larger inputs go through the object store (`leaves.object_key`).
pub const MAX_MESSAGE_BYTES: usize = 64 << 20;

pub mod v1 {
    tonic::include_proto!("prover.v1");

    /// Encoded `FileDescriptorSet` of the API, for gRPC server reflection.
    pub const FILE_DESCRIPTOR_SET: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/prover_v1_descriptor.bin"));
}
