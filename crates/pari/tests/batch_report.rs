//! Issue 16: a batch of proofs from bytes names every bad entry with its reason; proving keys
//! load by digest; key digests print and parse.

use ark_ec::pairing::Pairing;
use ark_ec::{AffineRepr, CurveGroup};
use ark_std::rand::SeedableRng;
use pari::batch::{public_inputs_to_bytes, verify_bytes, BadReason};
use pari::bundle::Bundle;
use pari::circuits::CircuitFamily;
use pari::{prove, setup, KeyDigest, Proof, ProvingKey, VerifyingKey};
use rand_chacha::ChaCha20Rng;

type Bls = ark_bls12_381::Bls12_381;
type Fr = <Bls as Pairing>::ScalarField;

const FAMILY: CircuitFamily = CircuitFamily::Chain { steps: 200 };

/// Twelve `(proof bytes, public-input bytes)` pairs and three of them damaged: entry 2 has a
/// point that does not parse, entry 7 a valid point that makes a wrong proof, entry 10 the
/// public input of another entry.
fn damaged_batch() -> (VerifyingKey<Bls>, Vec<(Vec<u8>, Vec<u8>)>, Vec<(Vec<Fr>, Proof<Bls>)>) {
    let mut rng = ChaCha20Rng::seed_from_u64(16);
    let (pk, vk) = setup::<Bls, _, _>(FAMILY.blank::<Fr>(), &mut rng).unwrap();
    let mut items: Vec<(Vec<Fr>, Proof<Bls>)> = (0..12u64)
        .map(|seed| {
            let (c, x) = FAMILY.instance::<Fr>(seed);
            (x, prove(&pk, c, &mut rng).unwrap())
        })
        .collect();
    let mut raw: Vec<(Vec<u8>, Vec<u8>)> =
        items.iter().map(|(x, p)| (p.to_bytes(), public_inputs_to_bytes::<Bls>(x))).collect();
    // Entry 2: flip bits of T's x-coordinate until it no longer parses.
    let original = raw[2].0.clone();
    let unparsable = (0..8)
        .flat_map(|bit| (6..50).map(move |pos| (pos, 1u8 << bit)))
        .map(|(pos, mask)| {
            let mut b = original.clone();
            b[pos] ^= mask;
            b
        })
        .find(|b| Proof::<Bls>::from_bytes(b).is_err())
        .unwrap();
    raw[2].0 = unparsable;
    // Entry 7: U + G, a valid point.
    let p7 = &items[7].1;
    let wrong = Proof::<Bls> { u: (p7.u + <Bls as Pairing>::G1Affine::generator()).into_affine(), ..p7.clone() };
    raw[7].0 = wrong.to_bytes();
    items[7].1 = wrong;
    // Entry 10: the public input of entry 11.
    raw[10].1 = public_inputs_to_bytes::<Bls>(&items[11].0);
    items[10].0 = items[11].0.clone();
    (vk, raw, items)
}

#[test]
fn batch_from_bytes_names_exactly_the_three_damaged_entries() {
    let (vk, raw, _) = damaged_batch();
    let pvk = vk.prepare().unwrap();
    let entries: Vec<(&[u8], &[u8])> = raw.iter().map(|(p, x)| (p.as_slice(), x.as_slice())).collect();
    let report = verify_bytes(&pvk, &entries, &mut ChaCha20Rng::seed_from_u64(1));
    assert_eq!(report.total, 12);
    assert_eq!(report.verified(), 9);
    assert_eq!(report.bad_indices(), vec![2, 7, 10]);
    assert!(matches!(report.bad[0].reason, BadReason::UnparsableProof(_)), "{:?}", report.bad[0]);
    assert_eq!(report.bad[1].reason, BadReason::FailsCheck);
    assert_eq!(report.bad[2].reason, BadReason::FailsCheck);

    // Wrong public-input counts and unparsable public inputs are named too.
    let none = public_inputs_to_bytes::<Bls>(&[]);
    let two = public_inputs_to_bytes::<Bls>(&[Fr::from(1u64), Fr::from(2u64)]);
    let mut entries2 = entries.clone();
    entries2[0].1 = &none;
    entries2[5].1 = &two;
    entries2[6].1 = b"PRPX\x01\xff";
    let report = verify_bytes(&pvk, &entries2, &mut ChaCha20Rng::seed_from_u64(2));
    assert_eq!(report.bad_indices(), vec![0, 2, 5, 6, 7, 10]);
    assert_eq!(report.bad[0].reason, BadReason::WrongPublicInputCount { expected: 1, got: 0 });
    assert_eq!(report.bad[2].reason, BadReason::WrongPublicInputCount { expected: 1, got: 2 });
    assert!(matches!(report.bad[3].reason, BadReason::UnparsablePublicInput(_)));

    // All good: nothing named.
    let (_, raw_ok, _) = (0, raw.clone(), ());
    let good: Vec<(&[u8], &[u8])> =
        raw_ok.iter().enumerate().filter(|(k, _)| ![2, 7, 10].contains(k)).map(|(_, (p, x))| (p.as_slice(), x.as_slice())).collect();
    let report = verify_bytes(&pvk, &good, &mut ChaCha20Rng::seed_from_u64(3));
    assert!(report.all_verified() && report.verified() == 9);
}

#[test]
fn bundle_bytes_report_every_bad_entry() {
    let (vk, raw, items) = damaged_batch();
    let pvk = vk.prepare().unwrap();
    // Entry 2's damaged point inside the bundle's bytes: the whole-bundle parser refuses the
    // bundle, the per-entry parser names the entry.
    let mut good_items = items.clone();
    good_items[2].1 = Proof::<Bls>::from_bytes(&{
        let (c, _) = FAMILY.instance::<Fr>(2);
        let (pk, _) = setup::<Bls, _, _>(FAMILY.blank::<Fr>(), &mut ChaCha20Rng::seed_from_u64(16)).unwrap();
        prove(&pk, c, &mut ChaCha20Rng::seed_from_u64(0)).unwrap().to_bytes()
    })
    .unwrap();
    let bundle = Bundle::new(&vk, good_items);
    let mut bytes = bundle.to_bytes();
    let proof2 = good_items_proof_bytes(&bundle, 2);
    let at = find(&bytes, &proof2);
    bytes[at..at + proof2.len()].copy_from_slice(&raw[2].0[5..]);
    assert!(Bundle::<Bls>::from_bytes(&bytes).is_err());
    let report = Bundle::<Bls>::verify_bytes_report(&bytes, &pvk, &mut ChaCha20Rng::seed_from_u64(4)).unwrap();
    assert_eq!(report.bad_indices(), vec![2, 7, 10]);
    assert!(matches!(report.bad[0].reason, BadReason::UnparsableProof(_)));
    // The parsed-bundle path agrees on the parsable entries.
    let report = bundle.verify_report(&pvk, &mut ChaCha20Rng::seed_from_u64(5)).unwrap();
    assert_eq!(report.bad_indices(), vec![7, 10]);
    // Damaged structure and another key are errors for the whole bundle, never a panic.
    for cut in [0, 4, 5, 12, 80, bytes.len() - 1] {
        assert!(Bundle::<Bls>::verify_bytes_report(&bytes[..cut], &pvk, &mut ChaCha20Rng::seed_from_u64(6)).is_err());
    }
    let mut huge = bytes.clone();
    huge[5 + 8 + 64..5 + 8 + 64 + 8].copy_from_slice(&u64::MAX.to_le_bytes());
    assert!(Bundle::<Bls>::verify_bytes_report(&huge, &pvk, &mut ChaCha20Rng::seed_from_u64(7)).is_err());
    let (_, other) = setup::<Bls, _, _>(FAMILY.blank::<Fr>(), &mut ChaCha20Rng::seed_from_u64(99)).unwrap();
    let err = Bundle::<Bls>::verify_bytes_report(&bytes, &other.prepare().unwrap(), &mut ChaCha20Rng::seed_from_u64(8)).unwrap_err();
    assert!(matches!(err, pari::Error::KeyMismatch(_)), "{err}");
}

fn good_items_proof_bytes(bundle: &Bundle<Bls>, k: usize) -> Vec<u8> {
    bundle.items[k].1.to_bytes()[5..].to_vec()
}

fn find(hay: &[u8], needle: &[u8]) -> usize {
    hay.windows(needle.len()).position(|w| w == needle).unwrap()
}

#[test]
fn key_digests_print_parse_and_pin() {
    let (pk, vk) = setup::<Bls, _, _>(CircuitFamily::Chain { steps: 30 }.blank::<Fr>(), &mut ChaCha20Rng::seed_from_u64(9)).unwrap();
    let d = vk.digest();
    let hex = d.to_string();
    assert_eq!(hex.len(), 128);
    assert_eq!(hex.parse::<KeyDigest>().unwrap(), d);
    assert_eq!(d, KeyDigest::of_bytes(&vk.to_bytes()));
    assert_eq!(vk.prepare().unwrap().key_digest(), d);
    assert!(hex[..127].parse::<KeyDigest>().is_err());
    assert!(format!("{}g", &hex[..127]).parse::<KeyDigest>().is_err());
    VerifyingKey::<Bls>::from_bytes_pinned(&vk.to_bytes(), &d).unwrap();

    // Proving key by digest: refuses other bytes, loads the recorded ones without point checks.
    let bytes = pk.to_bytes();
    let recorded = KeyDigest::of_bytes(&bytes);
    assert_eq!(ProvingKey::<Bls>::from_bytes_with_digest(&bytes, &recorded).unwrap(), pk);
    let mut other = bytes.clone();
    let last = other.len() - 1;
    other[last] ^= 1;
    assert!(matches!(ProvingKey::<Bls>::from_bytes_with_digest(&other, &recorded), Err(pari::Error::UnexpectedKey { .. })));
    // The uncompressed cache encoding loads by its own digest, to the same key.
    let raw = pk.to_bytes_uncompressed();
    assert_eq!(ProvingKey::<Bls>::from_bytes_with_digest(&raw, &KeyDigest::of_bytes(&raw)).unwrap(), pk);
    assert!(ProvingKey::<Bls>::from_bytes_with_digest(&raw, &recorded).is_err());
    // A recorded digest does not excuse a bad shape: a key with rows deleted is refused.
    let mut cut = pk.clone();
    let (mut a, mut b) = (cut.sr1cs.a.to_rows(), cut.sr1cs.b.to_rows());
    a.pop();
    b.pop();
    cut.sr1cs.a = pari::r1cs::SparseRows::from_rows(a).unwrap();
    cut.sr1cs.b = pari::r1cs::SparseRows::from_rows(b).unwrap();
    let cut = cut.to_bytes_uncompressed();
    let err = ProvingKey::<Bls>::from_bytes_with_digest(&cut, &KeyDigest::of_bytes(&cut)).unwrap_err();
    assert!(err.to_string().contains("row count"), "{err}");

    // Without a digest anyone but the bytes' supplier controls, every point is checked, in
    // either encoding: a point moved off the curve is refused by `from_bytes_checked`, though
    // its own digest (say, stored beside it) lets `from_bytes_with_digest` load it.
    assert_eq!(ProvingKey::<Bls>::from_bytes_checked(&bytes).unwrap(), pk);
    assert_eq!(ProvingKey::<Bls>::from_bytes_checked(&raw).unwrap(), pk);
    let mut point = Vec::new();
    ark_serialize::CanonicalSerialize::serialize_uncompressed(&pk.sigma[0], &mut point).unwrap();
    let at = find(&raw, &point);
    let mut off = raw.clone();
    off[at] ^= 1;
    assert!(ProvingKey::<Bls>::from_bytes_with_digest(&off, &KeyDigest::of_bytes(&off)).is_ok());
    let err = ProvingKey::<Bls>::from_bytes_checked(&off).unwrap_err();
    assert!(err.to_string().contains("proving key"), "{err}");

    // Keys written before the compact SR1CS (version 1) load, by every path, by their own
    // digest; the compact encoding is the smaller; an unknown version is refused.
    for compress in [true, false] {
        let old = pk.to_bytes_v1(compress);
        let new = if compress { &bytes } else { &raw };
        assert_eq!(old[4], 1);
        assert_eq!(new[4], 2);
        assert!(new.len() < old.len(), "compact {} against {}", new.len(), old.len());
        assert_eq!(ProvingKey::<Bls>::from_bytes_with_digest(&old, &KeyDigest::of_bytes(&old)).unwrap(), pk);
        assert_eq!(ProvingKey::<Bls>::from_bytes_checked(&old).unwrap(), pk);
        if compress {
            assert_eq!(ProvingKey::<Bls>::from_bytes(&old).unwrap(), pk);
        }
        let mut unknown = new.clone();
        unknown[4] = 3;
        let err = ProvingKey::<Bls>::from_bytes_checked(&unknown).unwrap_err();
        assert!(err.to_string().contains("unsupported version 3"), "{err}");
    }
}
