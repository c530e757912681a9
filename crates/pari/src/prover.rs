//! The prover (zero-knowledge; see the crate doc for the blinding).

use ark_ec::pairing::Pairing;
use ark_ec::CurveGroup;
use ark_ff::{AdditiveGroup, FftField, Field, UniformRand, Zero};
use ark_relations::gr1cs::ConstraintSynthesizer;
use rand::{CryptoRng, RngCore};
#[cfg(feature = "parallel")]
use rayon::prelude::*;

use crate::data_structures::{Proof, ProvingKey};
use crate::interrupt::Interrupt;
use crate::domain::Domain;
use crate::msm::{msm, Accumulation, Pippenger};
use crate::profile::Profile;
use crate::r1cs::synthesize_assignment;
use crate::transcript::{digest_of, Transcript};
use crate::Error;

pub mod baseline;

/// Evaluates `f` at `r` (Horner).
pub fn evaluate<F: Field>(f: &[F], r: F) -> F {
    f.iter().rev().fold(F::zero(), |acc, c| acc * r + c)
}

/// Divides `f` by `(X − r)`: returns the quotient `(f − f(r))/(X − r)` and `f(r)`, in `O(deg f)`
/// (synthetic division).
pub fn divide_by_linear<F: Field>(f: &[F], r: F) -> (Vec<F>, F) {
    if f.is_empty() {
        return (Vec::new(), F::zero());
    }
    let mut q = vec![F::zero(); f.len() - 1];
    let mut acc = F::zero();
    for k in (0..f.len()).rev() {
        acc = acc * r + f[k];
        if k > 0 {
            q[k - 1] = acc;
        }
    }
    (q, acc)
}

/// The prover's two MSMs (full-width scalars, tens of thousands of points and up) over the
/// concatenation of `parts` (the proving key's vectors, never copied): the signed-digit
/// [`Pippenger`] with batch-affine buckets where the curve has that path (BN254, BLS12-381 and
/// BW6-767 G1), which measured 1.3× faster than arkworks' MSM at 61k and 98k BN254 points
/// (`pari_bench --prove-logs`, and the circom bench's prove times), and projective buckets
/// elsewhere; arkworks' MSM below [`Pippenger::BATCH_AFFINE_MIN`] points. The scalars'
/// recoding and the bucket work are timed as `name[0]` and `name[1]`.
fn prover_msm_parts<E: Pairing>(
    parts: &[&Vec<E::G1Affine>],
    scalars: &[E::ScalarField],
    stop: Interrupt<'_>,
    profile: &mut Profile,
    name: [&'static str; 2],
) -> Result<E::G1, Error> {
    let n: usize = parts.iter().map(|p| p.len()).sum();
    debug_assert_eq!(n, scalars.len());
    stop.check()?;
    if n < Pippenger::BATCH_AFFINE_MIN {
        let bases: Vec<E::G1Affine> = parts.iter().flat_map(|p| p.iter()).copied().collect();
        return Ok(profile.time(name[1], || msm::<E::G1>(&bases, scalars)));
    }
    let p = profile.time(name[0], || Pippenger::from_field(scalars, Accumulation::BatchAffine));
    profile.time(name[1], || p.run_parts_until::<E::G1>(parts, stop))
}

/// Proves that `circuit`'s assignment satisfies the circuit keyed by `pk`.
pub fn prove<E, C, R>(pk: &ProvingKey<E>, circuit: C, rng: &mut R) -> Result<Proof<E>, Error>
where
    E: Pairing,
    C: ConstraintSynthesizer<E::ScalarField>,
    R: RngCore + CryptoRng,
{
    prove_interruptible(pk, circuit, rng, Interrupt::NEVER)
}

/// [`prove`], stopped with [`Error::Interrupted`] at the first of its steps after `stop` is raised
/// (see [`crate::interrupt`]).
pub fn prove_interruptible<E, C, R>(pk: &ProvingKey<E>, circuit: C, rng: &mut R, stop: Interrupt<'_>) -> Result<Proof<E>, Error>
where
    E: Pairing,
    C: ConstraintSynthesizer<E::ScalarField>,
    R: RngCore + CryptoRng,
{
    prove_profiled(pk, circuit, rng, stop, &mut Profile::new())
}

/// [`prove`], with the time of each of its phases (synthesis, the SR1CS witness and matrix
/// products, each transform, each MSM): see [`Profile`].
pub fn prove_with_profile<E, C, R>(pk: &ProvingKey<E>, circuit: C, rng: &mut R) -> Result<(Proof<E>, Profile), Error>
where
    E: Pairing,
    C: ConstraintSynthesizer<E::ScalarField>,
    R: RngCore + CryptoRng,
{
    let mut profile = Profile::new();
    let proof = prove_profiled(pk, circuit, rng, Interrupt::NEVER, &mut profile)?;
    Ok((proof, profile))
}

fn prove_profiled<E, C, R>(pk: &ProvingKey<E>, circuit: C, rng: &mut R, stop: Interrupt<'_>, profile: &mut Profile) -> Result<Proof<E>, Error>
where
    E: Pairing,
    C: ConstraintSynthesizer<E::ScalarField>,
    R: RngCore + CryptoRng,
{
    stop.check()?;
    let (instance, witness) = profile.time("synthesis", || synthesize_assignment::<E::ScalarField, C>(circuit))?;
    prove_inner(pk, &instance, &witness, rng, true, stop, profile)
}

/// [`prove`] from an R1CS assignment: `instance` with its leading 1, and the witness.
pub fn prove_with_assignment<E: Pairing, R: RngCore + CryptoRng>(
    pk: &ProvingKey<E>,
    instance: &[E::ScalarField],
    witness: &[E::ScalarField],
    rng: &mut R,
) -> Result<Proof<E>, Error> {
    prove_inner(pk, instance, witness, rng, true, Interrupt::NEVER, &mut Profile::new())
}

/// The prover; `check` = false skips the satisfiability check (only for soundness tests,
/// which play a cheating prover).
fn prove_inner<E: Pairing, R: RngCore + CryptoRng>(
    pk: &ProvingKey<E>,
    instance: &[E::ScalarField],
    witness: &[E::ScalarField],
    rng: &mut R,
    check: bool,
    stop: Interrupt<'_>,
    profile: &mut Profile,
) -> Result<Proof<E>, Error> {
    type F<E> = <E as Pairing>::ScalarField;
    stop.check()?;
    let sr = &pk.sr1cs;
    let l = sr.num_instance as usize;
    if instance.len() != l || witness.len() != sr.r1cs_witness as usize {
        return Err(Error::KeyMismatch(format!(
            "the circuit has {} public inputs and {} witnesses, the key expects {} and {}",
            instance.len().saturating_sub(1),
            witness.len(),
            l - 1,
            sr.r1cs_witness
        )));
    }
    if instance[0] != F::<E>::ONE {
        return Err(Error::PublicInput("the first instance variable must be 1".into()));
    }
    let (sr_witness, z) = profile.time("SR1CS witness", || {
        let sr_witness = sr.witness(instance, witness);
        let mut z = instance.to_vec();
        z.extend_from_slice(&sr_witness);
        (sr_witness, z)
    });

    let domain = Domain::<F<E>>::new(pk.vk.domain_size as usize).ok_or(Error::DomainTooLarge)?;
    let n = domain.size();
    // Evaluations on K: w_A (witness part of A·z), z_B = w_B, and the instance part x_A, which
    // is nonzero only in the outlined rows (kept sparse).
    let (mut wa, xa, mut zb) = profile.time("A·z, B·z", || {
        let mut wa = vec![F::<E>::zero(); n];
        let mut zb = vec![F::<E>::zero(); n];
        let mut xa: Vec<(usize, F<E>)> = Vec::new();
        for j in 0..sr.num_rows() {
            let mut x = F::<E>::zero();
            for (c, i) in sr.a.row(j) {
                if i < l {
                    x += c * z[i];
                } else {
                    wa[j] += c * z[i];
                }
            }
            zb[j] = sr.b.eval(j, &z);
            if !x.is_zero() {
                xa.push((j, x));
            }
            if check && (wa[j] + x).square() != zb[j] {
                return Err(Error::Unsatisfied(j));
            }
        }
        Ok((wa, xa, zb))
    })?;
    // Coefficients: w_A and z_B by inverse transforms, z_A = w_A + x_A with x_A's coefficients
    // straight from its few evaluations.
    stop.check()?;
    profile.time("iFFT w_A", || domain.ifft_in_place(&mut wa));
    let za = profile.time("x_A coefficients (sparse)", || {
        let mut za = wa.clone();
        domain.add_sparse_ifft(&mut za, &xa);
        za
    });
    stop.check()?;
    profile.time("iFFT z_B", || domain.ifft_in_place(&mut zb));
    // q = (z_A² − z_B)/v_K (degree ≤ n − 2). Write z_A² = l + X^n·h with deg l < n; on the coset
    // gK, where X^n is the constant c = g^n, z_A² agrees with l + c·h, which the coset iFFT of
    // z_A²'s evaluations there returns. Since z_A² ≡ l + h ≡ z_B mod v_K, q = h =
    // (l + c·h − z_B)/(c − 1): two transforms, where evaluating z_B on the coset too took three.
    // (The same q as before whether or not the constraints hold: the coset iFFT is linear and
    // returns z_B from z_B's coset evaluations.)
    stop.check()?;
    let mut za_c = profile.time("coset FFT z_A", || domain.coset_fft(F::<E>::GENERATOR, &za));
    stop.check()?;
    profile.time("z_A² on the coset", || ark_std::cfg_iter_mut!(za_c).for_each(|a| {
        a.square_in_place();
    }));
    let mut q = profile.time("coset iFFT z_A²", || domain.coset_ifft(F::<E>::GENERATOR, &za_c));
    drop(za_c);
    profile.time("quotient", || {
        let c_minus_1_inv = (F::<E>::GENERATOR.pow([n as u64]) - F::<E>::ONE).inverse().expect("g^n ≠ 1");
        ark_std::cfg_iter_mut!(q).zip(ark_std::cfg_iter!(zb)).for_each(|(qk, bk)| *qk = (*qk - bk) * c_minus_1_inv);
    });

    // Blinding: w_A' = w_A + η_a v_K, w_B' = w_B + (η_b + η_b' X) v_K,
    // q' = q + 2 η_a z_A + η_a² v_K − (η_b + η_b' X), so that z_A'² − z_B' = q' v_K.
    let (eta_a, eta_b, eta_b2) = (F::<E>::rand(rng), F::<E>::rand(rng), F::<E>::rand(rng));
    let (wa_b, wb_b, q_b) = profile.time("blinding", || {
        let mut wa_b = wa;
        wa_b.resize(n + 1, F::<E>::zero());
        wa_b[0] -= eta_a;
        wa_b[n] += eta_a;
        let mut wb_b = zb;
        wb_b.resize(n + 2, F::<E>::zero());
        wb_b[0] -= eta_b;
        wb_b[1] -= eta_b2;
        wb_b[n] += eta_b;
        wb_b[n + 1] += eta_b2;
        let mut q_b = q;
        q_b.resize(n + 1, F::<E>::zero());
        let two_eta_a = eta_a.double();
        for (qk, zk) in q_b.iter_mut().zip(&za) {
            *qk += two_eta_a * zk;
        }
        let eta_a_sq = eta_a.square();
        q_b[0] -= eta_a_sq + eta_b;
        q_b[n] += eta_a_sq;
        q_b[1] -= eta_b2;
        (wa_b, wb_b, q_b)
    });

    // T = −[(α w_A'(τ) + β w_B'(τ) + q'(τ))/δ]G.
    // One MSM over σ ‖ σ_q ‖ zk terms (one large Pippenger beats several small ones).
    let zk = vec![pk.zk_a, pk.zk_b, pk.zk_b_tau];
    let t_scalars = [&sr_witness[..], &q_b[..], &[eta_a, eta_b, eta_b2][..]].concat();
    let t_pos = prover_msm_parts::<E>(&[&pk.sigma, &pk.sigma_q, &zk], &t_scalars, stop, profile, ["MSM T (scalars)", "MSM T (buckets)"])?;
    let t = (-t_pos).into_affine();

    let u_scalars = profile.time("challenge, opening quotients", || {
        let transcript = Transcript::new(&digest_of(&pk.vk.to_bytes()));
        let r = transcript.challenge::<E>(&instance[1..], &t);
        let (qa, v_a) = divide_by_linear(&wa_b, r);
        let (qb, v_b) = divide_by_linear(&wb_b, r);
        let (qq, _v_q) = divide_by_linear(&q_b, r);
        // U = MSM(σ_a, ŵ_A quotient) + MSM(σ_b, ŵ_B quotient) + MSM(σ_1, q quotient), as one MSM.
        let mut u_scalars = vec![F::<E>::zero(); 3 * (n + 1)];
        u_scalars[..qa.len()].copy_from_slice(&qa);
        u_scalars[n + 1..n + 1 + qb.len()].copy_from_slice(&qb);
        u_scalars[2 * (n + 1)..2 * (n + 1) + qq.len()].copy_from_slice(&qq);
        (u_scalars, v_a, v_b)
    });
    let (u_scalars, v_a, v_b) = u_scalars;
    let u = prover_msm_parts::<E>(&[&pk.sigma_a, &pk.sigma_b, &pk.sigma_1], &u_scalars, stop, profile, ["MSM U (scalars)", "MSM U (buckets)"])?;
    Ok(Proof { t, u: u.into_affine(), v_a, v_b })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ark_bls12_381::Fr;

    /// A cheating prover that ignores an unsatisfied constraint gets no verifying proof: the
    /// quotient it commits to is not `(z_A² − z_B)/v_K`.
    #[test]
    fn unsatisfied_witness_gives_no_valid_proof() {
        use crate::circuits::CircuitFamily;
        use crate::r1cs::synthesize_assignment;
        use rand::SeedableRng;
        type E = ark_bls12_381::Bls12_381;
        let family = CircuitFamily::Chain { steps: 6 };
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(5);
        let (pk, vk) = crate::setup::<E, _, _>(family.blank::<Fr>(), &mut rng).unwrap();
        let (circuit, x) = family.instance::<Fr>(1);
        let (instance, mut witness) = synthesize_assignment::<Fr, _>(circuit).unwrap();
        assert!(prove_inner(&pk, &instance, &witness, &mut rng, false, Interrupt::NEVER, &mut Profile::new()).is_ok());
        witness[2] += Fr::from(1u64);
        assert!(matches!(prove_with_assignment(&pk, &instance, &witness, &mut rng), Err(Error::Unsatisfied(_))));
        let forged = prove_inner(&pk, &instance, &witness, &mut rng, false, Interrupt::NEVER, &mut Profile::new()).unwrap();
        assert!(crate::verify(&vk.prepare().unwrap(), &x, &forged).is_err());
    }

    /// The prover reads its caller's flag between steps and before each MSM window, and stops at
    /// whichever read first finds it raised: raised at the k-th read, for every k up to the
    /// number of reads a whole prove makes, the prove ends with `Interrupted`. A flag never
    /// raised changes nothing: the proof verifies.
    #[test]
    fn a_raised_interrupt_stops_the_prove_at_any_of_its_reads() {
        use crate::circuits::CircuitFamily;
        use rand::SeedableRng;
        use std::sync::atomic::{AtomicUsize, Ordering};
        type E = ark_bls12_381::Bls12_381;
        // Above Pippenger::BATCH_AFFINE_MIN points, so that both MSMs run by windows.
        let family = CircuitFamily::Chain { steps: 1500 };
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(8);
        let (pk, vk) = crate::setup::<E, _, _>(family.blank::<Fr>(), &mut rng).unwrap();
        let reads = AtomicUsize::new(0);
        let never = || {
            reads.fetch_add(1, Ordering::Relaxed);
            false
        };
        let (circuit, x) = family.instance::<Fr>(3);
        let proof = prove_interruptible(&pk, circuit, &mut rng, Interrupt::new(&never)).unwrap();
        crate::verify(&vk.prepare().unwrap(), &x, &proof).unwrap();
        let total = reads.load(Ordering::Relaxed);
        // 8 reads between the steps; the rest are the two MSMs' windows.
        assert!(total > 8 + 2 * 10, "{total} reads");
        for k in 1..=total {
            let reads = AtomicUsize::new(0);
            let raised_at_k = || reads.fetch_add(1, Ordering::Relaxed) + 1 >= k;
            let (circuit, _) = family.instance::<Fr>(3);
            let r = prove_interruptible(&pk, circuit, &mut rng, Interrupt::new(&raised_at_k));
            assert!(matches!(r, Err(Error::Interrupted)), "raised at read {k} of {total}: {r:?}");
        }
    }

    /// The prover and the prover as it was before issue 60 ([`baseline`]) make the same proof
    /// from the same randomness, on a radix-2 domain (BLS12-381) and a smooth one (BW6-767),
    /// with MSMs large enough for the bucket method.
    #[test]
    fn the_prover_before_issue_60_makes_the_same_proof() {
        use crate::circuits::CircuitFamily;
        use ark_crypto_primitives::sponge::Absorb;
        use rand::SeedableRng;
        fn same<E: Pairing>(steps: usize)
        where
            E::ScalarField: Absorb,
        {
            let family = CircuitFamily::Chain { steps };
            let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(11);
            let (pk, vk) = crate::setup::<E, _, _>(family.blank::<E::ScalarField>(), &mut rng).unwrap();
            let (circuit, x) = family.instance::<E::ScalarField>(2);
            let rng = || rand_chacha::ChaCha20Rng::seed_from_u64(12);
            let (now, profile) = prove_with_profile(&pk, circuit.clone(), &mut rng()).unwrap();
            let (before, _) = baseline::prove_with_profile(&pk, circuit, &mut rng()).unwrap();
            assert_eq!(now.to_bytes(), before.to_bytes());
            crate::verify(&vk.prepare().unwrap(), &x, &now).unwrap();
            assert!(profile.get("MSM U (buckets)").is_some() && profile.get("coset FFT z_A").is_some());
        }
        same::<ark_bls12_381::Bls12_381>(1500);
        same::<ark_bw6_767::BW6_767>(1100);
    }

    #[test]
    fn synthetic_division() {
        let f = [Fr::from(3u64), Fr::from(2u64), Fr::from(5u64)]; // 3 + 2X + 5X²
        let r = Fr::from(7u64);
        let (q, v) = divide_by_linear(&f, r);
        assert_eq!(v, evaluate(&f, r));
        // f(X) = q(X)(X − r) + f(r) at a random point.
        let x = Fr::from(11u64);
        assert_eq!(evaluate(&f, x), evaluate(&q, x) * (x - r) + v);
    }
}
