//! Generated types, client and server for the `prover.v1` gRPC API (`proto/prover/v1/jobs.proto`).

#![allow(clippy::all)]

pub mod v1 {
    tonic::include_proto!("prover.v1");

    /// Encoded `FileDescriptorSet` of the API, for gRPC server reflection.
    pub const FILE_DESCRIPTOR_SET: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/prover_v1_descriptor.bin"));
}
