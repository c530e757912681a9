//! The two domain routes of issue 35 measured on the same wrap: Hekaton on BLS12-381 wrapped
//! on BW6-767 (smooth domains with the Rader radix 10177 above 214,038 points) against
//! Hekaton on BLS12-377 wrapped on BW6-761 (radix-2 domains).
//!
//! `cargo run --release -p hekaton --example wrap_chains -- [--k 16] [--no-prove] [--only 381|377]`
//!
//! For each chain: the wrap circuit's R1CS constraints, its SR1CS rows and the Pari domain
//! they need, then (unless `--no-prove`) the wrap setup and prove times, the proving key's
//! stored (uncompressed) size and the final proof's verify time. The synthetic circuit is the
//! one of `hekaton_wrap_bench` (k subcircuits of 4 steps, 2 wires).
//!
//! The BLS12-377 row runs Hekaton's Poseidon (x^5 S-box) over BLS12-377's scalar field, where
//! x ↦ x^5 is not a permutation (5 divides r − 1): it measures cost only; a real move to
//! BLS12-377 would need another S-box (x^11 at the least) and a Poseidon instance of its own.

use std::time::Instant;

use ark_crypto_primitives::sponge::Absorb;
use ark_ec::bls12::{Bls12, Bls12Config};
use ark_ec::pairing::Pairing;
use ark_relations::gr1cs::{ConstraintSynthesizer, ConstraintSystem, SynthesisMode};
use hekaton::spec::CircuitSpec;
use hekaton::workflow;
use hekaton::wrap::{self, WrapCircuit};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1).cloned())
}

fn run<P, E2>(label: &str, k: usize, prove: bool)
where
    P: Bls12Config,
    P::Fp: Absorb,
    <Bls12<P> as Pairing>::ScalarField: Absorb,
    E2: Pairing<ScalarField = P::Fp>,
{
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    let spec = CircuitSpec::Synthetic { subcircuits: k, steps: 4, wires: 2 };
    let circuit = spec.build::<<Bls12<P> as Pairing>::ScalarField>(k as u64).unwrap();
    let (hpk, hvk) = workflow::setup::<Bls12<P>, _, _>(&circuit, &mut rng).unwrap();
    let proof = workflow::prove(&hpk, &circuit, &mut rng).unwrap();
    let x = circuit.public_inputs.clone();

    let cs = ConstraintSystem::<P::Fp>::new_ref();
    cs.set_mode(SynthesisMode::Setup);
    WrapCircuit::<P>::blank(&hvk).unwrap().generate_constraints(cs.clone()).unwrap();
    let constraints = cs.num_constraints();
    let rows = pari::r1cs::synthesize_setup(WrapCircuit::<P>::blank(&hvk).unwrap()).unwrap().num_rows();
    let domain = pari::domain::Domain::<P::Fp>::new(rows).map(|d| d.size());
    let domain_s = domain.map_or("does not fit".to_string(), |n| format!("{n} ({:.2}× rows)", n as f64 / rows as f64));
    if !prove || domain.is_none() {
        println!("| {label} | {k} | {constraints} | {rows} | {domain_s} | – | – | – | – |");
        return;
    }
    let t = Instant::now();
    let (pk, key) = wrap::setup::<P, E2, _>(&hvk, &mut rng).unwrap();
    let setup = t.elapsed().as_secs_f64();
    let pk_bytes = pk.to_bytes_uncompressed().len();
    let t = Instant::now();
    let fin = wrap::prove::<P, E2, _>(&pk, &hvk, &x, &proof, &mut rng).unwrap();
    let prove_s = t.elapsed().as_secs_f64();
    let pvk = key.wrap_vk.prepare().unwrap();
    let t = Instant::now();
    wrap::verify_final::<P, E2>(&key, &pvk, &x, &fin).unwrap();
    let verify = t.elapsed().as_secs_f64();
    println!(
        "| {label} | {k} | {constraints} | {rows} | {domain_s} | {setup:.1} s | {prove_s:.1} s | {:.0} MB | {:.2} ms |",
        pk_bytes as f64 / 1e6,
        verify * 1e3
    );
}

fn main() {
    let k: usize = arg("--k").map_or(16, |s| s.parse().expect("--k"));
    let prove = !std::env::args().any(|a| a == "--no-prove");
    let only = arg("--only");
    println!("| chain | k | wrap R1CS constraints | SR1CS rows | Pari domain | wrap setup | wrap prove | proving key (uncompressed) | verify |");
    println!("|---|---|---|---|---|---|---|---|---|");
    if only.as_deref() != Some("377") {
        run::<ark_bls12_381::Config, ark_bw6_767::BW6_767>("BLS12-381 → BW6-767", k, prove);
    }
    if only.as_deref() != Some("381") {
        run::<ark_bls12_377::Config, ark_bw6_761::BW6_761>("BLS12-377 → BW6-761", k, prove);
    }
}
