//! Issue 32 item 4: a ~110-byte `.r1cs` declaring 2^28 wires used to pass registration and
//! make the setup task allocate tens of GB on a worker. Registration now refuses it (and any
//! header declaring far more wires than its constraints use), naming `nWires`, before a job
//! exists. Nothing is allocated per declared wire (the file has no wire-to-label section).

use std::sync::Arc;

mod common;

use ark_ff::One;
use bytes::Bytes;
use circom::{Constraint, R1cs};
use platform::{Platform, PlatformError};
use queue::QueueConfig;

#[tokio::test]
async fn registration_refuses_wire_counts_the_constraints_do_not_justify() {
    let Some((q, blobs, jobs, _dir)) = common::backends(false, QueueConfig::default()).await else { return };
    let p: Arc<Platform> = Platform::with_config(q, blobs, jobs, Default::default());
    type F = ark_bn254::Fr;
    let one = F::one();
    for wires in [1u32 << 28, 1 << 20] {
        // w0 · w0 = w0, and nothing else.
        let r = R1cs::<F> {
            num_wires: wires,
            num_pub_out: 0,
            num_pub_in: 0,
            num_prv_in: 0,
            num_labels: 0,
            constraints: vec![Constraint { a: vec![(0, one)], b: vec![(0, one)], c: vec![(0, one)] }],
            wire_labels: None,
        };
        let bytes = r.to_bytes();
        assert!(bytes.len() < 256);
        let key = format!("tenants/alice/uploads/wires-{wires}.r1cs");
        p.blobs().put(&key, Bytes::from(bytes)).await.unwrap();
        match p.register_circuit("alice", &key).await {
            Err(PlatformError::InvalidJob { field, reason }) => {
                assert_eq!(field, "r1cs_object_key");
                assert!(reason.contains(&format!("nWires {wires}")), "{reason}");
            }
            other => panic!("{wires} wires: expected an invalid request, got {other:?}"),
        }
    }
}
