//! First pieces of plonky2's FRI verifier in R1CS (Goldilocks emulated, see [`crate::goldilocks`]).
//!
//! * [`subgroup_x_var`]: the query point `x = g·ω^{rev(i)}` of query index `i` in the LDE domain
//!   of size `n = 2^{log_n}` (`g` the multiplicative generator, `ω` a primitive `n`-th root of
//!   unity, `rev` the `log_n`-bit reversal), as plonky2's `fri_verifier_query_round` computes it.
//!   Each index bit `b` selects a constant factor `1 + b·(c − 1)` (linear, free); products of
//!   three factors are reduced once.
//! * [`eval_poly_at_base_var`]: `Σ c_k·x^k` for extension coefficients and a base-field `x` (the
//!   final-polynomial check): powers of `x` reduced one by one, the sum accumulated unreduced.
//! * [`compute_evaluation_var`]: one FRI folding step, plonky2's `compute_evaluation`: the
//!   evaluations on the coset `c·⟨g⟩` (`g` of order `n = 2^a`) interpolated at `β`, with the
//!   coset Lagrange formula `P(β) = (β^n − c^n)/(n·c^n) · Σ_i y_i·x_i/(β − x_i)`, `x_i = c·g^i`
//!   (each quotient a witness checked by one product; `β^n` computed once per layer).
//! * [`verify_fri_var`]: plonky2's `verify_fri_proof` for a plonky2 proof (no zero knowledge,
//!   no lookups): proof of work, and per query the initial Merkle proofs of the four oracles,
//!   the combination `Σ_b α^{…}·(Σ_k α^k f_k(x) − Σ_k α^k f_k(z_b))/(x − z_b)` (the powers of `α`
//!   and the reduced openings computed once per proof; per query only base × extension products,
//!   accumulated unreduced), the folding steps with their Merkle proofs, and the final
//!   polynomial.

use ark_bn254::Fr;
use ark_r1cs_std::alloc::AllocVar;
use ark_r1cs_std::boolean::Boolean;
use ark_r1cs_std::eq::EqGadget;
use ark_r1cs_std::fields::fp::FpVar;
use ark_relations::gr1cs::{ConstraintSystemRef, SynthesisError};
use num_bigint::BigUint;
use plonky2::field::goldilocks_field::GoldilocksField;
use plonky2::field::types::{Field, PrimeField64};
use plonky2::fri::proof::FriProof;
use plonky2::hash::merkle_proofs::MerkleProof;
use plonky2::plonk::circuit_data::CommonCircuitData;

use crate::challenger_gadget::{ChallengesVar, TranscriptVar};
use crate::goldilocks::{GLExt, GlExtVar, GlVar};
use crate::hasher::PoseidonBn254Hash;
use crate::merkle_gadget::verify_merkle_proof_to_cap_var;

type GL = GoldilocksField;

/// `1 + b·(c − 1)` for a nonzero constant `c`: `c` if `b`, else 1; linear in `b`.
fn select_const(b: &Boolean<Fr>, c: GL) -> GlVar {
    let c = c.to_canonical_u64();
    assert!(c != 0);
    let value = FpVar::from(b.clone()) * Fr::from(c - 1) + Fr::from(1u64);
    GlVar::from_fpvar_unchecked(value, BigUint::from(c))
}

/// `g·ω^{rev(i)}` for the query index `i` given by its `log_n` little-endian bits.
pub fn subgroup_x_var(index_bits: &[Boolean<Fr>], log_n: usize) -> Result<GlVar, SynthesisError> {
    assert_eq!(index_bits.len(), log_n);
    let omega = GL::primitive_root_of_unity(log_n);
    // Bit i of the index is bit (log_n − 1 − i) of rev(i): it selects ω^{2^{log_n − 1 − i}}.
    let mut acc = GlVar::constant(GL::MULTIPLICATIVE_GROUP_GENERATOR);
    for (k, chunk) in index_bits.chunks(3).enumerate() {
        for (j, b) in chunk.iter().enumerate() {
            let i = 3 * k + j;
            acc = acc.mul(&select_const(b, omega.exp_power_of_2(log_n - 1 - i)))?;
        }
        acc = acc.reduce()?;
    }
    Ok(acc)
}

/// `Σ_k c_k·x^k` for extension coefficients `c_k` and a base-field point `x`.
pub fn eval_poly_at_base_var(coeffs: &[GlExtVar], x: &GlVar) -> Result<GlExtVar, SynthesisError> {
    let mut acc = GlExtVar::zero();
    let mut power = GlVar::constant(GL::ONE);
    for (k, c) in coeffs.iter().enumerate() {
        if k > 0 {
            power = power.mul(x)?.reduce()?;
        }
        acc = acc.add(&c.scalar_mul(&power)?)?;
    }
    acc.reduce()
}

/// `items` in bit-reversed order (`a`-bit indices).
fn reverse_index_bits<T: Clone>(items: &[T], a: usize) -> Vec<T> {
    (0..items.len()).map(|i| items[reverse_bits(i, a)].clone()).collect()
}

fn reverse_bits(i: usize, bits: usize) -> usize {
    (0..bits).fold(0, |acc, b| acc | (((i >> b) & 1) << (bits - 1 - b)))
}

/// `x^(2^k)` by `k` squarings, each reduced.
fn exp_power_of_2_var(x: &GlVar, k: usize) -> Result<GlVar, SynthesisError> {
    let mut y = x.clone();
    for _ in 0..k {
        y = y.mul(&y)?.reduce()?;
    }
    Ok(y)
}

/// `β^(2^k)` by `k` squarings in `F_{p^2}`, each reduced.
pub fn ext_exp_power_of_2_var(beta: &GlExtVar, k: usize) -> Result<GlExtVar, SynthesisError> {
    let mut y = beta.clone();
    for _ in 0..k {
        y = y.mul(&y)?.reduce()?;
    }
    Ok(y)
}

/// plonky2's `compute_evaluation`: from `evals = {P(x·g^i)}` (in plonky2's order) on the coset of
/// `x` (whose index within the coset has the little-endian `bits`), the folded value at `β`.
/// `beta_pow` is `β^(2^a)`.
pub fn compute_evaluation_var(
    x: &GlVar,
    bits: &[Boolean<Fr>],
    evals: &[GlExtVar],
    beta: &GlExtVar,
    beta_pow: &GlExtVar,
) -> Result<GlExtVar, SynthesisError> {
    let a = bits.len();
    let n = 1usize << a;
    assert_eq!(evals.len(), n);
    let g = GL::primitive_root_of_unity(a);
    let g_inv = g.inverse();
    // c = x·g^{−rev(j)}; bit i of j is bit a−1−i of rev(j).
    let mut c = x.clone();
    for (i, b) in bits.iter().enumerate() {
        c = c.mul(&select_const(b, g_inv.exp_power_of_2(a - 1 - i)))?;
        if c.bound.bits() > 190 {
            c = c.reduce()?;
        }
    }
    let c = c.reduce()?;
    let ys = reverse_index_bits(evals, a);
    let mut sum = GlExtVar::zero();
    let mut gi = GL::ONE;
    for y in &ys {
        let xi = c.mul_const(gi)?;
        let num = y.scalar_mul(&xi)?;
        let den = beta.sub_base(&xi)?;
        sum = sum.add(&num.div(&den)?)?;
        gi *= g;
    }
    let c_n = exp_power_of_2_var(&c, a)?;
    let pre_num = beta_pow.sub_base(&c_n)?.reduce()?;
    let pre_den = c_n.mul_const(GL::from_canonical_usize(n))?;
    let inv = GlVar::constant(GL::ONE).div(&pre_den)?;
    let pre = pre_num.scalar_mul(&inv)?.reduce()?;
    pre.mul(&sum.reduce()?)?.reduce()
}

/// One FRI query round of a proof, as circuit variables.
#[derive(Clone, Debug)]
pub struct FriQueryRoundVar {
    /// Per oracle: the evaluations at the query point (the Merkle leaf) and the Merkle siblings.
    pub initial: Vec<(Vec<GlVar>, Vec<FpVar<Fr>>)>,
    /// Per folding step: the coset's evaluations and the Merkle siblings.
    pub steps: Vec<(Vec<GlExtVar>, Vec<FpVar<Fr>>)>,
}

/// The query rounds of a FRI proof, as circuit variables (caps, final polynomial and proof of
/// work are in [`crate::challenger_gadget::TranscriptVar`]).
#[derive(Clone, Debug)]
pub struct FriQueriesVar {
    /// One per query.
    pub rounds: Vec<FriQueryRoundVar>,
}

impl FriQueriesVar {
    /// Allocates the query rounds of `proof` as witnesses (values range-checked canonical).
    pub fn new_witness(
        cs: ConstraintSystemRef<Fr>,
        proof: &FriProof<GL, PoseidonBn254Hash, 2>,
    ) -> Result<Self, SynthesisError> {
        let hashes = |p: &MerkleProof<GL, PoseidonBn254Hash>| {
            p.siblings.iter().map(|h| FpVar::new_witness(cs.clone(), || Ok(h.0))).collect::<Result<Vec<_>, _>>()
        };
        let rounds = proof
            .query_round_proofs
            .iter()
            .map(|r| {
                let initial = r
                    .initial_trees_proof
                    .evals_proofs
                    .iter()
                    .map(|(evals, mp)| {
                        let e = evals.iter().map(|x| GlVar::new_witness(cs.clone(), Some(*x))).collect::<Result<Vec<_>, _>>()?;
                        Ok((e, hashes(mp)?))
                    })
                    .collect::<Result<Vec<_>, SynthesisError>>()?;
                let steps = r
                    .steps
                    .iter()
                    .map(|st| {
                        let e = st.evals.iter().map(|x| GlExtVar::new_witness(cs.clone(), Some(*x))).collect::<Result<Vec<_>, _>>()?;
                        Ok((e, hashes(&st.merkle_proof)?))
                    })
                    .collect::<Result<Vec<_>, SynthesisError>>()?;
                Ok(FriQueryRoundVar { initial, steps })
            })
            .collect::<Result<_, SynthesisError>>()?;
        Ok(Self { rounds })
    }
}

/// plonky2's `verify_fri_proof` for a proof of the circuit with `common` data, given the four
/// initial caps (constants/sigmas, wires, Z and partial products, quotient), the transcript and
/// the challenges replayed from it.
pub fn verify_fri_var(
    common: &CommonCircuitData<GL, 2>,
    initial_caps: &[Vec<FpVar<Fr>>; 4],
    t: &TranscriptVar,
    ch: &ChallengesVar,
    queries: &FriQueriesVar,
) -> Result<(), SynthesisError> {
    let params = &common.fri_params;
    assert!(!params.hiding, "zero-knowledge proofs are not supported");
    assert_eq!(common.num_lookup_polys, 0, "lookups are not supported");
    let cfg = &params.config;

    // Proof of work: the top `proof_of_work_bits` bits of the canonical response are zero.
    for b in &ch.fri_pow_response_bits[64 - cfg.proof_of_work_bits as usize..] {
        b.enforce_equal(&Boolean::FALSE)?;
    }

    // Once per proof: powers of α, the reduced openings, the batch points, β^(arity).
    let n_next = common.config.num_challenges;
    let n_zeta = t.openings.len() - n_next;
    let alpha = &ch.fri_alpha;
    let mut alpha_pows = vec![GlExtVar::constant(GLExt::ONE)];
    for _ in 0..n_zeta.max(n_next) {
        let last = alpha_pows.last().expect("nonempty");
        alpha_pows.push(last.mul(alpha)?.reduce()?);
    }
    let reduce_openings = |vals: &[GlExtVar]| -> Result<GlExtVar, SynthesisError> {
        GlExtVar::inner_product(&alpha_pows[..vals.len()], vals)?.reduce()
    };
    let reduced_openings = [reduce_openings(&t.openings[..n_zeta])?, reduce_openings(&t.openings[n_zeta..])?];
    let zeta = &ch.plonk_zeta;
    let zeta_next = zeta.mul_base_const(GL::primitive_root_of_unity(common.degree_bits()))?.reduce()?;
    let points = [zeta.clone(), zeta_next];
    let beta_pows: Vec<GlExtVar> = ch
        .fri_betas
        .iter()
        .zip(&params.reduction_arity_bits)
        .map(|(b, &a)| ext_exp_power_of_2_var(b, a))
        .collect::<Result<_, _>>()?;
    let lde_bits = common.degree_bits() + cfg.rate_bits;

    assert_eq!(queries.rounds.len(), ch.fri_query_index_bits.len());
    for (round, index_bits) in queries.rounds.iter().zip(&ch.fri_query_index_bits) {
        assert_eq!(index_bits.len(), lde_bits);
        // Initial trees.
        for ((evals, siblings), cap) in round.initial.iter().zip(initial_caps) {
            verify_merkle_proof_to_cap_var(evals, index_bits, cap, siblings)?;
        }
        let mut x = subgroup_x_var(index_bits, lde_bits)?;

        // Combine: zeta batch = every polynomial of every oracle; next batch = the Z's.
        let all: Vec<&GlVar> = round.initial.iter().flat_map(|(e, _)| e.iter()).collect();
        assert_eq!(all.len(), n_zeta);
        let zs: Vec<&GlVar> = round.initial[2].0[..n_next].iter().collect();
        let mut quotients = Vec::with_capacity(2);
        for (b, evals) in [all, zs].iter().enumerate() {
            let mut acc = GlExtVar::zero();
            for (k, e) in evals.iter().enumerate() {
                acc = acc.add(&alpha_pows[k].scalar_mul(e)?)?;
            }
            let num = acc.sub(&reduced_openings[b])?.reduce()?;
            let den = points[b].sub_base(&x)?.reduce()?;
            // (x − z) = −(z − x): divide by (z − x) and negate.
            quotients.push(GlExtVar::zero().sub(&num.div(&den)?)?);
        }
        let mut old_eval = alpha_pows[n_next].mul(&quotients[0])?.add(&quotients[1])?.reduce()?;

        // Folding steps.
        let mut bits: &[Boolean<Fr>] = index_bits;
        for (i, &a) in params.reduction_arity_bits.iter().enumerate() {
            let (evals, siblings) = &round.steps[i];
            let (within, coset) = bits.split_at(a);
            GlExtVar::select_by_bits(evals, within)?.enforce_equal(&old_eval)?;
            old_eval = compute_evaluation_var(&x, within, evals, &ch.fri_betas[i], &beta_pows[i])?;
            let leaf: Vec<GlVar> = evals.iter().flat_map(|e| [e.c0.clone(), e.c1.clone()]).collect();
            verify_merkle_proof_to_cap_var(&leaf, coset, &t.commit_phase_caps[i], siblings)?;
            x = exp_power_of_2_var(&x, a)?;
            bits = coset;
        }

        // Final polynomial.
        eval_poly_at_base_var(&t.final_poly, &x)?.enforce_equal(&old_eval)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::goldilocks::GLExt;
    use ark_r1cs_std::alloc::AllocVar;
    use ark_relations::gr1cs::ConstraintSystem;
    use plonky2::field::polynomial::PolynomialCoeffs;
    use plonky2::field::types::Sample;

    fn reverse(i: usize, bits: usize) -> usize {
        (0..bits).fold(0, |acc, b| acc | (((i >> b) & 1) << (bits - 1 - b)))
    }

    #[test]
    fn subgroup_x_matches_native() {
        let log_n = 15;
        for index in [0usize, 1, 12345, (1 << log_n) - 1] {
            let cs = ConstraintSystem::<Fr>::new_ref();
            let bits: Vec<Boolean<Fr>> =
                (0..log_n).map(|i| Boolean::new_witness(cs.clone(), || Ok((index >> i) & 1 == 1)).unwrap()).collect();
            let before = cs.num_constraints();
            let x = subgroup_x_var(&bits, log_n).unwrap();
            let cost = cs.num_constraints() - before;
            let expect = GL::MULTIPLICATIVE_GROUP_GENERATOR
                * GL::primitive_root_of_unity(log_n).exp_u64(reverse(index, log_n) as u64);
            assert_eq!(x.value().unwrap(), expect);
            assert!(cs.is_satisfied().unwrap());
            if index == 12345 {
                println!("subgroup x from {log_n} index bits: {cost} constraints");
            }
        }
    }

    #[test]
    fn final_poly_eval_matches_native() {
        let cs = ConstraintSystem::<Fr>::new_ref();
        let coeffs: Vec<GLExt> = (0..16).map(|_| GLExt::rand()).collect();
        let x = GL::rand();
        let cv: Vec<GlExtVar> = coeffs.iter().map(|c| GlExtVar::new_witness(cs.clone(), Some(*c)).unwrap()).collect();
        let xv = GlVar::new_witness(cs.clone(), Some(x)).unwrap();
        let before = cs.num_constraints();
        let y = eval_poly_at_base_var(&cv, &xv).unwrap();
        println!("final polynomial of 16 coefficients at a base point: {} constraints", cs.num_constraints() - before);
        assert_eq!(y.value().unwrap(), PolynomialCoeffs::new(coeffs).eval(x.into()));
        assert!(cs.is_satisfied().unwrap());
    }

    type C = crate::hasher::PoseidonBn254GoldilocksConfig;

    /// A small proof with folding layers: 3 queries, rate 1/8, arity 4, 2 PoW bits (a toy
    /// configuration with 8 bits of security, to keep the test fast).
    fn small_proof() -> (
        plonky2::plonk::circuit_data::CircuitData<GL, C, 2>,
        plonky2::plonk::proof::ProofWithPublicInputs<GL, C, 2>,
    ) {
        use plonky2::fri::reduction_strategies::FriReductionStrategy;
        use plonky2::iop::witness::{PartialWitness, WitnessWrite};
        use plonky2::plonk::circuit_builder::CircuitBuilder;
        use plonky2::plonk::circuit_data::CircuitConfig;
        let mut config = CircuitConfig::standard_recursion_config();
        config.fri_config.rate_bits = 3;
        config.fri_config.cap_height = 1;
        config.fri_config.proof_of_work_bits = 2;
        config.fri_config.num_query_rounds = 3;
        config.fri_config.reduction_strategy = FriReductionStrategy::ConstantArityBits(2, 2);
        config.security_bits = 8;
        let mut b = CircuitBuilder::<GL, 2>::new(config);
        let x = b.add_virtual_target();
        b.register_public_input(x);
        let mut y = x;
        for _ in 0..600 {
            y = b.mul_add(y, y, x);
        }
        b.register_public_input(y);
        let data = b.build::<C>();
        let mut pw = PartialWitness::new();
        pw.set_target(x, GL::from_canonical_u64(3)).unwrap();
        let proof = data.prove(pw).unwrap();
        data.verify(proof.clone()).unwrap();
        (data, proof)
    }

    /// Runs the transcript replay and the FRI check on `proof`; returns (satisfied, constraints).
    fn run_fri(
        data: &plonky2::plonk::circuit_data::CircuitData<GL, C, 2>,
        proof: &plonky2::plonk::proof::ProofWithPublicInputs<GL, C, 2>,
    ) -> (bool, usize, usize) {
        use crate::challenger_gadget::proof_challenges;
        let cs = ConstraintSystem::<Fr>::new_ref();
        let t = TranscriptVar::new_witness(cs.clone(), proof).unwrap();
        let q = FriQueriesVar::new_witness(cs.clone(), &proof.proof.opening_proof).unwrap();
        let ch = proof_challenges(&t, data.verifier_only.circuit_digest.0, &data.common).unwrap();
        let consts: Vec<FpVar<Fr>> =
            data.verifier_only.constants_sigmas_cap.0.iter().map(|h| FpVar::Constant(h.0)).collect();
        let caps = [consts, t.wires_cap.clone(), t.zs_cap.clone(), t.quotient_cap.clone()];
        let before = cs.num_constraints();
        verify_fri_var(&data.common, &caps, &t, &ch, &q).unwrap();
        (cs.is_satisfied().unwrap(), cs.num_constraints() - before, cs.num_constraints())
    }

    #[test]
    fn fri_verifies_a_real_proof_and_rejects_tampering() {
        let (data, proof) = small_proof();
        assert!(data.common.fri_params.reduction_arity_bits.len() >= 2);
        let (ok, fri, total) = run_fri(&data, &proof);
        assert!(ok);
        println!(
            "FRI check of a degree-2^{} proof ({} queries, arities {:?}): {fri} constraints ({total} with transcript and challenges)",
            data.common.degree_bits(),
            data.common.fri_params.config.num_query_rounds,
            data.common.fri_params.reduction_arity_bits
        );

        // A query's initial evaluation.
        let mut bad = proof.clone();
        bad.proof.opening_proof.query_round_proofs[1].initial_trees_proof.evals_proofs[1].0[3] += GL::ONE;
        assert!(!run_fri(&data, &bad).0);
        // A Merkle sibling of an initial tree.
        let mut bad = proof.clone();
        bad.proof.opening_proof.query_round_proofs[0].initial_trees_proof.evals_proofs[0].1.siblings[2].0 +=
            Fr::from(1u64);
        assert!(!run_fri(&data, &bad).0);
        // A folding step's evaluation.
        let mut bad = proof.clone();
        bad.proof.opening_proof.query_round_proofs[2].steps[1].evals[0] += GLExt::ONE;
        assert!(!run_fri(&data, &bad).0);
        // An opening (changes the challenges too, as a cheating prover's transcript would).
        let mut bad = proof.clone();
        bad.proof.openings.wires[5] += GLExt::ONE;
        assert!(!run_fri(&data, &bad).0);
        // The final polynomial.
        let mut bad = proof.clone();
        bad.proof.opening_proof.final_poly.coeffs[0] += GLExt::ONE;
        assert!(!run_fri(&data, &bad).0);
    }

    #[test]
    fn compute_evaluation_matches_interpolation() {
        use plonky2::field::interpolation::interpolant;
        let cs = ConstraintSystem::<Fr>::new_ref();
        let a = 3;
        let n = 1 << a;
        let g = GL::primitive_root_of_unity(a);
        let x = GL::rand();
        let j = 5usize; // index of x within its coset
        let evals: Vec<GLExt> = (0..n).map(|_| GLExt::rand()).collect();
        let beta = GLExt::rand();
        // plonky2's definition: points (x·g^{n − rev(j)})·g^i carry evals in bit-reversed order.
        let rev_j = reverse_bits(j, a);
        let coset_start = x * g.exp_u64(((n - rev_j) % n) as u64);
        let rev_evals = reverse_index_bits(&evals, a);
        let points: Vec<(GLExt, GLExt)> =
            (0..n).map(|i| ((coset_start * g.exp_u64(i as u64)).into(), rev_evals[i])).collect();
        let expect = interpolant(&points).eval(beta);

        let xv = GlVar::new_witness(cs.clone(), Some(x)).unwrap();
        let bits: Vec<Boolean<Fr>> = (0..a).map(|i| Boolean::new_witness(cs.clone(), || Ok((j >> i) & 1 == 1)).unwrap()).collect();
        let ev: Vec<GlExtVar> = evals.iter().map(|e| GlExtVar::new_witness(cs.clone(), Some(*e)).unwrap()).collect();
        let bv = GlExtVar::new_witness(cs.clone(), Some(beta)).unwrap();
        let bp = ext_exp_power_of_2_var(&bv, a).unwrap();
        let before = cs.num_constraints();
        let got = compute_evaluation_var(&xv, &bits, &ev, &bv, &bp).unwrap();
        println!("FRI fold of arity {n}: {} constraints", cs.num_constraints() - before);
        assert_eq!(got.value().unwrap(), expect);
        assert!(cs.is_satisfied().unwrap());
    }
}
