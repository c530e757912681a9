//! plonky2's check at `ζ` in R1CS: the permutation argument (`L_0(ζ)·(Z(ζ) − 1)` and the
//! partial-product identities), their combination with the gate constraints by powers of each
//! `α`, and the quotient identity `vanishing_i(ζ) = Z_H(ζ)·Σ_j ζ^{n j}·t_{i,j}(ζ)` (plonky2's
//! `verify_with_challenges` before FRI).
//!
//! The gate constraints are an input: [`check_vanishing_var`] takes the terms
//! `Σ_gates filter·constraint` that plonky2's `evaluate_gate_constraints` computes, in-circuit
//! from [`crate::gates_gadget::evaluate_gate_constraints_var`] (the tests here also feed natively
//! computed terms, to show that they are bound: any change to them, or to an opening, leaves the
//! system unsatisfied).
//!
//! For challenge `i` (`β_i`, `γ_i` base-field challenges), with `w_j` the wires, `σ_j` the
//! permutation polynomials and `k_j` the coset shifts (`j` over the routed wires):
//! `num_j = w_j + β_i·k_j·ζ + γ_i`, `den_j = w_j + β_i·σ_j + γ_i`; the accumulators
//! `Z(ζ), π_1, …, π_m, Z(gζ)` must satisfy `acc_{c+1}·Π den_chunk = acc_c·Π num_chunk` for the
//! chunks of `quotient_degree_factor` wires.

use ark_relations::gr1cs::SynthesisError;
use plonky2::field::goldilocks_field::GoldilocksField;
use plonky2::field::types::Field;
use plonky2::plonk::circuit_data::CommonCircuitData;

use crate::challenger_gadget::{ChallengesVar, TranscriptVar};
use crate::fri_gadget::ext_exp_power_of_2_var;
use crate::goldilocks::{GLExt, GlExtVar, GlVar};

type GL = GoldilocksField;

/// The openings of a proof at `ζ` and `gζ`, by name.
#[derive(Clone, Debug)]
pub struct OpeningsVar {
    /// Constants (selectors and gate constants).
    pub constants: Vec<GlExtVar>,
    /// `σ_j`.
    pub plonk_sigmas: Vec<GlExtVar>,
    /// Wires.
    pub wires: Vec<GlExtVar>,
    /// `Z_i(ζ)`.
    pub plonk_zs: Vec<GlExtVar>,
    /// `Z_i(gζ)`.
    pub plonk_zs_next: Vec<GlExtVar>,
    /// Partial products.
    pub partial_products: Vec<GlExtVar>,
    /// Quotient chunks `t_{i,j}(ζ)`.
    pub quotient_polys: Vec<GlExtVar>,
}

impl OpeningsVar {
    /// Splits the transcript's openings (FRI order) by the circuit's shape.
    pub fn from_transcript(t: &TranscriptVar, common: &CommonCircuitData<GL, 2>) -> Self {
        let cfg = &common.config;
        let sizes = [
            common.num_constants,
            cfg.num_routed_wires,
            cfg.num_wires,
            cfg.num_challenges,
            cfg.num_challenges * common.num_partial_products,
            cfg.num_challenges * common.quotient_degree_factor,
            cfg.num_challenges,
        ];
        assert_eq!(t.openings.len(), sizes.iter().sum::<usize>(), "openings do not match the circuit");
        let mut rest = t.openings.as_slice();
        let mut take = |n: usize| {
            let (a, b) = rest.split_at(n);
            rest = b;
            a.to_vec()
        };
        Self {
            constants: take(sizes[0]),
            plonk_sigmas: take(sizes[1]),
            wires: take(sizes[2]),
            plonk_zs: take(sizes[3]),
            partial_products: take(sizes[4]),
            quotient_polys: take(sizes[5]),
            plonk_zs_next: take(sizes[6]),
        }
    }
}

/// `Π x_k`: the factors enter unreduced (bounds near `2^128`), the running product is reduced
/// after each multiplication.
fn product(xs: &[GlExtVar]) -> Result<GlExtVar, SynthesisError> {
    let mut acc = xs[0].reduce()?;
    for x in &xs[1..] {
        acc = acc.mul(x)?.reduce()?;
    }
    Ok(acc)
}

/// Checks plonky2's vanishing identity at `ζ` for every challenge (see the module docs);
/// `gate_terms` are the combined gate constraints (`common.num_gate_constraints` of them).
pub fn check_vanishing_var(
    common: &CommonCircuitData<GL, 2>,
    o: &OpeningsVar,
    ch: &ChallengesVar,
    gate_terms: &[GlExtVar],
) -> Result<(), SynthesisError> {
    assert_eq!(common.num_lookup_polys, 0, "lookups are not supported");
    assert_eq!(gate_terms.len(), common.num_gate_constraints);
    let zeta = &ch.plonk_zeta;
    let n = common.degree();
    let one = GlExtVar::constant(GLExt::ONE);
    let zeta_n = ext_exp_power_of_2_var(zeta, common.degree_bits())?;
    let z_h = zeta_n.sub(&one)?.reduce()?;
    // L_0(ζ) = Z_H(ζ) / (n·(ζ − 1)).
    let l0_den = zeta.sub(&one)?.mul_base_const(GL::from_canonical_usize(n))?.reduce()?;
    let l0 = z_h.div(&l0_den)?;

    let num_challenges = common.config.num_challenges;
    let max_degree = common.quotient_degree_factor;
    let num_prods = common.num_partial_products;
    let routed = common.config.num_routed_wires;
    let mut z1_terms = Vec::with_capacity(num_challenges);
    let mut pp_terms = Vec::new();
    for i in 0..num_challenges {
        let (beta, gamma) = (&ch.plonk_betas[i], &ch.plonk_gammas[i]);
        z1_terms.push(l0.mul(&o.plonk_zs[i].sub(&one)?)?);
        let beta_zeta = zeta.scalar_mul(beta)?.reduce()?;
        let mut nums = Vec::with_capacity(routed);
        let mut dens = Vec::with_capacity(routed);
        for j in 0..routed {
            let w = &o.wires[j];
            let s_id = beta_zeta.mul_base_const(common.k_is[j])?;
            nums.push(w.add(&s_id)?.add(&GlExtVar::from_base(gamma.clone()))?);
            let s_sigma = o.plonk_sigmas[j].scalar_mul(beta)?;
            dens.push(w.add(&s_sigma)?.add(&GlExtVar::from_base(gamma.clone()))?);
        }
        let mut accs = vec![o.plonk_zs[i].clone()];
        accs.extend_from_slice(&o.partial_products[i * num_prods..(i + 1) * num_prods]);
        accs.push(o.plonk_zs_next[i].clone());
        for ((nc, dc), w) in nums.chunks(max_degree).zip(dens.chunks(max_degree)).zip(accs.windows(2)) {
            let lhs = w[0].mul(&product(nc)?)?;
            let rhs = w[1].mul(&product(dc)?)?;
            pp_terms.push(lhs.sub(&rhs)?);
        }
    }
    let terms: Vec<GlExtVar> = z1_terms
        .into_iter()
        .chain(pp_terms)
        .chain(gate_terms.iter().cloned())
        .map(|t| t.reduce())
        .collect::<Result<_, _>>()?;

    // Powers of ζ^n for the quotient chunks, shared by every challenge.
    let mut zeta_n_pows = vec![one.clone()];
    for _ in 1..max_degree {
        let last = zeta_n_pows.last().expect("nonempty");
        zeta_n_pows.push(last.mul(&zeta_n)?.reduce()?);
    }
    for (i, alpha) in ch.plonk_alphas.iter().enumerate() {
        // Σ_k α^k·term_k.
        let mut acc = GlExtVar::zero();
        let mut power = GlVar::constant(GL::ONE);
        for (k, term) in terms.iter().enumerate() {
            if k > 0 {
                power = power.mul(alpha)?.reduce()?;
            }
            acc = acc.add(&term.scalar_mul(&power)?)?;
        }
        let chunk = &o.quotient_polys[i * max_degree..(i + 1) * max_degree];
        let t = GlExtVar::inner_product(&zeta_n_pows, chunk)?.reduce()?;
        acc.enforce_equal(&z_h.mul(&t)?)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ark_bn254::Fr;
    use ark_relations::gr1cs::ConstraintSystem;
    use plonky2::hash::hash_types::HashOut;
    use plonky2::plonk::circuit_data::CircuitData;
    use plonky2::plonk::proof::ProofWithPublicInputs;
    use plonky2::plonk::vars::EvaluationVars;

    use crate::challenger_gadget::proof_challenges;
    use crate::hasher::PoseidonBn254GoldilocksConfig as C;

    /// plonky2's `evaluate_gate_constraints` (crate-private there), natively: the selector
    /// layout is read through `SelectorsInfo`'s serde form, whose fields are crate-private too.
    fn native_gate_terms(common: &CommonCircuitData<GL, 2>, proof: &ProofWithPublicInputs<GL, C, 2>) -> Vec<GLExt> {
        let info = serde_json::to_value(&common.selectors_info).unwrap();
        let selector_indices: Vec<usize> = serde_json::from_value(info["selector_indices"].clone()).unwrap();
        let groups: Vec<std::ops::Range<usize>> = serde_json::from_value(info["groups"].clone()).unwrap();
        let pih: HashOut<GL> = proof.get_public_inputs_hash();
        let vars = EvaluationVars {
            local_constants: &proof.proof.openings.constants,
            local_wires: &proof.proof.openings.wires,
            public_inputs_hash: &pih,
        };
        let mut out = vec![GLExt::ZERO; common.num_gate_constraints];
        for (i, gate) in common.gates.iter().enumerate() {
            let s = selector_indices[i];
            let cs = gate.0.eval_filtered(vars, i, s, groups[s].clone(), groups.len(), common.num_lookup_selectors);
            for (o, c) in out.iter_mut().zip(cs) {
                *o += c;
            }
        }
        out
    }

    fn small_proof() -> (CircuitData<GL, C, 2>, ProofWithPublicInputs<GL, C, 2>) {
        use plonky2::iop::witness::{PartialWitness, WitnessWrite};
        use plonky2::plonk::circuit_builder::CircuitBuilder;
        use plonky2::plonk::circuit_data::CircuitConfig;
        let mut config = CircuitConfig::standard_recursion_config();
        config.fri_config.proof_of_work_bits = 2;
        config.fri_config.num_query_rounds = 2;
        config.security_bits = 8;
        let mut b = CircuitBuilder::<GL, 2>::new(config);
        let x = b.add_virtual_target();
        b.register_public_input(x);
        let mut y = x;
        for _ in 0..40 {
            y = b.mul_add(y, y, x);
        }
        let h = b.hash_n_to_hash_no_pad::<plonky2::hash::poseidon::PoseidonHash>(vec![x, y]);
        b.register_public_inputs(&h.elements);
        let data = b.build::<C>();
        let mut pw = PartialWitness::new();
        pw.set_target(x, GL::from_canonical_u64(3)).unwrap();
        let proof = data.prove(pw).unwrap();
        data.verify(proof.clone()).unwrap();
        (data, proof)
    }

    /// Builds the check for `proof` with the given gate terms; returns (satisfied, constraints).
    fn run(data: &CircuitData<GL, C, 2>, proof: &ProofWithPublicInputs<GL, C, 2>, gate_terms: &[GLExt]) -> (bool, usize) {
        let cs = ConstraintSystem::<Fr>::new_ref();
        let t = TranscriptVar::new_witness(cs.clone(), proof).unwrap();
        let ch = proof_challenges(&t, data.verifier_only.circuit_digest.0, &data.common).unwrap();
        let o = OpeningsVar::from_transcript(&t, &data.common);
        let g: Vec<GlExtVar> = gate_terms.iter().map(|x| GlExtVar::new_witness(cs.clone(), Some(*x)).unwrap()).collect();
        let before = cs.num_constraints();
        check_vanishing_var(&data.common, &o, &ch, &g).unwrap();
        (cs.is_satisfied().unwrap(), cs.num_constraints() - before)
    }

    #[test]
    fn vanishing_identity_of_a_real_proof() {
        let (data, proof) = small_proof();
        let terms = native_gate_terms(&data.common, &proof);
        let (ok, cost) = run(&data, &proof, &terms);
        assert!(ok);
        println!(
            "permutation argument + quotient check ({} routed wires, {} challenges, {} gate terms as inputs): {cost} constraints",
            data.common.config.num_routed_wires,
            data.common.config.num_challenges,
            terms.len()
        );

        // A wrong gate term.
        let mut bad_terms = terms.clone();
        bad_terms[3] += GLExt::ONE;
        assert!(!run(&data, &proof, &bad_terms).0);
        // A wrong Z(ζ), partial product or quotient opening (challenges recomputed, gate terms
        // recomputed natively from the tampered openings, as a cheating prover would).
        for tamper in 0..3 {
            let mut bad = proof.clone();
            match tamper {
                0 => bad.proof.openings.plonk_zs[0] += GLExt::ONE,
                1 => bad.proof.openings.partial_products[2] += GLExt::ONE,
                _ => bad.proof.openings.quotient_polys[1] += GLExt::ONE,
            }
            let terms = native_gate_terms(&data.common, &bad);
            assert!(!run(&data, &bad, &terms).0, "tamper {tamper} not caught");
        }
        // A wire opening changes the gate terms and the permutation argument.
        let mut bad = proof.clone();
        bad.proof.openings.wires[0] += GLExt::ONE;
        let terms = native_gate_terms(&data.common, &bad);
        assert!(!run(&data, &bad, &terms).0);
    }
}
