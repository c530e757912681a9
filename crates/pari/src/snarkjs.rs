//! An export of keys, proofs and public inputs in snarkjs's JSON conventions, for tools that
//! read snarkjs files: every number a decimal string; a G1 point `[x, y, "1"]` (projective
//! with `z = 1`; the point at infinity `["0", "1", "0"]`); a G2 point `[[x0, x1], [y0, y1],
//! ["1", "0"]]` over `F_{q^2} = F_q[u]` (`x = x0 + x1·u`); public signals a list of decimal
//! strings; `curve` is snarkjs's name (`bn128`, `bls12381`); `protocol` is `"pari"`.
//!
//! The verifying key lists `G, αG, βG` (`vk_g`, `vk_alpha_g`, `vk_beta_g`), `H, δH, τH`
//! (`vk_h`, `vk_delta_h`, `vk_tau_h`), the domain size `n`, `nPublic = L − 1` and the row of the
//! first instance variable, plus `vkDigest` (what a verifier pins). A proof lists `T, U`
//! (`t`, `u`) and the two evaluations `v_a, v_b`. This is an export only: snarkjs has no Pari
//! verifier, and verification here reads the binary files.

use ark_ec::pairing::Pairing;
use ark_ec::AffineRepr;
use ark_ff::{AdditiveGroup, Field, PrimeField};

use crate::{Proof, VerifyingKey};

/// A point in snarkjs's form: G1 (`[x, y, z]`) or G2 (`[[x0, x1], [y0, y1], [z0, z1]]`).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(untagged)]
pub enum Point {
    G1(Vec<String>),
    G2(Vec<Vec<String>>),
}

fn coords<F: Field>(x: &F) -> Vec<String> {
    x.to_base_prime_field_elements().map(|e| e.into_bigint().to_string()).collect()
}

/// A point in snarkjs's form (G1 over a prime field, G2 over its quadratic extension).
pub fn point<A: AffineRepr>(p: &A) -> Point {
    let (x, y, z) = match p.xy() {
        Some((x, y)) => (coords(&x), coords(&y), coords(&A::BaseField::ONE)),
        None => (coords(&A::BaseField::ZERO), coords(&A::BaseField::ONE), coords(&A::BaseField::ZERO)),
    };
    if x.len() == 1 {
        Point::G1(vec![x[0].clone(), y[0].clone(), z[0].clone()])
    } else {
        Point::G2(vec![x, y, z])
    }
}

/// A scalar as a decimal string.
pub fn scalar<F: PrimeField>(x: &F) -> String {
    x.into_bigint().to_string()
}

/// snarkjs's name of the curve whose scalar field is `F` (by its modulus' size).
pub fn curve_name<E: Pairing>() -> &'static str {
    match <E::ScalarField as PrimeField>::MODULUS_BIT_SIZE {
        254 => "bn128",
        255 => "bls12381",
        _ => "unknown",
    }
}

/// `verification_key.json`.
#[derive(Clone, Debug, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub struct VerificationKeyJson {
    pub protocol: &'static str,
    pub curve: &'static str,
    #[serde(rename = "nPublic")]
    pub n_public: u64,
    #[serde(rename = "domainSize")]
    pub domain_size: u64,
    #[serde(rename = "instanceRowStart")]
    pub instance_row_start: u64,
    #[serde(rename = "vkDigest")]
    pub vk_digest: String,
    pub vk_g: Point,
    pub vk_alpha_g: Point,
    pub vk_beta_g: Point,
    pub vk_h: Point,
    pub vk_delta_h: Point,
    pub vk_tau_h: Point,
}

pub fn verification_key<E: Pairing>(vk: &VerifyingKey<E>) -> VerificationKeyJson {
    VerificationKeyJson {
        protocol: "pari",
        curve: curve_name::<E>(),
        n_public: vk.num_instance.saturating_sub(1),
        domain_size: vk.domain_size,
        instance_row_start: vk.instance_row_start,
        vk_digest: vk.digest().to_string(),
        vk_g: point(&vk.g),
        vk_alpha_g: point(&vk.alpha_g),
        vk_beta_g: point(&vk.beta_g),
        vk_h: point(&vk.h),
        vk_delta_h: point(&vk.delta_h),
        vk_tau_h: point(&vk.tau_h),
    }
}

/// `proof.json`.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ProofJson {
    pub protocol: &'static str,
    pub curve: &'static str,
    pub t: Point,
    pub u: Point,
    pub v_a: String,
    pub v_b: String,
}

pub fn proof<E: Pairing>(p: &Proof<E>) -> ProofJson {
    ProofJson { protocol: "pari", curve: curve_name::<E>(), t: point(&p.t), u: point(&p.u), v_a: scalar(&p.v_a), v_b: scalar(&p.v_b) }
}

/// `public.json`.
pub fn public<F: PrimeField>(x: &[F]) -> Vec<String> {
    x.iter().map(scalar).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ark_ec::CurveGroup;
    use ark_std::UniformRand;
    use std::str::FromStr;

    /// The decimal coordinates name the point: parsed back, they give it again.
    #[test]
    fn points_round_trip_through_their_decimal_coordinates() {
        let mut rng = ark_std::test_rng();
        let p = (ark_bn254::G1Affine::generator() * ark_bn254::Fr::rand(&mut rng)).into_affine();
        let Point::G1(c) = point(&p) else { panic!("G1 exported as G2") };
        assert_eq!(c[2], "1");
        let back = ark_bn254::G1Affine::new(ark_bn254::Fq::from_str(&c[0]).unwrap(), ark_bn254::Fq::from_str(&c[1]).unwrap());
        assert_eq!(back, p);
        let q = (ark_bn254::G2Affine::generator() * ark_bn254::Fr::rand(&mut rng)).into_affine();
        let Point::G2(c) = point(&q) else { panic!("G2 exported as G1") };
        let fq2 = |v: &[String]| ark_bn254::Fq2::new(ark_bn254::Fq::from_str(&v[0]).unwrap(), ark_bn254::Fq::from_str(&v[1]).unwrap());
        assert_eq!(c[2], vec!["1".to_string(), "0".to_string()]);
        assert_eq!(ark_bn254::G2Affine::new(fq2(&c[0]), fq2(&c[1])), q);
        assert_eq!(point(&ark_bn254::G1Affine::zero()), Point::G1(vec!["0".into(), "1".into(), "0".into()]));
        assert_eq!(curve_name::<ark_bn254::Bn254>(), "bn128");
        assert_eq!(curve_name::<ark_bls12_381::Bls12_381>(), "bls12381");
    }
}
