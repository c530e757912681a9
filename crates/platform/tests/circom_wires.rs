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

/// N4 of the platform review: registration judged the file by decoding it whole in the planner
/// (a near-limit circuit, ~0.9 GB, OOM-killed it). Now the header and the section sizes decide: a file
/// whose header declares 2^22 + 1 constraints is refused naming `r1cs_object_key` without its
/// constraints being decoded (here they are not even there: zeros), and one declaring 2^22 is
/// accepted as a registration job (its setup, which decodes the file, is not run here).
#[tokio::test]
async fn registration_judges_a_circuit_by_its_header() {
    let Some((q, blobs, jobs, _dir)) = common::backends(false, QueueConfig::default()).await else { return };
    let p: Arc<Platform> = Platform::with_config(q, blobs, jobs, Default::default());
    type F = ark_bn254::Fr;
    let one = F::one();
    let c = Constraint { a: vec![(1, one)], b: vec![(1, one)], c: vec![(1, one)] };
    let small = R1cs::<F> { num_wires: 2, num_pub_out: 1, num_pub_in: 0, num_prv_in: 0, num_labels: 0, constraints: vec![c], wire_labels: None }.to_bytes();
    // `to_bytes` writes the header section first: the preamble and its table entry (24 bytes),
    // the field size and prime (36), nWires, nPubOut, nPubIn, nPrvIn (16), nLabels (8), then
    // mConstraints; the constraints section follows (two sections, no wire labels).
    const M: usize = 24 + 36 + 16 + 8;
    for (n, refused) in [(platform::kinds::circom::MAX_CONSTRAINTS as u32 + 1, true), (platform::kinds::circom::MAX_CONSTRAINTS as u32, false)] {
        let mut file = small[..M + 4].to_vec();
        file[M..M + 4].copy_from_slice(&n.to_le_bytes());
        // A constraints section of n constraints of no terms (12 bytes each): its size alone
        // does not refuse the file.
        file.extend(2u32.to_le_bytes());
        file.extend((12 * n as u64).to_le_bytes());
        file.resize(file.len() + 12 * n as usize, 0);
        let key = format!("tenants/alice/uploads/m-{n}.r1cs");
        p.blobs().put(&key, Bytes::from(file)).await.unwrap();
        match (p.register_circuit("alice", &key).await, refused) {
            (Err(PlatformError::InvalidJob { field, reason }), true) => {
                assert_eq!(field, "r1cs_object_key");
                assert!(reason.contains(&format!("{n} constraints, at most")), "{reason}");
            }
            (Ok((_, None, Some(_job))), false) => {}
            (other, _) => panic!("{n} constraints: got {other:?}"),
        }
    }
}
