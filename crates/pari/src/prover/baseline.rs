//! The prover as it was before issue 60 (six transforms over the domain, direct DFT butterflies,
//! projective MSM buckets on BW6-767), kept so that `examples/prove_profile.rs` measures before
//! and after in the same run. Same proofs in distribution; not for production use.

use ark_ec::pairing::Pairing;
use ark_ec::CurveGroup;
use ark_ff::{AdditiveGroup, FftField, Field, UniformRand, Zero};
use ark_relations::gr1cs::ConstraintSynthesizer;
use rand::{CryptoRng, RngCore};

use super::divide_by_linear;
use crate::data_structures::{Proof, ProvingKey};
use crate::domain::Domain;
use crate::msm::{msm, Accumulation, Pippenger};
use crate::profile::Profile;
use crate::r1cs::synthesize_assignment;
use crate::transcript::{digest_of, Transcript};
use crate::Error;

/// The MSMs before issue 60: batch-affine only on BLS12-381 and BN254 G1 (after copying the
/// key's vectors into one), projective buckets over the key's vectors elsewhere.
fn prover_msm_parts<E: Pairing>(
    parts: &[&Vec<E::G1Affine>],
    scalars: &[E::ScalarField],
    profile: &mut Profile,
    name: [&'static str; 2],
) -> E::G1 {
    use std::any::TypeId;
    let n: usize = parts.iter().map(|p| p.len()).sum();
    let t = TypeId::of::<E::G1>();
    let fast = t == TypeId::of::<ark_bls12_381::G1Projective>() || t == TypeId::of::<ark_bn254::G1Projective>();
    if n < Pippenger::BATCH_AFFINE_MIN || fast {
        let bases: Vec<E::G1Affine> = parts.iter().flat_map(|p| p.iter()).copied().collect();
        if n < Pippenger::BATCH_AFFINE_MIN {
            return profile.time(name[1], || msm::<E::G1>(&bases, scalars));
        }
        let p = profile.time(name[0], || Pippenger::from_field(scalars, Accumulation::BatchAffine));
        return profile.time(name[1], || p.run::<E::G1>(&bases));
    }
    let p = profile.time(name[0], || Pippenger::from_field(scalars, Accumulation::Projective));
    profile.time(name[1], || p.run_parts::<E::G1>(parts))
}

/// [`crate::prover::prove_with_profile`] by the code before issue 60.
pub fn prove_with_profile<E, C, R>(pk: &ProvingKey<E>, circuit: C, rng: &mut R) -> Result<(Proof<E>, Profile), Error>
where
    E: Pairing,
    C: ConstraintSynthesizer<E::ScalarField>,
    R: RngCore + CryptoRng,
{
    let mut profile = Profile::new();
    let (instance, witness) = profile.time("synthesis", || synthesize_assignment::<E::ScalarField, C>(circuit))?;
    let proof = prove_inner(pk, &instance, &witness, rng, &mut profile)?;
    Ok((proof, profile))
}

fn prove_inner<E: Pairing, R: RngCore + CryptoRng>(
    pk: &ProvingKey<E>,
    instance: &[E::ScalarField],
    witness: &[E::ScalarField],
    rng: &mut R,
    profile: &mut Profile,
) -> Result<Proof<E>, Error> {
    type F<E> = <E as Pairing>::ScalarField;
    let sr = &pk.sr1cs;
    let l = sr.num_instance as usize;
    if instance.len() != l || witness.len() != sr.r1cs_witness as usize {
        return Err(Error::KeyMismatch("the circuit does not match the key".into()));
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

    let domain = Domain::<F<E>>::new(pk.vk.domain_size as usize).ok_or(Error::DomainTooLarge)?.baseline();
    let n = domain.size();
    let (mut wa, mut xa, mut zb) = profile.time("A·z, B·z", || {
        let mut wa = vec![F::<E>::zero(); n];
        let mut xa = vec![F::<E>::zero(); n];
        let mut zb = vec![F::<E>::zero(); n];
        for j in 0..sr.num_rows() {
            for (c, i) in sr.a.row(j) {
                if i < l {
                    xa[j] += c * z[i];
                } else {
                    wa[j] += c * z[i];
                }
            }
            zb[j] = sr.b.eval(j, &z);
            let za = wa[j] + xa[j];
            if za.square() != zb[j] {
                return Err(Error::Unsatisfied(j));
            }
        }
        Ok((wa, xa, zb))
    })?;
    profile.time("iFFT w_A", || domain.ifft_in_place(&mut wa));
    profile.time("iFFT x_A", || domain.ifft_in_place(&mut xa));
    profile.time("iFFT z_B", || domain.ifft_in_place(&mut zb));
    let za: Vec<F<E>> = wa.iter().zip(&xa).map(|(w, x)| *w + x).collect();
    let mut za_c = profile.time("coset FFT z_A", || domain.coset_fft(F::<E>::GENERATOR, &za));
    let zb_c = profile.time("coset FFT z_B", || domain.coset_fft(F::<E>::GENERATOR, &zb));
    profile.time("quotient on the coset", || {
        let vk_inv = (F::<E>::GENERATOR.pow([n as u64]) - F::<E>::ONE).inverse().expect("g^n ≠ 1");
        for (a, b) in za_c.iter_mut().zip(&zb_c) {
            *a = (a.square() - b) * vk_inv;
        }
    });
    let q = profile.time("coset iFFT q", || domain.coset_ifft(F::<E>::GENERATOR, &za_c));

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

    let zk = vec![pk.zk_a, pk.zk_b, pk.zk_b_tau];
    let t_scalars = [&sr_witness[..], &q_b[..], &[eta_a, eta_b, eta_b2][..]].concat();
    let t_pos = prover_msm_parts::<E>(&[&pk.sigma, &pk.sigma_q, &zk], &t_scalars, profile, ["MSM T (scalars)", "MSM T (buckets)"]);
    let t = (-t_pos).into_affine();

    let (u_scalars, v_a, v_b) = profile.time("challenge, opening quotients", || {
        let transcript = Transcript::new(&digest_of(&pk.vk.to_bytes()));
        let r = transcript.challenge::<E>(&instance[1..], &t);
        let (qa, v_a) = divide_by_linear(&wa_b, r);
        let (qb, v_b) = divide_by_linear(&wb_b, r);
        let (qq, _v_q) = divide_by_linear(&q_b, r);
        let mut u_scalars = vec![F::<E>::zero(); 3 * (n + 1)];
        u_scalars[..qa.len()].copy_from_slice(&qa);
        u_scalars[n + 1..n + 1 + qb.len()].copy_from_slice(&qb);
        u_scalars[2 * (n + 1)..2 * (n + 1) + qq.len()].copy_from_slice(&qq);
        (u_scalars, v_a, v_b)
    });
    let u = prover_msm_parts::<E>(&[&pk.sigma_a, &pk.sigma_b, &pk.sigma_1], &u_scalars, profile, ["MSM U (scalars)", "MSM U (buckets)"]);
    Ok(Proof { t, u: u.into_affine(), v_a, v_b })
}
