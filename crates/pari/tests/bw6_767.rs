//! Pari on BW6-767 (issue 15 item 1): the outer curve of the Hekaton wrap, whose scalar field
//! is BLS12-381's base field. Completeness and the advertised size, tampering, and a batch
//! with a bad proof located.

use ark_ec::pairing::Pairing;
use ark_ec::{AffineRepr, CurveGroup};
use ark_ff::One;
use pari::circuits::CircuitFamily;
use pari::{batch_verify, batch_verify_locate, prove, setup, verify, Proof, VerifyingKey};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

type E = ark_bw6_767::BW6_767;
type F = <E as Pairing>::ScalarField;

fn rng() -> ChaCha20Rng {
    ChaCha20Rng::seed_from_u64(0x0767)
}

#[test]
fn bw6_767_completeness_tampering_and_batches() {
    let family = CircuitFamily::Chain { steps: 20 };
    let (pk, vk) = setup::<E, _, _>(family.blank::<F>(), &mut rng()).unwrap();
    let vk = VerifyingKey::<E>::from_bytes(&vk.to_bytes()).unwrap();
    let pvk = vk.prepare().unwrap();
    let mut r = rng();

    let mut statements = Vec::new();
    for seed in 0..6 {
        let (c, x) = family.instance::<F>(seed);
        let proof = prove(&pk, c, &mut r).unwrap();
        verify(&pvk, &x, &proof).unwrap();
        let proof = Proof::<E>::from_bytes(&proof.to_bytes()).unwrap();
        statements.push((x, proof));
    }
    // 2 G1 of BW6-767 (97 B compressed: 767 bits and two flag bits) + 2 elements of its
    // 381-bit scalar field.
    assert_eq!(statements[0].1.compressed_size(), 2 * 97 + 2 * 48);

    let (x, proof) = &statements[0];
    let mut wrong = x.clone();
    wrong[0] += F::one();
    assert!(verify(&pvk, &wrong, proof).is_err());
    assert!(verify(&pvk, x, &Proof { v_a: proof.v_a + F::one(), ..proof.clone() }).is_err());
    assert!(verify(&pvk, x, &Proof { v_b: proof.v_b + F::one(), ..proof.clone() }).is_err());
    let g = <E as Pairing>::G1Affine::generator();
    assert!(verify(&pvk, x, &Proof { t: (proof.t + g).into_affine(), ..proof.clone() }).is_err());
    assert!(verify(&pvk, x, &Proof { u: (proof.u + g).into_affine(), ..proof.clone() }).is_err());
    let mut bytes = proof.to_bytes();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    if let Ok(p) = Proof::<E>::from_bytes(&bytes) {
        assert!(verify(&pvk, x, &p).is_err());
    }

    let items: Vec<(&[F], &Proof<E>)> = statements.iter().map(|(x, p)| (x.as_slice(), p)).collect();
    batch_verify(&pvk, &items, &mut r).unwrap();
    let mut swapped = items.clone();
    swapped[4].1 = items[2].1;
    assert!(batch_verify(&pvk, &swapped, &mut r).is_err());
    assert_eq!(batch_verify_locate(&pvk, &swapped, &mut r), Err(vec![4]));
}
