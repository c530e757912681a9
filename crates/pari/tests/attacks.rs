//! Attacks found by review (issue 10 item 5), each written as a test before the fix.
//!
//! * A verifying key for a trivial circuit of the same size (`n`, `L`) makes any statement
//!   "verify": only a pinned key digest stops it.
//! * A proving key with rows deleted must be refused when it is read, not panic when used.
//! * A verifying key of a bad shape (from validated deserialization or built by hand) must not
//!   make `prepare` or `verify` panic.
//! * A caller RNG the forger can predict must not let a forged pair of proofs pass a batch.

use ark_ec::pairing::Pairing;
use ark_ec::{AffineRepr, CurveGroup};
use ark_ff::{Field, One};
use ark_relations::gr1cs::{ConstraintSynthesizer, ConstraintSystemRef, LinearCombination, SynthesisError};
use ark_serialize::CanonicalDeserialize;
use ark_std::rand::{Rng, SeedableRng};
use pari::bundle::Bundle;
use pari::circuits::CircuitFamily;
use pari::r1cs::{Row, SparseRows};
use pari::{batch_verify, batch_verify_locate, prove, setup, verify, Proof, ProvingKey, VerifyingKey};
use rand_chacha::ChaCha20Rng;

type Bls = ark_bls12_381::Bls12_381;
type Fr = <Bls as Pairing>::ScalarField;

/// The attacker's circuit: one public input `y` that nothing constrains, and `m` copies of
/// `w·w = w`, so that it has the same `n` and `L` as an honest circuit with `m` constraints.
#[derive(Clone)]
struct Trivial {
    y: Option<Fr>,
    m: usize,
}

impl ConstraintSynthesizer<Fr> for Trivial {
    fn generate_constraints(self, cs: ConstraintSystemRef<Fr>) -> Result<(), SynthesisError> {
        let _y = cs.new_input_variable(|| self.y.ok_or(SynthesisError::AssignmentMissing))?;
        let w = cs.new_witness_variable(|| Ok(Fr::one()))?;
        for _ in 0..self.m {
            cs.enforce_r1cs_constraint(
                || LinearCombination::from(w),
                || LinearCombination::from(w),
                || LinearCombination::from(w),
            )?;
        }
        Ok(())
    }
}

const HONEST: CircuitFamily = CircuitFamily::Chain { steps: 100 };

/// The attacker's key (same `n`, `L` as the honest chain) and a bundle proving `y = 12345`,
/// which no chain preimage is known for.
fn forged_bundle() -> (VerifyingKey<Bls>, Bundle<Bls>, Vec<Fr>) {
    let honest = pari::r1cs::synthesize_setup::<Fr, _>(HONEST.blank::<Fr>()).unwrap();
    // As many constraint rows as the honest circuit (both are squares: one row each).
    let m = honest.num_rows() - honest.num_instance as usize;
    let mut rng = ChaCha20Rng::seed_from_u64(666);
    let (pk, vk) = setup::<Bls, _, _>(Trivial { y: None, m }, &mut rng).unwrap();
    let y = Fr::from(12345u64);
    let proof = prove(&pk, Trivial { y: Some(y), m }, &mut rng).unwrap();
    (vk.clone(), Bundle::new(&vk, vec![(vec![y], proof)]), vec![y])
}

/// Today's `verify-bundles` (and the aggregator's check) trusts the `vk.bin` found beside the
/// bundles: a key for a trivial circuit of the same size verifies a false statement.
#[test]
fn forged_key_of_same_size_verifies_when_the_key_is_not_pinned() {
    let (honest_pk, honest_vk) = setup::<Bls, _, _>(HONEST.blank::<Fr>(), &mut ChaCha20Rng::seed_from_u64(1)).unwrap();
    let (forged_vk, bundle, _) = forged_bundle();
    assert_eq!(forged_vk.domain_size, honest_vk.domain_size, "same n");
    assert_eq!(forged_vk.num_instance, honest_vk.num_instance, "same L");
    drop(honest_pk);
    // The unpinned path: the key beside the bundle. The math is right, the key is wrong.
    let beside = VerifyingKey::<Bls>::from_bytes(&forged_vk.to_bytes()).unwrap();
    bundle.verify(&beside.prepare().unwrap(), &mut ChaCha20Rng::seed_from_u64(2)).unwrap();
    // The pinned path refuses the forged key by its digest, naming both digests.
    let expected = honest_vk.digest();
    let err = VerifyingKey::<Bls>::from_bytes_pinned(&forged_vk.to_bytes(), &expected).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, pari::Error::UnexpectedKey { .. }), "{msg}");
    assert!(msg.contains(&expected.to_string()) && msg.contains(&forged_vk.digest().to_string()), "{msg}");
    // And the honest key refuses the bundle.
    assert!(bundle.verify(&honest_vk.prepare().unwrap(), &mut ChaCha20Rng::seed_from_u64(3)).is_err());
}

/// Edits a proving key's SR1CS rows as vectors.
fn edit_rows(pk: &mut ProvingKey<Bls>, edit: impl FnOnce(&mut Vec<Row<Fr>>, &mut Vec<Row<Fr>>)) {
    let (mut a, mut b) = (pk.sr1cs.a.to_rows(), pk.sr1cs.b.to_rows());
    edit(&mut a, &mut b);
    pk.sr1cs.a = SparseRows::from_rows(a).unwrap();
    pk.sr1cs.b = SparseRows::from_rows(b).unwrap();
}

/// A proving key with rows deleted: today it parses, then `prove` panics in `r1cs.rs`.
#[test]
fn proving_key_with_rows_deleted_is_refused_on_read() {
    let family = CircuitFamily::Chain { steps: 20 };
    let (pk, _) = setup::<Bls, _, _>(family.blank::<Fr>(), &mut ChaCha20Rng::seed_from_u64(4)).unwrap();
    for keep in [0, 1, pk.sr1cs.num_rows() / 2, pk.sr1cs.num_rows() - 1] {
        let mut cut = pk.clone();
        edit_rows(&mut cut, |a, b| {
            a.truncate(keep);
            b.truncate(keep);
        });
        let bytes = cut.to_bytes();
        match ProvingKey::<Bls>::from_bytes(&bytes) {
            Err(e) => assert!(e.to_string().contains("row"), "keep {keep}: {e}"),
            Ok(read) => {
                let (c, _) = family.instance::<Fr>(1);
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| prove(&read, c, &mut ChaCha20Rng::seed_from_u64(5))));
                panic!("keep {keep}: a key with rows deleted was accepted; prove then {}", match r {
                    Err(_) => "panicked".to_string(),
                    Ok(res) => format!("returned {:?}", res.map(|_| "a proof")),
                });
            }
        }
    }
    // Other damage of the same kind: an instance column in B, a moved outlined row, a witness
    // index past the end, and counts that overflow.
    let mut b_inst = pk.clone();
    edit_rows(&mut b_inst, |_, b| b[0].push((Fr::one(), 1)));
    let mut moved = pk.clone();
    let last = moved.sr1cs.num_rows() - 1;
    edit_rows(&mut moved, |a, b| {
        a.swap(0, last);
        b.swap(0, last);
    });
    let mut far = pk.clone();
    let past = far.sr1cs.num_variables();
    edit_rows(&mut far, |a, _| a[3].push((Fr::one(), past)));
    let mut overflow = pk.clone();
    overflow.sr1cs.r1cs_witness = u64::MAX - 1;
    for (what, bad) in [("instance column in B", b_inst), ("moved outlined row", moved), ("index past the end", far), ("overflow", overflow)] {
        let bytes = bad.to_bytes();
        let r = std::panic::catch_unwind(|| ProvingKey::<Bls>::from_bytes(&bytes).map(|_| ()));
        assert!(matches!(r, Ok(Err(_))), "{what}: accepted or panicked");
    }
}

/// A verifying key of a bad shape reached through arkworks' validated deserialization, or built
/// by hand: today `prepare` panics (`expect("checked domain size")`).
#[test]
fn badly_shaped_verifying_key_never_panics() {
    let (_, vk) = setup::<Bls, _, _>(CircuitFamily::Chain { steps: 3 }.blank::<Fr>(), &mut ChaCha20Rng::seed_from_u64(6)).unwrap();
    let bad_shapes = [
        VerifyingKey { domain_size: 3, ..vk.clone() },
        VerifyingKey { domain_size: 1 << 40, ..vk.clone() },
        VerifyingKey { num_instance: 0, ..vk.clone() },
        VerifyingKey { instance_row_start: u64::MAX, ..vk.clone() },
    ];
    for bad in bad_shapes {
        let what = format!("n = {}, L = {}, start = {}", bad.domain_size, bad.num_instance, bad.instance_row_start);
        // Validated deserialization (Valid::check) must refuse it.
        let bytes = bad.to_bytes();
        let via_ark = VerifyingKey::<Bls>::deserialize_compressed(&bytes[5..]);
        assert!(via_ark.is_err(), "{what}: accepted by validated deserialization");
        assert!(VerifyingKey::<Bls>::from_bytes(&bytes).is_err(), "{what}: accepted by from_bytes");
        // Built by hand: prepare returns an error instead of panicking.
        let r = std::panic::catch_unwind(|| bad.prepare().map(|_| ()));
        assert!(matches!(r, Ok(Err(_))), "{what}: prepare accepted or panicked");
    }
}

/// The forger knows the verifier's RNG (a fixed seed). With two copies of a valid proof it
/// shifts `U` by `Δ` in one and by `−(ρ₁/ρ₂)Δ` in the other: both copies share `r` (same `x`,
/// `T`), so the shifts cancel in `Ũ` and in `Ṽ`; each proof alone is invalid.
#[test]
fn predictable_batch_rng_does_not_help_a_forger() {
    let family = CircuitFamily::Chain { steps: 4 };
    let (pk, vk) = setup::<Bls, _, _>(family.blank::<Fr>(), &mut ChaCha20Rng::seed_from_u64(7)).unwrap();
    let pvk = vk.prepare().unwrap();
    let (c, x) = family.instance::<Fr>(1);
    let proof = prove(&pk, c, &mut ChaCha20Rng::seed_from_u64(8)).unwrap();
    verify(&pvk, &x, &proof).unwrap();

    const WEAK_SEED: u64 = 42;
    // What the forger predicts the weights to be: the first two draws of the verifier's RNG.
    let mut predicted = ChaCha20Rng::seed_from_u64(WEAK_SEED);
    let (rho1, rho2): (u128, u128) = (predicted.gen(), predicted.gen());
    let (rho1, rho2) = (Fr::from(rho1), Fr::from(rho2));
    let delta = <Bls as Pairing>::G1Affine::generator() * Fr::from(987654321u64);
    let p1 = Proof::<Bls> { u: (proof.u + delta).into_affine(), ..proof.clone() };
    let shift = rho1 * rho2.inverse().unwrap();
    let p2 = Proof::<Bls> { u: (proof.u.into_group() - delta * shift).into_affine(), ..proof.clone() };
    assert!(verify(&pvk, &x, &p1).is_err() && verify(&pvk, &x, &p2).is_err());

    let items: Vec<(&[Fr], &Proof<Bls>)> = vec![(&x, &p1), (&x, &p2)];
    assert!(batch_verify(&pvk, &items, &mut ChaCha20Rng::seed_from_u64(WEAK_SEED)).is_err(), "forged pair accepted");
    assert_eq!(batch_verify_locate(&pvk, &items, &mut ChaCha20Rng::seed_from_u64(WEAK_SEED)), Err(vec![0, 1]));
}
