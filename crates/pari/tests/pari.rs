//! Completeness, zero knowledge, soundness and batch verification of Pari on BLS12-381 and BN254.

use ark_ec::pairing::Pairing;
use ark_ec::{AffineRepr, CurveGroup};
use ark_ff::{One, UniformRand, Zero};
use ark_std::rand::{Rng, SeedableRng};
use pari::circuits::CircuitFamily;
use pari::{batch_verify, batch_verify_locate, prove, setup, verify, Proof, ProvingKey, VerifyingKey};
use rand_chacha::ChaCha20Rng;

type Bls = ark_bls12_381::Bls12_381;
type Bn = ark_bn254::Bn254;

fn rng() -> ChaCha20Rng {
    ChaCha20Rng::seed_from_u64(0x5041_5249)
}

fn keys<E: Pairing>(family: CircuitFamily) -> (ProvingKey<E>, VerifyingKey<E>)
where
    E::ScalarField: ark_crypto_primitives::sponge::Absorb,
{
    setup::<E, _, _>(family.blank::<E::ScalarField>(), &mut rng()).unwrap()
}

fn completeness<E: Pairing>()
where
    E::ScalarField: ark_crypto_primitives::sponge::Absorb,
{
    for family in [CircuitFamily::Chain { steps: 1 }, CircuitFamily::Chain { steps: 37 }, CircuitFamily::Poseidon { inputs: 2 }] {
        let (pk, vk) = keys::<E>(family);
        let pvk = vk.prepare().unwrap();
        for seed in 0..2 {
            let (circuit, x) = family.instance::<E::ScalarField>(seed);
            let proof = prove(&pk, circuit, &mut rng()).unwrap();
            verify(&pvk, &x, &proof).unwrap_or_else(|e| panic!("{family:?} seed {seed}: {e}"));
            // Serialization round trip, and the advertised size.
            let bytes = proof.to_bytes();
            assert_eq!(Proof::<E>::from_bytes(&bytes).unwrap(), proof);
            let vk2 = VerifyingKey::<E>::from_bytes(&vk.to_bytes()).unwrap();
            verify(&vk2.prepare().unwrap(), &x, &proof).unwrap();
        }
    }
}

/// Completeness, plus the advertised compressed proof size.
fn completeness_and_size<E: Pairing>(size: usize)
where
    E::ScalarField: ark_crypto_primitives::sponge::Absorb,
{
    completeness::<E>();
    let (pk, _) = keys::<E>(CircuitFamily::Chain { steps: 3 });
    let (c, _) = CircuitFamily::Chain { steps: 3 }.instance(1);
    assert_eq!(prove(&pk, c, &mut rng()).unwrap().compressed_size(), size);
}

#[test]
fn completeness_bls12_381() {
    completeness_and_size::<Bls>(160);
}

#[test]
fn completeness_bn254() {
    completeness_and_size::<Bn>(128);
}

#[test]
fn proving_key_round_trip_and_malformed_keys() {
    let family = CircuitFamily::Chain { steps: 5 };
    let (pk, vk) = keys::<Bls>(family);
    let pk2 = ProvingKey::<Bls>::from_bytes(&pk.to_bytes()).unwrap();
    let (c, x) = family.instance(3);
    let proof = prove(&pk2, c, &mut rng()).unwrap();
    verify(&vk.prepare().unwrap(), &x, &proof).unwrap();
    let vk_bytes = vk.to_bytes();
    assert!(VerifyingKey::<Bls>::from_bytes(&vk_bytes[..vk_bytes.len() - 1]).is_err());
    let mut bad = vk_bytes.clone();
    bad[4] = 9; // version
    assert!(VerifyingKey::<Bls>::from_bytes(&bad).is_err());
    let mut bad = vk_bytes.clone();
    bad[10] ^= 0x01; // inside αG... or G: off the curve or not in the subgroup
    if let Ok(vk_bad) = VerifyingKey::<Bls>::from_bytes(&bad) {
        assert!(verify(&vk_bad.prepare().unwrap(), &x, &proof).is_err());
    }
    assert!(ProvingKey::<Bls>::from_bytes(b"PRPK\x01").is_err());
}

#[test]
fn zero_knowledge_proofs_are_randomized() {
    let family = CircuitFamily::Chain { steps: 8 };
    let (pk, vk) = keys::<Bls>(family);
    let pvk = vk.prepare().unwrap();
    let (c, x) = family.instance(7);
    let mut r = rng();
    let p1 = prove(&pk, c.clone(), &mut r).unwrap();
    let p2 = prove(&pk, c, &mut r).unwrap();
    verify(&pvk, &x, &p1).unwrap();
    verify(&pvk, &x, &p2).unwrap();
    assert_ne!(p1.t, p2.t);
    assert_ne!(p1.u, p2.u);
    assert_ne!(p1.v_a, p2.v_a);
    assert_ne!(p1.v_b, p2.v_b);
}

#[test]
fn soundness_bad_proofs_are_rejected() {
    let family = CircuitFamily::Poseidon { inputs: 1 };
    let (pk, vk) = keys::<Bls>(family);
    let pvk = vk.prepare().unwrap();
    let (c, x) = family.instance(11);
    let proof = prove(&pk, c, &mut rng()).unwrap();
    verify(&pvk, &x, &proof).unwrap();

    // Wrong public input, and a wrong number of public inputs.
    let wrong = vec![x[0] + <Bls as Pairing>::ScalarField::one()];
    assert!(verify(&pvk, &wrong, &proof).is_err());
    assert!(verify(&pvk, &[], &proof).is_err());
    assert!(verify(&pvk, &[x[0], x[0]], &proof).is_err());
    // Swapped T and U.
    let swapped = Proof::<Bls> { t: proof.u, u: proof.t, ..proof.clone() };
    assert!(verify(&pvk, &x, &swapped).is_err());
    // Tampered field elements and points.
    assert!(verify(&pvk, &x, &Proof { v_a: proof.v_a + <Bls as Pairing>::ScalarField::one(), ..proof.clone() }).is_err());
    assert!(verify(&pvk, &x, &Proof { v_b: proof.v_b + <Bls as Pairing>::ScalarField::one(), ..proof.clone() }).is_err());
    let g = <Bls as Pairing>::G1Affine::generator();
    assert!(verify(&pvk, &x, &Proof { t: (proof.t + g).into_affine(), ..proof.clone() }).is_err());
    assert!(verify(&pvk, &x, &Proof { u: (proof.u + g).into_affine(), ..proof.clone() }).is_err());
    // Proof under another key (same circuit, fresh setup).
    let (_, vk_other) = setup::<Bls, _, _>(family.blank(), &mut ChaCha20Rng::seed_from_u64(99)).unwrap();
    assert!(verify(&vk_other.prepare().unwrap(), &x, &proof).is_err());
    // A witness that does not satisfy the circuit is refused by the prover.
    let (mut bad_circuit, _) = family.instance::<<Bls as Pairing>::ScalarField>(12);
    bad_circuit.public = Some(x[0]);
    assert!(matches!(prove(&pk, bad_circuit, &mut rng()), Err(pari::Error::Unsatisfied(_))));
    // A circuit of another shape is refused.
    let (other, _) = CircuitFamily::Poseidon { inputs: 2 }.instance::<<Bls as Pairing>::ScalarField>(1);
    assert!(prove(&pk, other, &mut rng()).is_err());

    // Every single-bit flip of every byte of the serialized proof is rejected or fails to parse.
    let bytes = proof.to_bytes();
    for pos in 0..bytes.len() {
        for delta in (0..8).map(|b| 1u8 << b) {
            let mut b = bytes.clone();
            b[pos] ^= delta;
            if let Ok(p) = Proof::<Bls>::from_bytes(&b) {
                assert!(verify(&pvk, &x, &p).is_err(), "byte {pos} ^ {delta:#x} accepted");
            }
        }
    }
}

#[test]
fn batch_of_1000_with_one_bad_proof_is_located() {
    let family = CircuitFamily::Chain { steps: 2 };
    let (pk, vk) = keys::<Bn>(family);
    let pvk = vk.prepare().unwrap();
    let mut r = rng();
    let mut xs = Vec::new();
    let mut proofs = Vec::new();
    for seed in 0..1000u64 {
        let (c, x) = family.instance::<<Bn as Pairing>::ScalarField>(seed);
        proofs.push(prove(&pk, c, &mut r).unwrap());
        xs.push(x);
    }
    let items: Vec<(&[_], &Proof<Bn>)> = xs.iter().map(|x| x.as_slice()).zip(proofs.iter()).collect();
    batch_verify(&pvk, &items, &mut r).unwrap();
    assert_eq!(batch_verify_locate(&pvk, &items, &mut r), Ok(()));

    // One bad proof at a random position: the proof of another statement.
    let bad_at = r.gen_range(0..1000);
    let mut bad_proofs = proofs.clone();
    bad_proofs[bad_at] = proofs[(bad_at + 1) % 1000].clone();
    let items: Vec<(&[_], &Proof<Bn>)> = xs.iter().map(|x| x.as_slice()).zip(bad_proofs.iter()).collect();
    assert!(batch_verify(&pvk, &items, &mut r).is_err());
    assert_eq!(batch_verify_locate(&pvk, &items, &mut r), Err(vec![bad_at]));

    // Two bad proofs, one of them a tampered scalar.
    let second = (bad_at + 500) % 1000;
    bad_proofs[second].v_b += <Bn as Pairing>::ScalarField::rand(&mut r);
    let items: Vec<(&[_], &Proof<Bn>)> = xs.iter().map(|x| x.as_slice()).zip(bad_proofs.iter()).collect();
    let mut expected = vec![bad_at, second];
    expected.sort_unstable();
    assert_eq!(batch_verify_locate(&pvk, &items, &mut r), Err(expected));

    // A batch with duplicated valid entries still verifies.
    let mut dup: Vec<(&[_], &Proof<Bn>)> = xs.iter().map(|x| x.as_slice()).zip(proofs.iter()).take(50).collect();
    let again = dup.clone();
    dup.extend(again);
    dup.push((xs[3].as_slice(), &proofs[3]));
    batch_verify(&pvk, &dup, &mut r).unwrap();

    // A wrong-length public input inside a batch is found too.
    let short: Vec<<Bn as Pairing>::ScalarField> = Vec::new();
    let mut items: Vec<(&[_], &Proof<Bn>)> = xs.iter().map(|x| x.as_slice()).zip(proofs.iter()).take(10).collect();
    items[4].0 = &short;
    assert_eq!(batch_verify_locate(&pvk, &items, &mut r), Err(vec![4]));
}

#[test]
fn bundles_round_trip_verify_and_reject_tampering() {
    use pari::bundle::{Bundle, ProofList};
    type E = ark_bls12_381::Bls12_381;
    let family = CircuitFamily::Chain { steps: 3 };
    let (pk, vk) = keys::<E>(family);
    let mut r = rng();
    let items: Vec<_> = (0..6u64)
        .map(|seed| {
            let (c, x) = family.instance(seed);
            (x, prove(&pk, c, &mut r).unwrap())
        })
        .collect();
    let list = ProofList { items: items.clone() };
    assert_eq!(ProofList::<E>::from_bytes(&list.to_bytes()).unwrap(), list);
    let bundle = Bundle::new(&vk, items);
    let bytes = bundle.to_bytes();
    let back = Bundle::<E>::from_bytes(&bytes).unwrap();
    assert_eq!(back, bundle);
    let pvk = vk.prepare().unwrap();
    back.verify(&pvk, &mut r).unwrap();
    assert_eq!(back.locate_invalid(&pvk, &mut r).unwrap(), Vec::<usize>::new());
    // A wrong public input at entry 4 fails the bundle and is located.
    let mut bad = bundle.clone();
    bad.items[4].0[0] += <E as Pairing>::ScalarField::one();
    assert!(bad.verify(&pvk, &mut r).is_err());
    assert_eq!(bad.locate_invalid(&pvk, &mut r).unwrap(), vec![4]);
    // Under another key: refused before any pairing.
    let (_, other) = keys::<E>(CircuitFamily::Chain { steps: 4 });
    assert!(matches!(bundle.verify(&other.prepare().unwrap(), &mut r), Err(pari::Error::KeyMismatch(_))));
    // Damaged bytes: rejected or fail to verify.
    for pos in (5..bytes.len()).step_by(97) {
        let mut b = bytes.clone();
        b[pos] ^= 0x10;
        if let Ok(parsed) = Bundle::<E>::from_bytes(&b) {
            assert!(parsed.verify(&pvk, &mut r).is_err(), "flip at {pos} accepted");
        }
    }
    assert!(Bundle::<E>::from_bytes(&bytes[..bytes.len() - 1]).is_err());
}

/// The tuned single verifier (fixed-base table, GLV `r·U`) against the untuned one kept in
/// `verifier::baseline`: both accept honest proofs, and both reject a tampered proof (each
/// component) and a changed public input.
fn tuned_verifier_rejects_tampering<E: Pairing>()
where
    E::ScalarField: ark_crypto_primitives::sponge::Absorb,
{
    use pari::verifier::baseline;
    type F<E> = <E as Pairing>::ScalarField;
    let family = CircuitFamily::Poseidon { inputs: 2 };
    let (pk, vk) = keys::<E>(family);
    let pvk = vk.prepare().unwrap();
    let mut r = rng();
    let g = E::G1Affine::generator();
    for seed in 0..3u64 {
        let (c, x) = family.instance::<F<E>>(seed);
        let proof = prove(&pk, c, &mut r).unwrap();
        verify(&pvk, &x, &proof).unwrap();
        baseline::verify(&pvk, &x, &proof).unwrap();
        let k = F::<E>::rand(&mut r);
        let tampered = [
            Proof { t: (proof.t + g).into_affine(), ..proof.clone() },
            Proof { u: (proof.u + g).into_affine(), ..proof.clone() },
            Proof { u: (proof.u + g * k).into_affine(), ..proof.clone() },
            Proof { t: proof.u, u: proof.t, ..proof.clone() },
            Proof { v_a: proof.v_a + F::<E>::one(), ..proof.clone() },
            Proof { v_b: proof.v_b + k, ..proof.clone() },
            Proof { v_a: proof.v_b, v_b: proof.v_a, ..proof.clone() },
            Proof { t: <E::G1Affine as AffineRepr>::zero(), u: <E::G1Affine as AffineRepr>::zero(), v_a: F::<E>::zero(), v_b: F::<E>::zero() },
        ];
        for (i, p) in tampered.iter().enumerate() {
            assert!(verify(&pvk, &x, p).is_err(), "seed {seed}: tampered proof {i} accepted");
            assert!(baseline::verify(&pvk, &x, p).is_err(), "seed {seed}: tampered proof {i} accepted (baseline)");
        }
        for j in 0..x.len() {
            let mut changed = x.clone();
            changed[j] += F::<E>::one();
            assert!(verify(&pvk, &changed, &proof).is_err(), "seed {seed}: changed input {j} accepted");
            changed[j] = k;
            assert!(verify(&pvk, &changed, &proof).is_err(), "seed {seed}: random input {j} accepted");
            assert!(baseline::verify(&pvk, &changed, &proof).is_err());
        }
        let mut longer = x.clone();
        longer.push(F::<E>::one());
        assert!(matches!(verify(&pvk, &longer, &proof), Err(pari::Error::PublicInput(_))));
    }
}

#[test]
fn tuned_verifier_rejects_tampering_bls12_381() {
    tuned_verifier_rejects_tampering::<Bls>();
}

#[test]
fn tuned_verifier_rejects_tampering_bn254() {
    tuned_verifier_rejects_tampering::<Bn>();
}

/// The tuned batch verifier (own MSMs, openings reused by the bisection) names the same bad
/// proofs as the untuned one, on a batch with bad proofs of every kind.
fn tuned_batch_locates_like_baseline<E: Pairing>()
where
    E::ScalarField: ark_crypto_primitives::sponge::Absorb,
{
    use pari::verifier::baseline;
    type F<E> = <E as Pairing>::ScalarField;
    let family = CircuitFamily::Chain { steps: 2 };
    let (pk, vk) = keys::<E>(family);
    let pvk = vk.prepare().unwrap();
    let mut r = rng();
    let mut xs: Vec<Vec<F<E>>> = Vec::new();
    let mut proofs: Vec<Proof<E>> = Vec::new();
    for seed in 0..70u64 {
        let (c, x) = family.instance::<F<E>>(seed);
        proofs.push(prove(&pk, c, &mut r).unwrap());
        xs.push(x);
    }
    let items: Vec<(&[F<E>], &Proof<E>)> = xs.iter().map(|x| x.as_slice()).zip(proofs.iter()).collect();
    batch_verify(&pvk, &items, &mut r).unwrap();
    assert_eq!(batch_verify_locate(&pvk, &items, &mut r), Ok(()));
    let g = E::G1Affine::generator();
    proofs[0].t = (proofs[0].t + g).into_affine();
    proofs[17].v_a += F::<E>::one();
    proofs[18] = proofs[19].clone();
    proofs[69].u = (proofs[69].u + g).into_affine();
    xs[40][0] += F::<E>::one();
    let empty: Vec<F<E>> = Vec::new();
    let mut items: Vec<(&[F<E>], &Proof<E>)> = xs.iter().map(|x| x.as_slice()).zip(proofs.iter()).collect();
    items[55].0 = &empty;
    let expected = vec![0, 17, 18, 40, 55, 69];
    assert!(batch_verify(&pvk, &items, &mut r).is_err());
    assert_eq!(batch_verify_locate(&pvk, &items, &mut r), Err(expected.clone()));
    assert_eq!(baseline::batch_verify_locate(&pvk, &items, &mut r), Err(expected));
}

#[test]
fn tuned_batch_locates_like_baseline_bls12_381() {
    tuned_batch_locates_like_baseline::<Bls>();
}

#[test]
fn tuned_batch_locates_like_baseline_bn254() {
    tuned_batch_locates_like_baseline::<Bn>();
}

/// Circuits large enough that the prover's MSMs take the batch-affine Pippenger (at least
/// `Pippenger::BATCH_AFFINE_MIN` points in T's and U's MSMs): proofs verify, and the same proof
/// under another public input does not.
fn large_circuit_proofs<E: Pairing>()
where
    E::ScalarField: ark_crypto_primitives::sponge::Absorb,
{
    let family = CircuitFamily::Chain { steps: 700 };
    let (pk, vk) = keys::<E>(family);
    assert!(pk.vk.domain_size as usize + 1 >= pari::msm::Pippenger::BATCH_AFFINE_MIN, "the circuit is too small to reach the batch-affine MSM");
    let pvk = vk.prepare().unwrap();
    let (circuit, x) = family.instance::<E::ScalarField>(3);
    let proof = prove(&pk, circuit, &mut rng()).unwrap();
    verify(&pvk, &x, &proof).unwrap();
    let mut other = x.clone();
    other[0] += E::ScalarField::one();
    assert!(verify(&pvk, &other, &proof).is_err(), "a proof verified for another statement");
}

#[test]
fn large_circuit_proofs_bls12_381() {
    large_circuit_proofs::<Bls>();
}

#[test]
fn large_circuit_proofs_bn254() {
    large_circuit_proofs::<Bn>();
}
