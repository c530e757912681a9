//! Constraint counts of the wrap's building blocks, and native costs of the Poseidon-BN254
//! plonky2 configuration next to plonky2's own.
//!
//! `cargo run --release -p plonky2-r1cs --example costs [log2_ops]` (default 12): the plonky2
//! circuit has about `2^log2_ops` multiply-adds (20 per row in the standard configuration).
//!
//! `cargo run --release -p plonky2-r1cs --example costs recursive`: the complete R1CS verifier
//! (constraints per part) of a plonky2 proof that itself verifies a plonky2 proof, with the
//! standard recursion configuration and Poseidon-BN254: the shape of the last shrink layer.

use std::time::Instant;

use ark_bn254::Fr;
use ark_r1cs_std::alloc::AllocVar;
use ark_r1cs_std::fields::fp::FpVar;
use ark_relations::gr1cs::{ConstraintSystem, ConstraintSystemRef};
use plonky2::field::goldilocks_field::GoldilocksField as GL;
use plonky2::field::types::{Field, Sample};
use plonky2::hash::hashing::PlonkyPermutation;
use plonky2::hash::poseidon::{PoseidonHash, PoseidonPermutation};
use plonky2::iop::witness::{PartialWitness, WitnessWrite};
use plonky2::plonk::circuit_builder::CircuitBuilder;
use plonky2::plonk::circuit_data::{CircuitConfig, CircuitData};
use plonky2::plonk::config::{GenericConfig, PoseidonGoldilocksConfig};
use plonky2::plonk::proof::ProofWithPublicInputs;
use plonky2_r1cs::challenger_gadget::{fr_to_bits_canonical, proof_challenges, TranscriptVar};
use plonky2_r1cs::fri_gadget::{verify_fri_var, FriQueriesVar};
use plonky2_r1cs::goldilocks::{GLExt, GlExtVar, GlVar};
use plonky2_r1cs::hasher::{PoseidonBn254GoldilocksConfig, PoseidonBn254Permutation};
use plonky2_r1cs::poseidon::{params_t3, params_t4};
use plonky2_r1cs::poseidon_gadget::{permute_var, poseidon2_var};

const D: usize = 2;

fn count(cs: &ConstraintSystemRef<Fr>, f: impl FnOnce()) -> usize {
    let before = cs.num_constraints();
    f();
    cs.num_constraints() - before
}

/// A circuit of `2^log_gates` multiply-adds: a chain of multiplications and Goldilocks Poseidon
/// hashes (so both arithmetic and Poseidon gates appear).
fn build<C: GenericConfig<D, F = GL>>(
    config: CircuitConfig,
    log_gates: usize,
) -> (CircuitData<GL, C, D>, plonky2::iop::target::Target) {
    let mut b = CircuitBuilder::<GL, D>::new(config);
    let x = b.add_virtual_target();
    b.register_public_input(x);
    let mut y = x;
    let rows = 1usize << log_gates;
    for i in 0..rows {
        y = b.mul_add(y, y, x);
        if i % 64 == 0 {
            y = b.hash_n_to_hash_no_pad::<PoseidonHash>(vec![y, x]).elements[0];
        }
    }
    b.register_public_input(y);
    (b.build::<C>(), x)
}

fn prove<C: GenericConfig<D, F = GL>>(
    data: &CircuitData<GL, C, D>,
    x: plonky2::iop::target::Target,
) -> (ProofWithPublicInputs<GL, C, D>, f64) {
    let mut pw = PartialWitness::new();
    pw.set_target(x, GL::from_canonical_u64(3)).expect("witness");
    let t = Instant::now();
    let proof = data.prove(pw).expect("prove");
    (proof, t.elapsed().as_secs_f64())
}

/// The complete in-circuit verification of a recursive proof, by part.
fn recursive() {
    use plonky2::plonk::config::PoseidonGoldilocksConfig as Inner;
    use plonky2_r1cs::gates_gadget::evaluate_ported_gate_constraints_var;
    use plonky2_r1cs::vanishing_gadget::{check_vanishing_var, OpeningsVar};
    let config = CircuitConfig::standard_recursion_config();
    let (inner, x) = build::<Inner>(config.clone(), 10);
    let (inner_proof, _) = prove(&inner, x);
    let mut b = CircuitBuilder::<GL, D>::new(config);
    let pt = b.add_virtual_proof_with_pis(&inner.common);
    let vd = b.constant_verifier_data(&inner.verifier_only);
    b.verify_proof::<Inner>(&pt, &vd, &inner.common);
    b.register_public_inputs(&pt.public_inputs);
    let outer = b.build::<PoseidonBn254GoldilocksConfig>();
    let mut pw = PartialWitness::new();
    pw.set_proof_with_pis_target(&pt, &inner_proof).expect("witness");
    let t0 = Instant::now();
    let proof = outer.prove(pw).expect("prove");
    let prove_s = t0.elapsed().as_secs_f64();
    outer.verify(proof.clone()).expect("verify");
    println!(
        "outer (Poseidon-BN254) proof: degree 2^{}, {} gates types, prove {prove_s:.1} s, {} bytes",
        outer.common.degree_bits(),
        outer.common.gates.len(),
        proof.to_bytes().len()
    );

    let cs = ConstraintSystem::<Fr>::new_ref();
    let mut parts = Vec::new();
    let mut mark = |name: &'static str, cs: &ConstraintSystemRef<Fr>, last: &mut usize| {
        parts.push((name, cs.num_constraints() - *last));
        *last = cs.num_constraints();
    };
    let mut last = 0;
    let t = TranscriptVar::new_witness(cs.clone(), &proof).expect("alloc");
    mark("allocate openings and caps (range checks)", &cs, &mut last);
    let q = FriQueriesVar::new_witness(cs.clone(), &proof.proof.opening_proof).expect("alloc");
    mark("allocate FRI query values and paths (range checks)", &cs, &mut last);
    let ch = proof_challenges(&t, outer.verifier_only.circuit_digest.0, &outer.common).expect("replay");
    mark("challenger replay", &cs, &mut last);
    let o = OpeningsVar::from_transcript(&t, &outer.common);
    let (terms, skipped) =
        evaluate_ported_gate_constraints_var(&outer.common, &o.constants, &o.wires, &t.public_inputs_hash)
            .expect("gates");
    mark("gate constraints at zeta (ported gates)", &cs, &mut last);
    if !skipped.is_empty() {
        println!("not ported yet, left out (so the check below cannot be satisfied): {skipped:?}");
    }
    check_vanishing_var(&outer.common, &o, &ch, &terms).expect("vanishing");
    mark("permutation argument + quotient check", &cs, &mut last);
    let consts: Vec<FpVar<Fr>> =
        outer.verifier_only.constants_sigmas_cap.0.iter().map(|h| FpVar::Constant(h.0)).collect();
    let caps = [consts, t.wires_cap.clone(), t.zs_cap.clone(), t.quotient_cap.clone()];
    verify_fri_var(&outer.common, &caps, &t, &ch, &q).expect("fri");
    mark("FRI (Merkle paths, combination, folds, final polynomial)", &cs, &mut last);
    println!("\n| part | constraints |\n|---|---|");
    for (name, n) in &parts {
        println!("| {name} | {n} |");
    }
    println!("| **total** (without the public-inputs hash) | {} |", cs.num_constraints());
    println!("satisfied: {}", cs.is_satisfied().expect("satisfied"));
}

fn main() {
    if std::env::args().nth(1).as_deref() == Some("recursive") {
        recursive();
        return;
    }
    let log_gates: usize = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(12);

    println!("## R1CS constraints over BN254 Fr\n");
    println!("| operation | constraints |");
    println!("|---|---|");
    let cs = ConstraintSystem::<Fr>::new_ref();
    let w = |x: u64| FpVar::new_witness(cs.clone(), || Ok(Fr::from(x))).expect("witness");
    for p in [params_t3(), params_t4()] {
        let mut s: Vec<FpVar<Fr>> = (0..p.t as u64).map(w).collect();
        let n = count(&cs, || permute_var(p, &mut s).expect("permute"));
        println!("| Poseidon-BN254 permutation, t = {} (R_P = {}) | {n} |", p.t, p.partial_rounds);
    }
    let (a, b) = (w(1), w(2));
    println!("| Merkle node, circomlib Poseidon(2) | {} |", count(&cs, || {
        let _ = poseidon2_var(&a, &b).expect("hash");
    }));
    let y = w(12345);
    println!("| canonical 254-bit decomposition of an Fr value | {} |", count(&cs, || {
        fr_to_bits_canonical(&y).expect("bits");
    }));
    let mut g = GlVar::zero();
    println!("| Goldilocks witness, canonical | {} |", count(&cs, || {
        g = GlVar::new_witness(cs.clone(), Some(GL::rand())).expect("alloc")
    }));
    let h = GlVar::new_witness(cs.clone(), Some(GL::rand())).expect("alloc");
    let mut prod = GlVar::zero();
    println!("| Goldilocks product, unreduced | {} |", count(&cs, || prod = g.mul(&h).expect("mul")));
    println!("| reduce one product to < 2^64 | {} |", count(&cs, || {
        prod.reduce().expect("reduce");
    }));
    println!("| reduce one product to canonical | {} |", count(&cs, || {
        prod.reduce_canonical().expect("reduce");
    }));
    for n in [10usize, 100, 1000] {
        let xs: Vec<GlVar> = (0..n).map(|_| GlVar::new_witness(cs.clone(), Some(GL::rand())).expect("alloc")).collect();
        let mut acc = GlVar::zero();
        let m = count(&cs, || acc = GlVar::inner_product(&xs, &xs).expect("ip"));
        let r = count(&cs, || {
            acc.reduce().expect("reduce");
        });
        println!("| sum of {n} Goldilocks products: products + one reduction | {m} + {r} |");
    }
    let ea = GlExtVar::new_witness(cs.clone(), Some(GLExt::rand())).expect("alloc");
    let eb = GlExtVar::new_witness(cs.clone(), Some(GLExt::rand())).expect("alloc");
    let mut ep = GlExtVar::zero();
    println!("| F_p^2 witness | {} |", count(&cs, || {
        GlExtVar::new_witness(cs.clone(), Some(GLExt::rand())).expect("alloc");
    }));
    println!("| F_p^2 product (Karatsuba), unreduced | {} |", count(&cs, || ep = ea.mul(&eb).expect("mul")));
    println!("| F_p^2 reduce after one product | {} |", count(&cs, || {
        ep.reduce().expect("reduce");
    }));
    assert!(cs.is_satisfied().expect("satisfied"));

    println!("\n## Native: one permutation\n");
    let iters = 20_000;
    let mut perm = PoseidonBn254Permutation::new(GL::rand_vec(9));
    let t = Instant::now();
    for _ in 0..iters {
        perm.permute();
    }
    let bn = t.elapsed().as_secs_f64() / iters as f64;
    let mut gp = PoseidonPermutation::<GL>::new(GL::rand_vec(12));
    let t = Instant::now();
    for _ in 0..iters {
        gp.permute();
    }
    let gl = t.elapsed().as_secs_f64() / iters as f64;
    std::hint::black_box((perm, gp));
    println!("| permutation | µs | Goldilocks absorbed |");
    println!("|---|---|---|");
    println!("| Poseidon-BN254, t = 4 (challenger/sponge) | {:.2} | 9 |", bn * 1e6);
    println!("| plonky2 Poseidon, Goldilocks, width 12 | {:.2} | 8 |", gl * 1e6);
    println!("ratio per permutation: {:.1}x", bn / gl);

    println!("\n## plonky2 proof of 2^{log_gates} multiply-adds, standard recursion config (cap height 4, 16 PoW bits)\n");
    let (data_gl, x_gl) = build::<PoseidonGoldilocksConfig>(CircuitConfig::standard_recursion_config(), log_gates);
    let (proof_gl, t_gl) = prove(&data_gl, x_gl);
    data_gl.verify(proof_gl.clone()).expect("verify");
    let (data_bn, x_bn) = build::<PoseidonBn254GoldilocksConfig>(CircuitConfig::standard_recursion_config(), log_gates);
    let (proof_bn, t_bn) = prove(&data_bn, x_bn);
    data_bn.verify(proof_bn.clone()).expect("verify");
    println!("| config | degree | prove s | proof bytes |");
    println!("|---|---|---|---|");
    println!(
        "| Poseidon (Goldilocks) | 2^{} | {t_gl:.2} | {} |",
        data_gl.common.degree_bits(),
        proof_gl.to_bytes().len()
    );
    println!(
        "| Poseidon-BN254 | 2^{} | {t_bn:.2} | {} |",
        data_bn.common.degree_bits(),
        proof_bn.to_bytes().len()
    );

    println!("\n## In-circuit verification pieces for that Poseidon-BN254 proof (28 queries)\n");
    println!("| cap height | degree | transcript alloc | challenger replay | FRI queries alloc | FRI check |");
    println!("|---|---|---|---|---|---|");
    for cap_height in [4usize, 0] {
        let mut config = CircuitConfig::standard_recursion_config();
        config.fri_config.cap_height = cap_height;
        let (data, x) = build::<PoseidonBn254GoldilocksConfig>(config, log_gates);
        let (proof, _) = prove(&data, x);
        let cs = ConstraintSystem::<Fr>::new_ref();
        let t = TranscriptVar::new_witness(cs.clone(), &proof).expect("alloc");
        let alloc = cs.num_constraints();
        let ch = proof_challenges(&t, data.verifier_only.circuit_digest.0, &data.common).expect("replay");
        let replay = cs.num_constraints() - alloc;
        let before = cs.num_constraints();
        let q = FriQueriesVar::new_witness(cs.clone(), &proof.proof.opening_proof).expect("alloc");
        let q_alloc = cs.num_constraints() - before;
        let consts: Vec<FpVar<Fr>> =
            data.verifier_only.constants_sigmas_cap.0.iter().map(|h| FpVar::Constant(h.0)).collect();
        let caps = [consts, t.wires_cap.clone(), t.zs_cap.clone(), t.quotient_cap.clone()];
        let before = cs.num_constraints();
        verify_fri_var(&data.common, &caps, &t, &ch, &q).expect("fri");
        let fri = cs.num_constraints() - before;
        assert!(cs.is_satisfied().expect("satisfied"));
        println!(
            "| {cap_height} | 2^{} | {alloc} | {replay} | {q_alloc} | {fri} |",
            data.common.degree_bits()
        );
    }
    println!("\nGoldilocks Poseidon permutation (public-inputs hash), emulated: see `cargo test -p plonky2-r1cs goldilocks_poseidon -- --nocapture`");
}
