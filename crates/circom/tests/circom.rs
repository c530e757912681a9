//! circom's own files (tests/fixtures, made by circom2 and snarkjs: see make.sh) read, checked
//! and proved with Pari and Groth16 on both curves; bad files and witnesses refused.

use ark_ff::{One, PrimeField};
use ark_relations::gr1cs::{ConstraintSynthesizer, ConstraintSystem};
use circom::{read_wtns, write_wtns, CircomCircuit, Constraint, Error, R1cs};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;

const BN254_R1CS: &[u8] = include_bytes!("fixtures/example-bn254.r1cs");
const BN254_WTNS: &[u8] = include_bytes!("fixtures/example-bn254.wtns");
const BLS_R1CS: &[u8] = include_bytes!("fixtures/example-bls12381.r1cs");
const BLS_WTNS: &[u8] = include_bytes!("fixtures/example-bls12381.wtns");

fn load<F: PrimeField>(r1cs: &[u8], wtns: &[u8]) -> (R1cs<F>, Vec<F>) {
    (R1cs::from_bytes(r1cs).unwrap(), read_wtns(wtns).unwrap())
}

#[test]
fn circoms_files_are_read_with_their_public_signals() {
    let (r, w) = load::<ark_bn254::Fr>(BN254_R1CS, BN254_WTNS);
    // `snarkjs r1cs info`: 521 wires, 518 constraints, 2 outputs, 1 public and 1 private input.
    assert_eq!((r.num_wires, r.constraints.len()), (521, 518));
    assert_eq!((r.num_pub_out, r.num_pub_in, r.num_prv_in, r.num_labels), (2, 1, 1, 772));
    assert_eq!(r.wire_labels.as_ref().map(Vec::len), Some(521));
    r.check_witness(&w).unwrap();
    // Outputs c = a·b = 33 and h = Poseidon(3, 11), then the public input b = 11.
    let public = r.public_signals(&w);
    assert_eq!(public.len(), 3);
    assert_eq!((public[0], public[2]), (ark_bn254::Fr::from(33u64), ark_bn254::Fr::from(11u64)));
    // The same circuit compiled for BLS12-381.
    let (r, w) = load::<ark_bls12_381::Fr>(BLS_R1CS, BLS_WTNS);
    r.check_witness(&w).unwrap();
    assert_eq!(r.public_signals(&w)[0], ark_bls12_381::Fr::from(33u64));
}

#[test]
fn writing_and_reading_again_gives_the_same_file() {
    let (r, w) = load::<ark_bn254::Fr>(BN254_R1CS, BN254_WTNS);
    assert_eq!(R1cs::<ark_bn254::Fr>::from_bytes(&r.to_bytes()).unwrap(), r);
    assert_eq!(read_wtns::<ark_bn254::Fr>(&write_wtns(&w)).unwrap(), w);
    // snarkjs writes the witness exactly as this crate does.
    assert_eq!(write_wtns(&w), BN254_WTNS);
}

fn pari_round_trip<E: ark_ec::pairing::Pairing>(r1cs: &[u8], wtns: &[u8]) {
    let (r, w) = load::<E::ScalarField>(r1cs, wtns);
    let mut rng = ChaCha20Rng::seed_from_u64(7);
    let (pk, vk) = pari::setup::<E, _, _>(CircomCircuit { r1cs: &r, witness: None }, &mut rng).unwrap();
    let proof = pari::prove(&pk, CircomCircuit { r1cs: &r, witness: Some(&w) }, &mut rng).unwrap();
    let pvk = vk.prepare().unwrap();
    let x = r.public_signals(&w).to_vec();
    pari::verify(&pvk, &x, &proof).unwrap();
    // Another output, or another public input, is refused.
    for i in 0..x.len() {
        let mut bad = x.clone();
        bad[i] += E::ScalarField::one();
        assert!(pari::verify(&pvk, &bad, &proof).is_err(), "public signal {i} changed");
    }
    // A tampered proof is refused.
    let mut bytes = proof.to_bytes();
    let n = bytes.len();
    bytes[n - 1] ^= 1;
    if let Ok(p) = pari::Proof::<E>::from_bytes(&bytes) {
        assert!(pari::verify(&pvk, &x, &p).is_err());
    }
}

#[test]
fn pari_proves_circom_circuits_on_bn254() {
    pari_round_trip::<ark_bn254::Bn254>(BN254_R1CS, BN254_WTNS);
}

#[test]
fn pari_proves_circom_circuits_on_bls12_381() {
    pari_round_trip::<ark_bls12_381::Bls12_381>(BLS_R1CS, BLS_WTNS);
}

#[test]
fn groth16_proves_the_same_constraint_system() {
    use ark_snark::SNARK;
    type G = ark_groth16::Groth16<ark_bn254::Bn254>;
    let (r, w) = load::<ark_bn254::Fr>(BN254_R1CS, BN254_WTNS);
    let mut rng = ChaCha20Rng::seed_from_u64(8);
    let (pk, vk) = G::circuit_specific_setup(CircomCircuit { r1cs: &r, witness: None }, &mut rng).unwrap();
    let proof = G::prove(&pk, CircomCircuit { r1cs: &r, witness: Some(&w) }, &mut rng).unwrap();
    let x = r.public_signals(&w);
    assert!(G::verify(&vk, x, &proof).unwrap());
    let mut bad = x.to_vec();
    bad[1] += ark_bn254::Fr::one();
    assert!(!G::verify(&vk, &bad, &proof).unwrap());
}

#[test]
fn a_file_for_another_prime_is_refused_by_name() {
    let err = R1cs::<ark_bls12_381::Fr>::from_bytes(BN254_R1CS).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, Error::Prime { .. }), "{msg}");
    assert!(msg.contains("bn128") && msg.contains("BLS12-381") && msg.contains("--prime bls12381"), "{msg}");
    let err = read_wtns::<ark_bn254::Fr>(BLS_WTNS).unwrap_err();
    assert!(err.to_string().contains("bls12381"), "{err}");
}

#[test]
fn a_witness_that_does_not_satisfy_names_the_first_failing_constraint() {
    let (r, w) = load::<ark_bn254::Fr>(BN254_R1CS, BN254_WTNS);
    let eval = |lc: &Vec<(u32, ark_bn254::Fr)>, w: &[ark_bn254::Fr]| -> ark_bn254::Fr {
        lc.iter().map(|(i, c)| w[*i as usize] * c).sum()
    };
    let mut rng = ChaCha20Rng::seed_from_u64(9);
    for _ in 0..5 {
        let mut bad = w.clone();
        let wire = rng.gen_range(1..w.len());
        bad[wire] += ark_bn254::Fr::one();
        let first = r
            .constraints
            .iter()
            .position(|c: &Constraint<_>| eval(&c.a, &bad) * eval(&c.b, &bad) != eval(&c.c, &bad));
        match (r.check_witness(&bad), first) {
            (Err(Error::Unsatisfied { index, total }), Some(f)) => assert_eq!((index, total), (f, 518)),
            (Ok(()), None) => {} // a wire in no constraint
            (got, want) => panic!("wire {wire}: {got:?}, first failing {want:?}"),
        }
    }
    // The constant wire and the length are checked too.
    let mut bad = w.clone();
    bad[0] = ark_bn254::Fr::from(2u64);
    assert!(matches!(r.check_witness(&bad), Err(Error::WitnessOne(_))));
    assert!(matches!(r.check_witness(&w[1..]), Err(Error::WitnessLength { expected: 521, got: 520 })));
    // And the constraint system itself is unsatisfied by such a witness.
    let mut bad = w.clone();
    bad[1] += ark_bn254::Fr::one();
    let cs = ConstraintSystem::<ark_bn254::Fr>::new_ref();
    CircomCircuit { r1cs: &r, witness: Some(&bad) }.generate_constraints(cs.clone()).unwrap();
    assert!(!cs.is_satisfied().unwrap());
}

#[test]
fn damaged_files_are_errors_not_panics() {
    type F = ark_bn254::Fr;
    // Every prefix of the first bytes, and a spread of longer ones.
    for len in (0..300).chain((300..BN254_R1CS.len()).step_by(997)) {
        assert!(R1cs::<F>::from_bytes(&BN254_R1CS[..len]).is_err(), "prefix of {len} bytes");
    }
    for len in (0..200).chain((200..BN254_WTNS.len()).step_by(331)) {
        assert!(read_wtns::<F>(&BN254_WTNS[..len]).is_err(), "prefix of {len} bytes");
    }
    // Random byte changes: an error or a file that decodes, never a panic.
    let mut rng = ChaCha20Rng::seed_from_u64(10);
    for _ in 0..300 {
        let mut b = BN254_R1CS.to_vec();
        for _ in 0..rng.gen_range(1..4) {
            let i = rng.gen_range(0..b.len());
            b[i] = rng.gen();
        }
        let _ = R1cs::<F>::from_bytes(&b);
        let mut b = BN254_WTNS.to_vec();
        let i = rng.gen_range(0..b.len());
        b[i] = rng.gen();
        let _ = read_wtns::<F>(&b);
    }
    // Hostile counts are refused before anything is allocated for them.
    let r = R1cs::<F>::from_bytes(BN254_R1CS).unwrap();
    let mut huge = r.clone();
    huge.num_wires = u32::MAX;
    assert!(matches!(R1cs::<F>::from_bytes(&huge.to_bytes()), Err(Error::Unsupported { .. })));
    let mut lying = r.to_bytes();
    // The header's mConstraints (the last 4 bytes of the header section, which to_bytes writes
    // first: 12-byte preamble, 12-byte section head, then 4 + 32 + 16 + 8 bytes of fields).
    let at = 12 + 12 + 4 + 32 + 16 + 8;
    lying[at..at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
    let err = R1cs::<F>::from_bytes(&lying).unwrap_err();
    assert!(err.to_string().contains("cannot fit"), "{err}");
    // A coefficient at or above the prime.
    let mut big = r.to_bytes();
    // The constraints section follows the 64-byte header; its first coefficient follows the
    // first combination's term count and wire id.
    let body = 12 + 12 + 64 + 12;
    big[body + 8..body + 40].copy_from_slice(&[0xff; 32]);
    let err = R1cs::<F>::from_bytes(&big).unwrap_err();
    assert!(err.to_string().contains("above the prime"), "{err}");
    // PLONK custom gates are not R1CS.
    let mut custom = r.to_bytes();
    custom[8..12].copy_from_slice(&4u32.to_le_bytes());
    custom.extend(4u32.to_le_bytes());
    custom.extend(0u64.to_le_bytes());
    assert!(matches!(R1cs::<F>::from_bytes(&custom), Err(Error::Unsupported { .. })));
}

/// Issue 32 item 4: a ~110-byte file declaring 2^28 wires used to pass and make a setup
/// allocate tens of GB. `nWires` is now bounded by the wires the constraints use (plus
/// `MAX_UNUSED_WIRES`) and by `MAX_WIRES`, refused at decoding, naming the field. Nothing here
/// is allocated per declared wire: the files have no wire-to-label section.
#[test]
fn wire_counts_beyond_what_the_constraints_use_are_refused() {
    type F = ark_bn254::Fr;
    const MAX_UNUSED_WIRES: u64 = 1 << 16;
    let one = F::one();
    // w0 · w0 = w0, and nothing else.
    let tiny = |num_wires: u32, num_prv_in: u32| R1cs::<F> {
        num_wires,
        num_pub_out: 0,
        num_pub_in: 0,
        num_prv_in,
        num_labels: 0,
        constraints: vec![Constraint { a: vec![(0, one)], b: vec![(0, one)], c: vec![(0, one)] }],
        wire_labels: None,
    };
    let bytes = tiny(1 << 28, 0).to_bytes();
    assert!(bytes.len() < 256, "{} bytes", bytes.len());
    let err = R1cs::<F>::from_bytes(&bytes).unwrap_err().to_string();
    assert!(err.contains("nWires 268435456"), "{err}");
    // Below MAX_WIRES, but far more than the one constraint justifies, even when the header
    // declares them all private inputs.
    for (wires, prv) in [(1 << 20, 0), (1 << 20, (1 << 20) - 1), (MAX_UNUSED_WIRES as u32 + 2, 0)] {
        let err = R1cs::<F>::from_bytes(&tiny(wires, prv).to_bytes()).unwrap_err().to_string();
        assert!(err.contains(&format!("nWires {wires}")) && err.contains("in no constraint"), "{err}");
    }
    // Up to MAX_UNUSED_WIRES unused wires are accepted (unused inputs are legal circom).
    let r = R1cs::<F>::from_bytes(&tiny(MAX_UNUSED_WIRES as u32 + 1, 5).to_bytes()).unwrap();
    assert_eq!(r.num_wires as u64, MAX_UNUSED_WIRES + 1);
    // circom's own files pass: their wires all appear in constraints, or nearly.
    for file in [BN254_R1CS] {
        let r = R1cs::<F>::from_bytes(file).unwrap();
        let mut used: Vec<u32> = r.constraints.iter().flat_map(|c| c.a.iter().chain(&c.b).chain(&c.c).map(|(w, _)| *w)).collect();
        used.sort_unstable();
        used.dedup();
        assert!(r.num_wires as usize - used.len() <= 4, "{} wires, {} used", r.num_wires, used.len());
    }
}

/// The matrices over `z = (io, 1, aux)` hold the same constraints: a satisfying witness, moved
/// to that layout, satisfies every row, and a changed public signal breaks one.
#[test]
fn io_first_matrices_hold_the_same_constraints() {
    use ark_bls12_381::Fr;
    let (r, w) = load::<Fr>(BLS_R1CS, BLS_WTNS);
    let m = r.io_first_matrices();
    assert_eq!((m.num_constraints, m.num_io, m.num_aux), (518, 3, 517));
    let (io, aux) = r.split_witness(&w).unwrap();
    assert_eq!(io, r.public_signals(&w));
    let rows = |z: &[Fr]| -> Vec<bool> {
        let eval = |mat: &[(usize, usize, Fr)]| {
            let mut out = vec![Fr::from(0u64); m.num_constraints];
            for (row, col, v) in mat {
                out[*row] += z[*col] * v;
            }
            out
        };
        let (a, b, c) = (eval(&m.a), eval(&m.b), eval(&m.c));
        (0..m.num_constraints).map(|i| a[i] * b[i] == c[i]).collect()
    };
    let z: Vec<Fr> = io.iter().copied().chain([Fr::one()]).chain(aux.iter().copied()).collect();
    assert_eq!(z.len(), m.num_io + 1 + m.num_aux);
    assert!(rows(&z).iter().all(|ok| *ok));
    let mut moved = z.clone();
    moved[0] += Fr::one();
    assert!(rows(&moved).iter().any(|ok| !ok), "a changed output still satisfies every row");
    // A witness that does not satisfy the circuit is not split.
    let mut bad = w.clone();
    bad[1] += Fr::one();
    assert!(matches!(r.split_witness(&bad), Err(Error::Unsatisfied { .. })));
}
