//! Where the wrap circuit's constraints go, per subcircuit: each gadget the wrap runs once per
//! subcircuit, synthesised alone with a valid assignment, against the marginal cost per
//! subcircuit of the whole circuit (constraints at k = 4 and k = 8, one key shape set).
//!
//! `cargo run --release -p hekaton --example wrap_profile`

use ark_bls12_381::{Bls12_381, Config, Fq, Fr, G1Affine, G1Projective, G2Affine};
use ark_crypto_primitives::sponge::constraints::CryptographicSpongeVar;
use ark_crypto_primitives::sponge::poseidon::constraints::PoseidonSpongeVar;
use ark_ec::{AffineRepr, CurveGroup};
use ark_ff::UniformRand;
use ark_r1cs_std::alloc::AllocVar;
use ark_r1cs_std::boolean::Boolean;
use ark_r1cs_std::fields::fp::FpVar;
use ark_r1cs_std::fields::fp2::Fp2Var;
use ark_r1cs_std::groups::bls12::{G1PreparedVar, G1Var, G2PreparedVar};
use ark_r1cs_std::groups::CurveVar;
use ark_r1cs_std::pairing::bls12::PairingVar;
use ark_r1cs_std::pairing::PairingVar as _;
use ark_relations::gr1cs::{ConstraintSynthesizer, ConstraintSystem, ConstraintSystemRef, SynthesisMode};
use bls12_gadgets::{alloc_g1, enforce_g2_subgroup};
use hekaton::merkle::poseidon_config;
use hekaton::spec::CircuitSpec;
use hekaton::workflow;
use hekaton::wrap::WrapCircuit;
use rand::SeedableRng;

fn count(f: impl FnOnce(ConstraintSystemRef<Fq>)) -> usize {
    let cs = ConstraintSystem::<Fq>::new_ref();
    f(cs.clone());
    assert!(cs.is_satisfied().unwrap());
    cs.num_constraints()
}

fn bits(cs: &ConstraintSystemRef<Fq>, n: usize, rng: &mut impl rand::Rng) -> Vec<Boolean<Fq>> {
    (0..n).map(|_| Boolean::new_witness(cs.clone(), || Ok(rng.gen::<bool>())).unwrap()).collect()
}

fn wrap_constraints(k: usize) -> (usize, usize) {
    let spec = CircuitSpec::Synthetic { subcircuits: k, steps: 4, wires: 2 };
    let circuit = spec.build::<Fr>(k as u64).unwrap();
    let (_, hvk) = workflow::setup::<Bls12_381, _, _>(&circuit, &mut rand_chacha::ChaCha20Rng::seed_from_u64(1)).unwrap();
    let cs = ConstraintSystem::<Fq>::new_ref();
    cs.set_mode(SynthesisMode::Setup);
    WrapCircuit::<Config>::blank(&hvk).unwrap().generate_constraints(cs.clone()).unwrap();
    (cs.num_constraints(), hvk.vks.len())
}

fn main() {
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(3);
    let p1 = (G1Affine::generator() * Fr::rand(&mut rng)).into_affine();
    let p2 = (G2Affine::generator() * Fr::rand(&mut rng)).into_affine();
    let rows: Vec<(&str, usize, usize)> = vec![
        ("G1 point, ark-r1cs-std allocation (126-bit cofactor, complete formulas) + affine form", 3, count(|cs| {
            let p = G1Var::<Config>::new_witness(cs, || Ok(p1)).unwrap();
            let _ = G1PreparedVar::<Config>::from_group_var(&p).unwrap();
        })),
        ("G1 point, `alloc_g1` ((1 − u)·P', affine)", 3, count(|cs| {
            let _ = alloc_g1::<Config>(&cs, Some(p1)).unwrap();
        })),
        ("G2 point B: on curve + ψ(B) = [u]B", 1, count(|cs| {
            let x = Fp2Var::new_witness(cs.clone(), || Ok(p2.x)).unwrap();
            let y = Fp2Var::new_witness(cs.clone(), || Ok(p2.y)).unwrap();
            let _ = enforce_g2_subgroup::<Config>(&x, &y).unwrap();
        })),
        ("scalar × variable G1 (129-bit ρ_i: A, C, D)", 3, count(|cs| {
            let p = G1Var::<Config>::new_variable_omit_prime_order_check(cs.clone(), || Ok(G1Projective::from(p1)), ark_r1cs_std::alloc::AllocationMode::Witness).unwrap();
            let before = cs.num_constraints();
            let b = bits(&cs, 129, &mut rng.clone());
            let _ = p.scalar_mul_le(b.iter()).unwrap();
            let _ = before;
        }) - count(|cs| {
            let _ = G1Var::<Config>::new_variable_omit_prime_order_check(cs.clone(), || Ok(G1Projective::from(p1)), ark_r1cs_std::alloc::AllocationMode::Witness).unwrap();
            let _ = bits(&cs, 129, &mut rng.clone());
        })),
        ("scalar × constant G1 (ρ_i·ic0_i)", 1, count(|cs| {
            let b = bits(&cs, 129, &mut rng.clone());
            let _ = G1Var::<Config>::constant(p1.into_group()).scalar_mul_le(b.iter()).unwrap();
        }) - count(|cs| {
            let _ = bits(&cs, 129, &mut rng.clone());
        })),
        ("complete G1 addition (into Σρ C, Σρ D, Σρ ic0)", 3, count(|cs| {
            let a = G1Var::<Config>::new_variable_omit_prime_order_check(cs.clone(), || Ok(G1Projective::from(p1)), ark_r1cs_std::alloc::AllocationMode::Witness).unwrap();
            let _ = a.clone() + a;
        }) - count(|cs| {
            let _ = G1Var::<Config>::new_variable_omit_prime_order_check(cs.clone(), || Ok(G1Projective::from(p1)), ark_r1cs_std::alloc::AllocationMode::Witness).unwrap();
        })),
        ("prepare_g2(B)", 1, count(|cs| {
            let b = ark_r1cs_std::groups::bls12::G2Var::<Config>::new_variable_omit_prime_order_check(cs.clone(), || Ok(p2.into_group()), ark_r1cs_std::alloc::AllocationMode::Witness).unwrap();
            let _ = PairingVar::<Config>::prepare_g2(&b).unwrap();
        }) - count(|cs| {
            let _ = ark_r1cs_std::groups::bls12::G2Var::<Config>::new_variable_omit_prime_order_check(cs.clone(), || Ok(p2.into_group()), ark_r1cs_std::alloc::AllocationMode::Witness).unwrap();
        })),
        ("one more pair (variable G1, variable G2) in the multi-Miller loop", 1, {
            let miller = |n: usize| count(|cs| {
                let g1: Vec<_> = (0..n).map(|_| {
                    let p = G1Var::<Config>::new_variable_omit_prime_order_check(cs.clone(), || Ok(G1Projective::from(p1)), ark_r1cs_std::alloc::AllocationMode::Witness).unwrap();
                    G1PreparedVar::<Config>::from_group_var(&p).unwrap()
                }).collect();
                let g2: Vec<_> = (0..n).map(|_| {
                    let b = ark_r1cs_std::groups::bls12::G2Var::<Config>::new_variable_omit_prime_order_check(cs.clone(), || Ok(p2.into_group()), ark_r1cs_std::alloc::AllocationMode::Witness).unwrap();
                    PairingVar::<Config>::prepare_g2(&b).unwrap()
                }).collect();
                let _ = PairingVar::<Config>::miller_loop(&g1, &g2).unwrap();
            });
            let g2prep = |n: usize| count(|cs| {
                for _ in 0..n {
                    let p = G1Var::<Config>::new_variable_omit_prime_order_check(cs.clone(), || Ok(G1Projective::from(p1)), ark_r1cs_std::alloc::AllocationMode::Witness).unwrap();
                    let _ = G1PreparedVar::<Config>::from_group_var(&p).unwrap();
                    let b = ark_r1cs_std::groups::bls12::G2Var::<Config>::new_variable_omit_prime_order_check(cs.clone(), || Ok(p2.into_group()), ark_r1cs_std::alloc::AllocationMode::Witness).unwrap();
                    let _ = PairingVar::<Config>::prepare_g2(&b).unwrap();
                }
            });
            (miller(3) - g2prep(3)) - (miller(2) - g2prep(2))
        }),
        ("one more pair (variable G1, constant G2) in the multi-Miller loop", 0, {
            let miller = |n: usize| count(|cs| {
                let g1: Vec<_> = (0..n).map(|_| {
                    let p = G1Var::<Config>::new_variable_omit_prime_order_check(cs.clone(), || Ok(G1Projective::from(p1)), ark_r1cs_std::alloc::AllocationMode::Witness).unwrap();
                    G1PreparedVar::<Config>::from_group_var(&p).unwrap()
                }).collect();
                let g2: Vec<_> = (0..n).map(|_| G2PreparedVar::<Config>::new_constant(cs.clone(), ark_ec::bls12::G2Prepared::<Config>::from(p2)).unwrap()).collect();
                let _ = PairingVar::<Config>::miller_loop(&g1, &g2).unwrap();
            });
            let base = |n: usize| count(|cs| {
                for _ in 0..n {
                    let p = G1Var::<Config>::new_variable_omit_prime_order_check(cs.clone(), || Ok(G1Projective::from(p1)), ark_r1cs_std::alloc::AllocationMode::Witness).unwrap();
                    let _ = G1PreparedVar::<Config>::from_group_var(&p).unwrap();
                }
            });
            (miller(3) - base(3)) - (miller(2) - base(2))
        }),
        ("Poseidon absorb of (A, B, C) and 2 of D, squeeze 128 bits", 1, {
            let cfg = poseidon_config::<Fq>();
            let sponge = |n: usize, sq: usize| count(|cs| {
                let mut s = PoseidonSpongeVar::new(cs.clone(), &cfg);
                let v: Vec<FpVar<Fq>> = (0..n).map(|_| FpVar::new_witness(cs.clone(), || Ok(Fq::rand(&mut rand::thread_rng()))).unwrap()).collect();
                s.absorb(&v).unwrap();
                let _ = s.squeeze_bits(sq).unwrap();
            });
            sponge(10 * 3, 128 * 3) - sponge(10 * 2, 128 * 2)
        }),
    ];
    let (c4, s4) = wrap_constraints(4);
    let (c8, s8) = wrap_constraints(8);
    println!("| gadget (BLS12-381 in BW6-767) | times per subcircuit | constraints each |");
    println!("|---|---|---|");
    for (name, times, n) in &rows {
        println!("| {name} | {times} | {n} |");
    }
    println!();
    println!("wrap circuit: k = 4: {c4} constraints ({s4} key shapes); k = 8: {c8} ({s8} key shapes); marginal per subcircuit {:.0}", (c8 - c4) as f64 / 4.0);
}
