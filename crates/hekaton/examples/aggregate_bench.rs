//! The aggregation layer (paper §5.3, Fig. 6) against verifying the `k` Mirage proofs
//! themselves, in the same run.
//!
//! `cargo run --release -p hekaton --example aggregate_bench -- 8 64 1024 [4096]`
//!
//! For each `k`: `k` Mirage proofs of a small synthetic subcircuit whose public input is
//! Hekaton's `(rt, α, β)` plus the subcircuit index folded into its key (paper §6.3; two
//! shapes alternate, so there are two distinct Mirage keys and `k` distinct input bases, as
//! in a Hekaton layout). The subcircuit's size does not matter to aggregation: it sees only
//! `(D_i, A_i, B_i, C_i)`. Prints, per `k`: the aggregate's size (with `cm_D`) against the `k`
//! commitments and proofs, Agg.G, Agg.C, Agg.P and Agg.V times, and the baselines: Mirage
//! verification one proof at a time, and batched per key as [`hekaton::workflow::verify`]
//! does. Verification times are the best of several runs. Runs on whatever threads rayon
//! gets (arkworks' `parallel` feature).

use std::time::Instant;

use ark_bls12_381::{Bls12_381, Fr};
use ark_ff::UniformRand;
use ark_r1cs_std::alloc::AllocVar;
use ark_r1cs_std::eq::EqGadget;
use ark_r1cs_std::fields::fp::FpVar;
use ark_relations::gr1cs::{ConstraintSynthesizer, ConstraintSystemRef, SynthesisError};
use ark_serialize::{CanonicalSerialize, Compress};
use hekaton::aggregate::{self, srs::Srs};
use hekaton::mirage::{self, BatchItem};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

type E = Bls12_381;

/// Public input `(rt, α, β, i)`; committed `c`; `c·rt + α·β + i = out` (shape 1 adds
/// `c·c = sq`), so `c` sits in a constraint and the instance is used.
struct Synthetic {
    inputs: [Fr; 4],
    c: Fr,
    shape: usize,
}

impl ConstraintSynthesizer<Fr> for Synthetic {
    fn generate_constraints(self, cs: ConstraintSystemRef<Fr>) -> Result<(), SynthesisError> {
        let c = FpVar::new_witness(cs.clone(), || Ok(self.c))?;
        let x: Vec<FpVar<Fr>> = self
            .inputs
            .iter()
            .map(|v| FpVar::new_input(cs.clone(), || Ok(*v)))
            .collect::<Result<_, _>>()?;
        let out_val = self.c * self.inputs[0] + self.inputs[1] * self.inputs[2] + self.inputs[3];
        let out = FpVar::new_witness(cs.clone(), || Ok(out_val))?;
        out.enforce_equal(&(&c * &x[0] + &x[1] * &x[2] + &x[3]))?;
        if self.shape == 1 {
            let sq = FpVar::new_witness(cs.clone(), || Ok(self.c * self.c))?;
            sq.enforce_equal(&(&c * &c))?;
        }
        Ok(())
    }
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

fn best_of(runs: usize, mut f: impl FnMut()) -> f64 {
    (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            ms(t)
        })
        .fold(f64::INFINITY, f64::min)
}

fn size<T: CanonicalSerialize>(v: &T) -> usize {
    v.serialized_size(Compress::Yes)
}

fn main() {
    let ks: Vec<usize> = {
        let v: Vec<usize> = std::env::args()
            .skip(1)
            .map(|a| a.parse().expect("numeric k"))
            .collect();
        if v.is_empty() {
            vec![8, 64, 1024]
        } else {
            v
        }
    };
    let threads = rayon_threads();
    println!("aggregation of k Mirage proofs on BLS12-381, {threads} thread(s)");
    println!(
        "| k | aggregate (B) | k proofs + D (B) | Agg.G (ms) | Agg.C (ms) | Agg.P (ms) | Agg.P/proof (ms) | Agg.V (ms) | verify 1-by-1 (ms) | batched per key (ms) |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    let blank = |shape| Synthetic {
        inputs: [Fr::from(0u64); 4],
        c: Fr::from(0u64),
        shape,
    };
    let keys: Vec<_> = (0..2)
        .map(|s| mirage::setup::<E, _, _>(blank(s), 1, &mut rng).expect("setup"))
        .collect();
    for &k in &ks {
        let n = k.max(2).next_power_of_two();
        // SRS: 4n G1 and 2n G2 points; about 1.2 kB per n. Past 2^16 this bench takes
        // minutes on two cores: refuse rather than hang.
        if n > 1 << 16 {
            println!("| {k} | skipped: k > 65536 takes too long for this bench |");
            continue;
        }
        let (rt, a, b) = (Fr::rand(&mut rng), Fr::rand(&mut rng), Fr::rand(&mut rng));
        let shape_of = |i: usize| i % 2;
        let sub_vks: Vec<_> = (0..k)
            .map(|i| {
                keys[shape_of(i)]
                    .1
                    .fix_trailing_inputs(&[Fr::from(i as u64)])
                    .unwrap()
            })
            .collect();
        let mut commitments = Vec::with_capacity(k);
        let mut proofs = Vec::with_capacity(k);
        for i in 0..k {
            let pk = &keys[shape_of(i)].0;
            let c = Fr::rand(&mut rng);
            let (d, kappa) = mirage::commit(pk, &[c], &mut rng).unwrap();
            let circuit = Synthetic {
                inputs: [rt, a, b, Fr::from(i as u64)],
                c,
                shape: shape_of(i),
            };
            proofs.push(mirage::prove(pk, circuit, &d, &kappa, &mut rng).unwrap());
            commitments.push(d);
        }
        let x = [rt, a, b];

        let t = Instant::now();
        let srs = Srs::<E>::setup(n, &mut rng);
        let (apk, avk) = aggregate::setup(&srs, &sub_vks, [0u8; 32]).unwrap();
        let t_setup = ms(t);
        let t = Instant::now();
        let cm_d = aggregate::commit(&apk, &commitments).unwrap();
        let t_commit = ms(t);
        let t = Instant::now();
        let proof = aggregate::prove(&apk, &x, &commitments, &proofs, &cm_d).unwrap();
        let t_prove = ms(t);
        let t_verify = best_of(5, || aggregate::verify(&avk, &x, &cm_d, &proof).unwrap());

        let t_one = best_of(2, || {
            for i in 0..k {
                mirage::verify(&sub_vks[i], &x, &commitments[i], &proofs[i]).unwrap();
            }
        });
        // Batched per shape key, the fixed input i as a public input (as workflow::verify).
        let inputs: Vec<[Fr; 4]> = (0..k).map(|i| [rt, a, b, Fr::from(i as u64)]).collect();
        let t_batch = best_of(2, || {
            for (s, (_, shape_vk)) in keys.iter().enumerate() {
                let items: Vec<BatchItem<'_, E>> = (0..k)
                    .filter(|i| shape_of(*i) == s)
                    .map(|i| BatchItem {
                        public_inputs: &inputs[i],
                        commitment: &commitments[i],
                        proof: &proofs[i],
                    })
                    .collect();
                if !items.is_empty() {
                    mirage::batch_verify(shape_vk, &items, &mut ChaCha20Rng::seed_from_u64(9))
                        .unwrap();
                }
            }
        });
        let agg_bytes = size(&proof) + size(&cm_d);
        let k_bytes = size(&proofs) + size(&commitments);
        println!(
            "| {k} | {agg_bytes} | {k_bytes} | {t_setup:.0} | {t_commit:.0} | {t_prove:.0} | {:.2} | {t_verify:.1} | {t_one:.1} | {t_batch:.1} |",
            t_prove / k as f64
        );
    }
}

fn rayon_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}
