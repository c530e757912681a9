//! Mirage on BLS12-381 with a small chain circuit: committed values `c_0..c_{k-1}`, then
//! `v_0 = c_0`, `v_i = v_{i-1}² + i + c_{i mod k}` for `i = 1..=steps`, and public output
//! `y = v_steps`.

use std::time::Instant;

use ark_bls12_381::{Bls12_381, Fr, G1Projective, G2Projective};
use ark_ec::{CurveGroup, PrimeGroup};
use ark_ff::{AdditiveGroup, Field};
use ark_relations::gr1cs::{
    ConstraintSynthesizer, ConstraintSystemRef, LinearCombination, SynthesisError, Variable,
};
use hekaton::mirage::{
    batch_verify, commit, commit_with_randomness, from_bytes, prove, setup, to_bytes, verify,
    BatchItem, Commitment, CommitmentRandomness, Proof, ProvingKey, VerifyingKey,
};
use hekaton::Error;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

type E = Bls12_381;

#[derive(Clone)]
struct Chain {
    committed: Vec<Fr>,
    steps: usize,
    output: Fr,
}

impl Chain {
    fn evaluate(committed: &[Fr], steps: usize) -> Fr {
        let k = committed.len();
        let mut v = committed[0];
        for i in 1..=steps {
            v = v.square() + Fr::from(i as u64) + committed[i % k];
        }
        v
    }

    fn honest(committed: &[Fr], steps: usize) -> Self {
        Chain {
            committed: committed.to_vec(),
            steps,
            output: Self::evaluate(committed, steps),
        }
    }
}

impl ConstraintSynthesizer<Fr> for Chain {
    fn generate_constraints(self, cs: ConstraintSystemRef<Fr>) -> Result<(), SynthesisError> {
        // The committed block comes first among the witness variables.
        let c: Vec<Variable> = self
            .committed
            .iter()
            .map(|&x| cs.new_witness_variable(|| Ok(x)))
            .collect::<Result<_, _>>()?;
        let y = cs.new_input_variable(|| Ok(self.output))?;
        let k = c.len();
        let mut v = c[0];
        let mut v_val = self.committed[0];
        for i in 1..=self.steps {
            let i_f = Fr::from(i as u64);
            v_val = v_val.square() + i_f + self.committed[i % k];
            let next_val = v_val;
            let next = cs.new_witness_variable(|| Ok(next_val))?;
            let cj = c[i % k];
            cs.enforce_r1cs_constraint(
                || LinearCombination::from(v),
                || LinearCombination::from(v),
                || {
                    LinearCombination::from_sum_coeff_vars(&[
                        (Fr::ONE, next),
                        (-i_f, Variable::One),
                        (-Fr::ONE, cj),
                    ])
                },
            )?;
            v = next;
        }
        cs.enforce_r1cs_constraint(
            || LinearCombination::from(v),
            || LinearCombination::from(Variable::One),
            || LinearCombination::from(y),
        )?;
        Ok(())
    }
}

const STEPS: usize = 6;

fn rng(seed: u64) -> ChaCha20Rng {
    ChaCha20Rng::seed_from_u64(seed)
}

fn values(base: u64) -> Vec<Fr> {
    (0..3).map(|i| Fr::from(base + 7 * i)).collect()
}

struct Fixture {
    pk: ProvingKey<E>,
    vk: VerifyingKey<E>,
    committed: Vec<Fr>,
    output: Fr,
    d: Commitment<E>,
    kappa: CommitmentRandomness<E>,
    proof: Proof<E>,
}

fn fixture(seed: u64) -> Fixture {
    let mut r = rng(seed);
    let committed = values(3);
    let circuit = Chain::honest(&committed, STEPS);
    let (pk, vk) = setup::<E, _, _>(circuit.clone(), committed.len(), &mut r).unwrap();
    let (d, kappa) = commit(&pk, &committed, &mut r).unwrap();
    let proof = prove(&pk, circuit.clone(), &d, &kappa, &mut r).unwrap();
    Fixture {
        pk,
        vk,
        committed,
        output: circuit.output,
        d,
        kappa,
        proof,
    }
}

#[test]
fn completeness() {
    let f = fixture(1);
    verify(&f.vk, &[f.output], &f.d, &f.proof).unwrap();
    assert_eq!(f.pk.vk, f.vk);
    assert_eq!(f.pk.num_committed(), 3);

    // A second proof for the same commitment and a fresh commitment to the same values both
    // verify, and differ from the first (the randomisers are fresh).
    let mut r = rng(2);
    let circuit = Chain::honest(&f.committed, STEPS);
    let proof2 = prove(&f.pk, circuit.clone(), &f.d, &f.kappa, &mut r).unwrap();
    verify(&f.vk, &[f.output], &f.d, &proof2).unwrap();
    assert_ne!(proof2, f.proof);
    let (d2, kappa2) = commit(&f.pk, &f.committed, &mut r).unwrap();
    assert_ne!(d2, f.d);
    let proof3 = prove(&f.pk, circuit, &d2, &kappa2, &mut r).unwrap();
    verify(&f.vk, &[f.output], &d2, &proof3).unwrap();
}

#[test]
fn completeness_without_committed_witness() {
    // m = 0: D is pure hiding, κ_D·[δ]₁, and Mirage degenerates to Groth16 plus that term.
    let mut r = rng(3);
    let circuit = Chain::honest(&values(5), STEPS);
    let (pk, vk) = setup::<E, _, _>(circuit.clone(), 0, &mut r).unwrap();
    let (d, kappa) = commit(&pk, &[], &mut r).unwrap();
    let proof = prove(&pk, circuit.clone(), &d, &kappa, &mut r).unwrap();
    verify(&vk, &[circuit.output], &d, &proof).unwrap();
    // The hiding term matters: dropping it breaks the equation.
    let bare =
        commit_with_randomness(&pk.ck, &[], &CommitmentRandomness { kappa: Fr::ZERO }).unwrap();
    assert!(matches!(
        verify(&vk, &[circuit.output], &bare, &proof),
        Err(Error::VerificationFailed)
    ));
}

#[test]
fn rejects_wrong_public_input() {
    let f = fixture(4);
    let wrong = f.output + Fr::ONE;
    assert!(matches!(
        verify(&f.vk, &[wrong], &f.d, &f.proof),
        Err(Error::VerificationFailed)
    ));
    assert!(matches!(
        verify(&f.vk, &[], &f.d, &f.proof),
        Err(Error::PublicInputLength {
            expected: 1,
            got: 0
        })
    ));
    assert!(matches!(
        verify(&f.vk, &[f.output, f.output], &f.d, &f.proof),
        Err(Error::PublicInputLength {
            expected: 1,
            got: 2
        })
    ));
}

#[test]
fn rejects_commitment_to_other_values() {
    let f = fixture(5);
    let mut r = rng(6);
    // Different committed values, fresh randomness.
    let (other, _) = commit(&f.pk, &values(100), &mut r).unwrap();
    assert!(matches!(
        verify(&f.vk, &[f.output], &other, &f.proof),
        Err(Error::VerificationFailed)
    ));
    // Different committed values, same κ_D.
    let other = commit_with_randomness(&f.pk.ck, &values(100), &f.kappa).unwrap();
    assert!(matches!(
        verify(&f.vk, &[f.output], &other, &f.proof),
        Err(Error::VerificationFailed)
    ));
    // Same values, other κ_D: D changes but C was built for the original κ_D.
    let rerand = commit_with_randomness(
        &f.pk.ck,
        &f.committed,
        &CommitmentRandomness {
            kappa: f.kappa.kappa + Fr::ONE,
        },
    )
    .unwrap();
    assert!(matches!(
        verify(&f.vk, &[f.output], &rerand, &f.proof),
        Err(Error::VerificationFailed)
    ));
}

#[test]
fn rejects_perturbed_proof_elements() {
    let f = fixture(7);
    let g1 = G1Projective::generator();
    let g2 = G2Projective::generator();
    let mut p = f.proof;
    p.a = (p.a + g1).into_affine();
    assert!(matches!(
        verify(&f.vk, &[f.output], &f.d, &p),
        Err(Error::VerificationFailed)
    ));
    let mut p = f.proof;
    p.b = (p.b + g2).into_affine();
    assert!(matches!(
        verify(&f.vk, &[f.output], &f.d, &p),
        Err(Error::VerificationFailed)
    ));
    let mut p = f.proof;
    p.c = (p.c + g1).into_affine();
    assert!(matches!(
        verify(&f.vk, &[f.output], &f.d, &p),
        Err(Error::VerificationFailed)
    ));
    // Swapping the roles of C and D (both in G1) fails too.
    let p = Proof {
        c: f.d.d,
        ..f.proof
    };
    assert!(matches!(
        verify(&f.vk, &[f.output], &Commitment { d: f.proof.c }, &p),
        Err(Error::VerificationFailed)
    ));
}

#[test]
fn rejects_other_circuits_verifying_key() {
    let f = fixture(8);
    let mut r = rng(9);
    // Same circuit, independent setup.
    let (_, vk_same_shape) =
        setup::<E, _, _>(Chain::honest(&f.committed, STEPS), 3, &mut r).unwrap();
    assert!(matches!(
        verify(&vk_same_shape, &[f.output], &f.d, &f.proof),
        Err(Error::VerificationFailed)
    ));
    // A longer chain.
    let (_, vk_longer) =
        setup::<E, _, _>(Chain::honest(&f.committed, STEPS + 1), 3, &mut r).unwrap();
    assert!(matches!(
        verify(&vk_longer, &[f.output], &f.d, &f.proof),
        Err(Error::VerificationFailed)
    ));
}

#[test]
fn every_bit_flip_in_proof_or_commitment_is_rejected() {
    let f = fixture(10);
    let bytes = to_bytes(&f.proof).unwrap();
    assert_eq!(bytes.len(), 48 + 96 + 48);
    assert_eq!(from_bytes::<Proof<E>>(&bytes).unwrap(), f.proof);
    let (mut parse_failures, mut verify_failures) = (0, 0);
    for bit in 0..bytes.len() * 8 {
        let mut m = bytes.clone();
        m[bit / 8] ^= 1 << (bit % 8);
        match from_bytes::<Proof<E>>(&m) {
            Err(Error::Serialization(_)) => parse_failures += 1,
            Err(e) => panic!("unexpected error {e}"),
            Ok(p) => {
                assert!(
                    matches!(
                        verify(&f.vk, &[f.output], &f.d, &p),
                        Err(Error::VerificationFailed)
                    ),
                    "flipping bit {bit} gave a proof that verifies"
                );
                verify_failures += 1;
            }
        }
    }
    assert_eq!(parse_failures + verify_failures, bytes.len() * 8);
    // Most flips leave the curve; some (e.g. the sign flag) give another valid point.
    assert!(
        parse_failures > 0 && verify_failures > 0,
        "{parse_failures} / {verify_failures}"
    );

    let d_bytes = to_bytes(&f.d).unwrap();
    for bit in 0..d_bytes.len() * 8 {
        let mut m = d_bytes.clone();
        m[bit / 8] ^= 1 << (bit % 8);
        if let Ok(d) = from_bytes::<Commitment<E>>(&m) {
            assert!(
                verify(&f.vk, &[f.output], &d, &f.proof).is_err(),
                "flipping D bit {bit} still verifies"
            );
        }
    }
}

#[test]
fn serialization_round_trips_and_rejects_bad_bytes() {
    let f = fixture(11);
    let pk: ProvingKey<E> = from_bytes(&to_bytes(&f.pk).unwrap()).unwrap();
    assert_eq!(pk, f.pk);
    let vk: VerifyingKey<E> = from_bytes(&to_bytes(&f.vk).unwrap()).unwrap();
    assert_eq!(vk, f.vk);
    let d: Commitment<E> = from_bytes(&to_bytes(&f.d).unwrap()).unwrap();
    let kappa: CommitmentRandomness<E> = from_bytes(&to_bytes(&f.kappa).unwrap()).unwrap();
    assert_eq!((d, kappa), (f.d, f.kappa));
    // Deserialized keys still prove and verify.
    let mut r = rng(12);
    let proof = prove(&pk, Chain::honest(&f.committed, STEPS), &d, &kappa, &mut r).unwrap();
    verify(&vk, &[f.output], &d, &proof).unwrap();

    // Trailing and truncated bytes are errors, not panics.
    let mut long = to_bytes(&f.proof).unwrap();
    long.push(0);
    assert!(matches!(
        from_bytes::<Proof<E>>(&long),
        Err(Error::TrailingBytes(1))
    ));
    let vk_bytes = to_bytes(&f.vk).unwrap();
    for cut in 0..vk_bytes.len() {
        assert!(from_bytes::<VerifyingKey<E>>(&vk_bytes[..cut]).is_err());
    }
    // A corrupted length prefix of the IC query (first 8 bytes after the five fixed points).
    let prefix = 48 + 4 * 96;
    let mut huge = vk_bytes.clone();
    huge[prefix + 7] = 0xff;
    assert!(from_bytes::<VerifyingKey<E>>(&huge).is_err());
    // An inconsistent proving key is refused when decoded, and by the prover when built in
    // memory: never half-used.
    let mut short = f.pk.clone();
    short.l_query.pop();
    assert!(matches!(
        from_bytes::<ProvingKey<E>>(&to_bytes(&short).unwrap()),
        Err(Error::MalformedKey(_))
    ));
    assert!(matches!(
        prove(
            &short,
            Chain::honest(&f.committed, STEPS),
            &f.d,
            &f.kappa,
            &mut r
        ),
        Err(Error::MalformedKey(_))
    ));
    // Non-canonical scalar for κ_D.
    assert!(from_bytes::<CommitmentRandomness<E>>(&[0xff; 32]).is_err());
}

#[test]
fn prover_rejects_mismatched_commitment() {
    let f = fixture(13);
    let mut r = rng(14);
    let circuit = Chain::honest(&f.committed, STEPS);
    // D to other values.
    let (other, other_kappa) = commit(&f.pk, &values(50), &mut r).unwrap();
    assert!(matches!(
        prove(&f.pk, circuit.clone(), &other, &other_kappa, &mut r),
        Err(Error::CommitmentMismatch)
    ));
    // Right D, wrong κ_D.
    let wrong_kappa = CommitmentRandomness {
        kappa: f.kappa.kappa + Fr::ONE,
    };
    assert!(matches!(
        prove(&f.pk, circuit.clone(), &f.d, &wrong_kappa, &mut r),
        Err(Error::CommitmentMismatch)
    ));
    // Committed values that differ from the circuit's in one position only.
    let mut tweaked = f.committed.clone();
    tweaked[2] += Fr::ONE;
    let (d, kappa) = commit(&f.pk, &tweaked, &mut r).unwrap();
    assert!(matches!(
        prove(&f.pk, circuit, &d, &kappa, &mut r),
        Err(Error::CommitmentMismatch)
    ));
    // Wrong number of committed values.
    assert!(matches!(
        commit(&f.pk, &f.committed[..2], &mut r),
        Err(Error::CommittedLength {
            expected: 3,
            got: 2
        })
    ));
}

#[test]
fn prover_rejects_unsatisfied_or_misshaped_circuit() {
    let f = fixture(15);
    let mut r = rng(16);
    let mut bad = Chain::honest(&f.committed, STEPS);
    bad.output += Fr::ONE;
    assert!(matches!(
        prove(&f.pk, bad, &f.d, &f.kappa, &mut r),
        Err(Error::Unsatisfied(_))
    ));
    let longer = Chain::honest(&f.committed, STEPS + 1);
    assert!(matches!(
        prove(&f.pk, longer, &f.d, &f.kappa, &mut r),
        Err(Error::ShapeMismatch { .. })
    ));
}

#[test]
fn setup_rejects_bad_committed_block() {
    let mut r = rng(17);
    let circuit = Chain::honest(&values(1), STEPS);
    // 3 committed + STEPS chain values = 9 witness variables.
    assert!(matches!(
        setup::<E, _, _>(circuit.clone(), 10, &mut r),
        Err(Error::TooManyCommitted {
            requested: 10,
            available: 9
        })
    ));
    // With one step only c_0 and c_1 appear in constraints; c_2 would not be bound by D.
    let short = Chain::honest(&values(1), 1);
    assert!(matches!(
        setup::<E, _, _>(short, 3, &mut r),
        Err(Error::UnconstrainedCommittedVariable(2))
    ));
    // Committing the chain values after the committed block also works (m = 5).
    let (pk, vk) = setup::<E, _, _>(circuit.clone(), 5, &mut r).unwrap();
    let mut block = values(1);
    let mut v = block[0];
    for i in 1..=2 {
        v = v.square() + Fr::from(i as u64) + block[i % 3];
        block.push(v);
    }
    let (d, kappa) = commit(&pk, &block, &mut r).unwrap();
    let proof = prove(&pk, circuit.clone(), &d, &kappa, &mut r).unwrap();
    verify(&vk, &[circuit.output], &d, &proof).unwrap();
}

/// A subcircuit whose "hardcoded" tag is a public input (paper §6.3): committed `c`, public
/// `(y, tag)`, constraints `c·c = u` and `u·tag = y`.
#[derive(Clone)]
struct Tagged {
    c: Fr,
    tag: Fr,
}

impl Tagged {
    fn output(&self) -> Fr {
        self.c.square() * self.tag
    }
}

impl ConstraintSynthesizer<Fr> for Tagged {
    fn generate_constraints(self, cs: ConstraintSystemRef<Fr>) -> Result<(), SynthesisError> {
        let c = cs.new_witness_variable(|| Ok(self.c))?;
        let y = cs.new_input_variable(|| Ok(self.output()))?;
        let tag = cs.new_input_variable(|| Ok(self.tag))?;
        let u = cs.new_witness_variable(|| Ok(self.c.square()))?;
        cs.enforce_r1cs_constraint(|| c.into(), || c.into(), || u.into())?;
        cs.enforce_r1cs_constraint(|| u.into(), || tag.into(), || y.into())?;
        Ok(())
    }
}

#[test]
fn subcircuits_share_one_setup_through_fixed_inputs() {
    let mut r = rng(26);
    let (pk, vk) = setup::<E, _, _>(
        Tagged {
            c: Fr::ONE,
            tag: Fr::ONE,
        },
        1,
        &mut r,
    )
    .unwrap();
    assert_eq!(vk.num_public_inputs(), 2);
    let tags: Vec<Fr> = (1..=3u64).map(Fr::from).collect();
    let vks: Vec<VerifyingKey<E>> = tags
        .iter()
        .map(|t| vk.fix_trailing_inputs(&[*t]).unwrap())
        .collect();
    let mut st = Vec::new();
    for (i, &tag) in tags.iter().enumerate() {
        let circuit = Tagged {
            c: Fr::from(10 + i as u64),
            tag,
        };
        let (d, kappa) = commit(&pk, &[circuit.c], &mut r).unwrap();
        let proof = prove(&pk, circuit.clone(), &d, &kappa, &mut r).unwrap();
        // Full key with both inputs, and the subcircuit's own key with y only.
        verify(&vk, &[circuit.output(), tag], &d, &proof).unwrap();
        verify(&vks[i], &[circuit.output()], &d, &proof).unwrap();
        // Under another subcircuit's key the same proof fails.
        let j = (i + 1) % tags.len();
        assert!(matches!(
            verify(&vks[j], &[circuit.output()], &d, &proof),
            Err(Error::VerificationFailed)
        ));
        st.push((vec![circuit.output()], d, proof));
    }
    // Folding nothing is the identity; folding too much is an error.
    assert_eq!(vk.fix_trailing_inputs(&[]).unwrap(), vk);
    assert!(matches!(
        vk.fix_trailing_inputs(&[Fr::ONE; 3]),
        Err(Error::PublicInputLength { .. })
    ));
    // Proofs of one subcircuit batch under its key; a proof of another subcircuit spoils it.
    batch_verify(&vks[0], &items(&st[..1]), &mut r).unwrap();
    assert!(matches!(
        batch_verify(&vks[0], &items(&st[..2]), &mut r),
        Err(Error::BatchVerificationFailed)
    ));
}

/// `n` valid statements `(inputs, D, proof)` under one key.
fn statements(pk: &ProvingKey<E>, n: usize, seed: u64) -> Vec<(Vec<Fr>, Commitment<E>, Proof<E>)> {
    let mut r = rng(seed);
    (0..n)
        .map(|i| {
            let committed = values(20 + 3 * i as u64);
            let circuit = Chain::honest(&committed, STEPS);
            let (d, kappa) = commit(pk, &committed, &mut r).unwrap();
            let proof = prove(pk, circuit.clone(), &d, &kappa, &mut r).unwrap();
            (vec![circuit.output], d, proof)
        })
        .collect()
}

fn items(st: &[(Vec<Fr>, Commitment<E>, Proof<E>)]) -> Vec<BatchItem<'_, E>> {
    st.iter()
        .map(|(x, d, p)| BatchItem {
            public_inputs: x,
            commitment: d,
            proof: p,
        })
        .collect()
}

#[test]
fn batch_verification() {
    let f = fixture(18);
    let mut r = rng(19);
    let st = statements(&f.pk, 4, 20);
    for (x, d, p) in &st {
        verify(&f.vk, x, d, p).unwrap();
    }
    batch_verify(&f.vk, &items(&st), &mut r).unwrap();
    batch_verify(&f.vk, &items(&st[..1]), &mut r).unwrap();
    assert!(matches!(
        batch_verify::<E, _>(&f.vk, &[], &mut r),
        Err(Error::EmptyBatch)
    ));

    // One wrong public input.
    let mut bad = st.clone();
    bad[2].0[0] += Fr::ONE;
    assert!(matches!(
        batch_verify(&f.vk, &items(&bad), &mut r),
        Err(Error::BatchVerificationFailed)
    ));
    // One perturbed C.
    let mut bad = st.clone();
    bad[1].2.c = (bad[1].2.c + G1Projective::generator()).into_affine();
    assert!(matches!(
        batch_verify(&f.vk, &items(&bad), &mut r),
        Err(Error::BatchVerificationFailed)
    ));
    // Two commitments swapped: each equation fails though the multiset of D's is unchanged.
    let mut bad = st.clone();
    let (d0, d3) = (bad[0].1, bad[3].1);
    bad[0].1 = d3;
    bad[3].1 = d0;
    assert!(matches!(
        batch_verify(&f.vk, &items(&bad), &mut r),
        Err(Error::BatchVerificationFailed)
    ));
    // Errors that cancel in an unweighted sum (C_0 + g, C_1 − g) are caught by the weights.
    let mut bad = st.clone();
    bad[0].2.c = (bad[0].2.c + G1Projective::generator()).into_affine();
    bad[1].2.c = (bad[1].2.c - G1Projective::generator()).into_affine();
    assert!(matches!(
        batch_verify(&f.vk, &items(&bad), &mut r),
        Err(Error::BatchVerificationFailed)
    ));
    // Wrong input length is reported as such.
    let mut bad = st.clone();
    bad[3].0.push(Fr::ONE);
    assert!(matches!(
        batch_verify(&f.vk, &items(&bad), &mut r),
        Err(Error::PublicInputLength { .. })
    ));
    // A valid proof under another key in the batch.
    let other = fixture(21);
    let mut mixed = items(&st);
    let out = [other.output];
    mixed.push(BatchItem {
        public_inputs: &out,
        commitment: &other.d,
        proof: &other.proof,
    });
    assert!(matches!(
        batch_verify(&f.vk, &mixed, &mut r),
        Err(Error::BatchVerificationFailed)
    ));
}

/// An RNG that returns one byte forever: what a careless or adversarial caller may pass.
struct ConstRng(u8);

impl rand::RngCore for ConstRng {
    fn next_u32(&mut self) -> u32 {
        u32::from_le_bytes([self.0; 4])
    }
    fn next_u64(&mut self) -> u64 {
        u64::from_le_bytes([self.0; 8])
    }
    fn fill_bytes(&mut self, dest: &mut [u8]) {
        dest.fill(self.0)
    }
    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), rand::Error> {
        dest.fill(self.0);
        Ok(())
    }
}

#[test]
fn batch_weights_are_bound_to_the_batch_even_with_a_constant_rng() {
    // With weights taken from the caller's RNG alone, a constant RNG gives every item the same
    // weight r, and errors that cancel in the sum pass: C_0 + g with C_1 − g, or the public
    // inputs of two proofs shifted by +Δ and −Δ (review F6). The weights must come from a hash
    // of the key and every (x_i, π_i, D_i), so neither cancels.
    let f = fixture(25);
    let st = statements(&f.pk, 3, 26);
    for byte in [0x01, 0x00, 0xff] {
        batch_verify(&f.vk, &items(&st), &mut ConstRng(byte)).unwrap();

        let mut bad = st.clone();
        bad[0].2.c = (bad[0].2.c + G1Projective::generator()).into_affine();
        bad[1].2.c = (bad[1].2.c - G1Projective::generator()).into_affine();
        assert!(matches!(
            batch_verify(&f.vk, &items(&bad), &mut ConstRng(byte)),
            Err(Error::BatchVerificationFailed)
        ));

        let delta = Fr::from(12345u64);
        let mut bad = st.clone();
        bad[1].0[0] += delta;
        bad[2].0[0] -= delta;
        assert!(matches!(
            batch_verify(&f.vk, &items(&bad), &mut ConstRng(byte)),
            Err(Error::BatchVerificationFailed)
        ));

        // The same cancelling pair in D: D_0 + g, D_2 − g.
        let mut bad = st.clone();
        bad[0].1.d = (bad[0].1.d + G1Projective::generator()).into_affine();
        bad[2].1.d = (bad[2].1.d - G1Projective::generator()).into_affine();
        assert!(matches!(
            batch_verify(&f.vk, &items(&bad), &mut ConstRng(byte)),
            Err(Error::BatchVerificationFailed)
        ));
    }
}

/// Timing of separate versus batched verification; run with
/// `cargo test -p hekaton --test mirage -- --ignored --nocapture batch_bench`.
#[test]
#[ignore]
fn batch_bench() {
    let f = fixture(22);
    let n = 32;
    let st = statements(&f.pk, n, 23);
    let its = items(&st);
    let mut r = rng(24);
    let reps = 5;
    let t = Instant::now();
    for _ in 0..reps {
        for it in &its {
            verify(&f.vk, it.public_inputs, it.commitment, it.proof).unwrap();
        }
    }
    let separate = t.elapsed() / reps;
    let t = Instant::now();
    for _ in 0..reps {
        batch_verify(&f.vk, &its, &mut r).unwrap();
    }
    let batched = t.elapsed() / reps;
    println!(
        "{n} proofs: separate {separate:?}, batched {batched:?} ({:.1}x)",
        separate.as_secs_f64() / batched.as_secs_f64()
    );
    assert!(batched < separate);
}
