//! Constraint counts behind `docs/design/testudo-compression.md`: what verifying a Testudo
//! proof (Spartan + Testudo-Comm on BLS12-381) costs as R1CS over `F_q` (BLS12-381's base
//! field, the scalar field of BW6-767), measured with ark-r1cs-std and ark-relations. A
//! measurement, not the compression circuit.
//!
//! `cargo run --release -p testudo --example compression_constraints -- 10 14`
//!
//! 1. **The scalar half over `F_q`** (measured on a real proof at each size `k`): the crate's
//!    transcript gadget ([`testudo::transcript::constraints`]) replaying every absorb and
//!    squeeze of `spartan::verify` and `TestudoComm::verify` (group elements as coordinate
//!    witnesses, without their on-curve and subgroup checks, which belong to the group part;
//!    `F_r` values emulated and absorbed as canonical integers; challenges squeezed in the
//!    circuit), then both sumchecks, the outer and inner final checks (with `M(r_x, r_y)`
//!    supplied as a witness: what replaces the matrices is a separate cost), `ũ(r_y')`, and
//!    the scalars the group checks need (`x_k⁻¹`, `ŷ`, `f(ρ)`), all with `F_r` emulated and
//!    the challenges the circuit squeezed. It must be satisfied by the honest proof and not by
//!    one with a tampered sumcheck round.
//! 2. **Unit costs over `F_q`**: the transcript gadget's operations, one emulated `F_r`
//!    multiplication, a Poseidon permutation (width 3, `x^5`, 8 + 57 rounds), a 255-bit
//!    variable-scalar multiplication in G1 and in G2, a `G_T` exponentiation by a 255-bit
//!    variable exponent and the MIPP fold's two-exponent form with cyclotomic squarings, an
//!    exponentiation by the BLS parameter `u`, the Miller loop per pair (variable or constant
//!    G2 side), and a final exponentiation (ark-r1cs-std's BLS12 gadgets, as `hekaton::wrap`
//!    uses them).

use ark_bls12_381::{Bls12_381, Config, Fq, Fr, G1Projective, G2Projective};
use ark_crypto_primitives::sponge::constraints::CryptographicSpongeVar;
use ark_crypto_primitives::sponge::poseidon::constraints::PoseidonSpongeVar;
use ark_ec::pairing::Pairing;
use ark_ec::{CurveGroup, PrimeGroup};
use ark_ff::{BigInteger, Field, One, PrimeField, UniformRand};
use ark_r1cs_std::alloc::AllocVar;
use ark_r1cs_std::boolean::Boolean;
use ark_r1cs_std::eq::EqGadget;
use ark_r1cs_std::fields::emulated_fp::EmulatedFpVar;
use ark_r1cs_std::fields::fp::FpVar;
use ark_r1cs_std::fields::fp12::Fp12Var;
use ark_r1cs_std::fields::FieldVar;
use ark_r1cs_std::groups::bls12::{G1Var, G2Var};
use ark_r1cs_std::groups::CurveVar;
use ark_r1cs_std::pairing::bls12::PairingVar;
use ark_r1cs_std::pairing::PairingVar as _;
use ark_r1cs_std::GR1CSVar;
use ark_relations::gr1cs::{
    ConstraintSystem, ConstraintSystemRef, OptimizationGoal, SynthesisError,
};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use testudo::poly::eq_table;
use testudo::spartan::constraints::{
    verify as spartan_gadget_verify, PublicValuesVar, SpartanProofVar, SpartanShape,
};
use testudo::spartan::PublicValues;
use testudo::spartan::DOMAIN_TAG;
use testudo::testudo_comm::{self, TestudoComm};
use testudo::transcript::constraints::TranscriptVar;
use testudo::transcript::{bytes_to_elements, poseidon_config};
use testudo::{prove, verify, ProofFor, R1cs};

type Tc = TestudoComm<Bls12_381>;
type Proof = ProofFor<Fr, Tc>;

fn new_cs<F: PrimeField>() -> ConstraintSystemRef<F> {
    let cs = ConstraintSystem::<F>::new_ref();
    cs.set_optimization_goal(OptimizationGoal::Constraints);
    cs
}

mod common;

// ---------------------------------------------------------------------------------------
// The arithmetic of the verifier, generic over native (`FpVar<F_r>`) and emulated
// (`EmulatedFpVar<F_r, F_q>`) field variables.

/// The values the arithmetic consumes, as variables of one kind.
struct Vars<V> {
    tau: Vec<V>,
    outer: Vec<Vec<V>>,
    r_x: Vec<V>,
    v: [V; 3],
    rho: [V; 3],
    inner: Vec<Vec<V>>,
    r_y: Vec<V>,
    v_w: V,
    io: Vec<V>,
    /// `M(r_x, r_y) = Σ ρ_M·M̃(r_x, r_y)`, supplied (see the module doc).
    m_eval: V,
    /// The MIPP challenges `x_k` and the G2-opening point `ρ` of Testudo-Comm.
    mipp_x: Vec<V>,
    mipp_rho: Vec<V>,
}

/// `p(x)` from `p(0), …, p(d)` (Lagrange over the nodes `0 … d`, as `sumcheck::interpolate`).
fn interpolate<CF: PrimeField, V: FieldVar<Fr, CF>>(
    evals: &[V],
    x: &V,
) -> Result<V, SynthesisError> {
    let n = evals.len();
    let diffs: Vec<V> = (0..n).map(|j| x.clone() - Fr::from(j as u64)).collect();
    // prefix[i] = Π_{j<i} (x − j), suffix[i] = Π_{j>i} (x − j)
    let mut prefix = vec![V::one(); n];
    for i in 1..n {
        prefix[i] = if i == 1 {
            diffs[0].clone()
        } else {
            prefix[i - 1].clone() * &diffs[i - 1]
        };
    }
    let mut suffix = vec![V::one(); n];
    for i in (0..n - 1).rev() {
        suffix[i] = if i == n - 2 {
            diffs[n - 1].clone()
        } else {
            suffix[i + 1].clone() * &diffs[i + 1]
        };
    }
    let mut acc = V::zero();
    for i in 0..n {
        let mut den = Fr::one();
        for j in 0..n {
            if j != i {
                den *= Fr::from(i as u64) - Fr::from(j as u64);
            }
        }
        let basis = match (i, n - 1 - i) {
            (0, _) => suffix[0].clone(),
            (_, 0) => prefix[i].clone(),
            _ => prefix[i].clone() * &suffix[i],
        };
        acc += (basis * &evals[i]) * den.inverse().expect("distinct nodes");
    }
    Ok(acc)
}

/// `Π_k ((1 − p_k) + c_k·p_k)`.
fn product_eval<CF: PrimeField, V: FieldVar<Fr, CF>>(c: &[V], p: &[V]) -> V {
    let mut acc = V::one();
    for (ck, pk) in c.iter().zip(p) {
        acc *= V::one() - pk + ck.clone() * pk;
    }
    acc
}

/// Counts, in order: sumchecks with their final checks, the public-input term, the
/// Testudo-Comm scalars.
struct ArithCounts {
    sumchecks: usize,
    pcs_scalars: usize,
}

/// Everything `spartan::verify` does in `F_r` after the transcript, and the scalars of
/// `TestudoComm::verify`; returns `(ŷ, f(ρ))` for the group checks.
fn arithmetic<CF: PrimeField, V: FieldVar<Fr, CF>>(
    cs: &ConstraintSystemRef<CF>,
    v: &Vars<V>,
) -> Result<ArithCounts, SynthesisError> {
    let start = cs.num_constraints();
    let mut claim = V::zero();
    for (evals, r) in v.outer.iter().zip(&v.r_x) {
        (evals[0].clone() + &evals[1]).enforce_equal(&claim)?;
        claim = interpolate(evals, r)?;
    }
    let mut eq = V::one();
    for (t, r) in v.tau.iter().zip(&v.r_x) {
        let tr = t.clone() * r;
        eq *= V::one() - t - r + tr.double()?;
    }
    claim.enforce_equal(&(eq * (v.v[0].clone() * &v.v[1] - &v.v[2])))?;

    let mut claim =
        v.rho[0].clone() * &v.v[0] + v.rho[1].clone() * &v.v[1] + v.rho[2].clone() * &v.v[2];
    for (evals, r) in v.inner.iter().zip(&v.r_y) {
        (evals[0].clone() + &evals[1]).enforce_equal(&claim)?;
        claim = interpolate(evals, r)?;
    }
    // ũ(r_y') = Σ_{j ≤ ℓ} u_j·χ_j(r_y'), u = (io, 1).
    let r_rest = &v.r_y[1..];
    let mut u_eval = V::zero();
    let u: Vec<V> =
        v.io.iter()
            .cloned()
            .chain(std::iter::once(V::one()))
            .collect();
    for (j, uj) in u.iter().enumerate() {
        let mut chi = V::one();
        for (bit, r) in r_rest.iter().enumerate() {
            let set = (j >> (r_rest.len() - 1 - bit)) & 1 == 1;
            chi *= if set { r.clone() } else { V::one() - r };
        }
        u_eval += chi * uj;
    }
    let z_eval = (V::one() - &v.r_y[0]) * &v.v_w + v.r_y[0].clone() * u_eval;
    claim.enforce_equal(&(v.m_eval.clone() * z_eval))?;
    let sumchecks = cs.num_constraints() - start;

    let start = cs.num_constraints();
    let x_invs: Vec<V> = v
        .mipp_x
        .iter()
        .map(|x| x.inverse())
        .collect::<Result<_, _>>()?;
    let (b, _) = r_rest.split_at(v.mipp_x.len());
    let y_hat = product_eval(&x_invs, b);
    let f_rho = product_eval(&x_invs, &v.mipp_rho);
    // Keep them alive as the group checks' inputs.
    let _ = (y_hat.value(), f_rho.value());
    Ok(ArithCounts {
        sumchecks,
        pcs_scalars: cs.num_constraints() - start,
    })
}

// ---------------------------------------------------------------------------------------
// 1. The scalar half over F_q: the transcript gadget and the emulated arithmetic.

type Em = EmulatedFpVar<Fr, Fq>;
type Tv = TranscriptVar<Fr, Fq>;
type GtVar = Fp12Var<ark_bls12_381::Fq12Config>;
type Fp2V = ark_r1cs_std::fields::fp2::Fp2Var<ark_bls12_381::Fq2Config>;

struct FqCounts {
    total: usize,
    /// Allocating the proof's `F_r` values as emulated witnesses.
    allocation: usize,
    /// The transcript: absorbs (with the canonical-integer conversions), squeezes, challenge
    /// decompositions.
    transcript: usize,
    /// The part of `transcript` that is Testudo-Comm's (after `v_w`: its group elements and
    /// challenges).
    pcs_transcript: usize,
    arith: ArithCounts,
    satisfied: bool,
    /// `F_r` values absorbed, group elements absorbed, challenges squeezed.
    scalars: usize,
    points: usize,
    challenges: usize,
}

/// The transcript gadget with the example's bookkeeping.
struct Counted {
    t: Tv,
    cs: ConstraintSystemRef<Fq>,
    scalars: usize,
    points: usize,
    challenges: usize,
}

impl Counted {
    fn scalars(&mut self, xs: &[Em]) -> Result<(), SynthesisError> {
        self.scalars += xs.len();
        self.t.absorb_scalars(xs).map(|_| ())
    }

    fn g1(&mut self, p: &ark_bls12_381::G1Affine) -> Result<(), SynthesisError> {
        use ark_ec::AffineRepr;
        self.points += 1;
        let (x, y) = p.xy().unwrap_or_default();
        let x = FpVar::new_witness(self.cs.clone(), || Ok(x))?;
        let y = FpVar::new_witness(self.cs.clone(), || Ok(y))?;
        let inf = Boolean::new_witness(self.cs.clone(), || Ok(p.is_zero()))?;
        self.t.absorb_point(&x, &y, &inf)
    }

    fn g2(&mut self, p: &ark_bls12_381::G2Affine) -> Result<(), SynthesisError> {
        use ark_ec::AffineRepr;
        self.points += 1;
        let (x, y) = p.xy().unwrap_or_default();
        let x = Fp2V::new_witness(self.cs.clone(), || Ok(x))?;
        let y = Fp2V::new_witness(self.cs.clone(), || Ok(y))?;
        let inf = Boolean::new_witness(self.cs.clone(), || Ok(p.is_zero()))?;
        self.t.absorb_point(&x, &y, &inf)
    }

    fn gt(&mut self, x: &ark_bls12_381::Fq12) -> Result<(), SynthesisError> {
        self.points += 1;
        let v = GtVar::new_witness(self.cs.clone(), || Ok(*x))?;
        self.t.absorb_target(&v)
    }

    fn challenges(&mut self, n: usize) -> Result<Vec<Em>, SynthesisError> {
        self.challenges += n;
        Ok(self.t.challenges(n)?.into_iter().map(|c| c.value).collect())
    }
}

/// Builds the `F_q` circuit for `proof` (module doc, 1).
fn fq_circuit(r1cs: &R1cs<Fr>, io: &[Fr], proof: &Proof) -> Result<FqCounts, testudo::Error> {
    let cs = new_cs::<Fq>();
    let w = |x: Fr| Em::new_witness(cs.clone(), || Ok(x));
    let ws = |xs: &[Fr]| xs.iter().map(|x| w(*x)).collect::<Result<Vec<_>, _>>();
    let io_v = ws(io)?;
    let outer: Vec<Vec<Em>> = proof
        .outer
        .rounds
        .iter()
        .map(|e| ws(e))
        .collect::<Result<_, _>>()?;
    let v = [w(proof.v_a)?, w(proof.v_b)?, w(proof.v_c)?];
    let inner: Vec<Vec<Em>> = proof
        .inner
        .rounds
        .iter()
        .map(|e| ws(e))
        .collect::<Result<_, _>>()?;
    let v_w = w(proof.v_w)?;
    let allocation = cs.num_constraints();

    let mut t = Counted {
        t: Tv::new(cs.clone(), DOMAIN_TAG)?,
        cs: cs.clone(),
        scalars: 0,
        points: 0,
        challenges: 0,
    };
    // The statement: the digest is a public input (its one 32-byte chunk), io emulated.
    let digest = bytes_to_elements::<Fq>(&r1cs.digest().0);
    let chunks = digest[1..]
        .iter()
        .map(|c| FpVar::new_input(cs.clone(), || Ok(*c)))
        .collect::<Result<Vec<_>, _>>()?;
    t.t.absorb_byte_chunks(32, &chunks)?;
    t.scalars(&io_v)?;
    t.gt(&proof.commitment.0 .0)?;
    let tau = t.challenges(r1cs.log_rows())?;
    let mut r_x = Vec::new();
    for evals in &outer {
        t.scalars(evals)?;
        r_x.extend(t.challenges(1)?);
    }
    t.scalars(&v)?;
    let rho = t.challenges(3)?;
    let mut r_y = Vec::new();
    for evals in &inner {
        t.scalars(evals)?;
        r_y.extend(t.challenges(1)?);
    }
    t.scalars(std::slice::from_ref(&v_w))?;
    let before_pcs = cs.num_constraints();
    // Testudo-Comm's verifier transcript.
    let op = &proof.opening;
    t.g1(&op.u)?;
    let mut mipp_x = Vec::new();
    for round in &op.rounds {
        t.g1(&round.u_l)?;
        t.g1(&round.u_r)?;
        t.gt(&round.t_l.0)?;
        t.gt(&round.t_r.0)?;
        mipp_x.extend(t.challenges(1)?);
    }
    t.g1(&op.a_hat)?;
    t.g2(&op.h_hat)?;
    let mipp_rho = t.challenges(op.rounds.len())?;
    for q in &op.h_hat_opening {
        t.g2(q)?;
    }
    for q in &op.q_opening.quotients {
        t.g1(q)?;
    }
    let transcript = cs.num_constraints() - allocation;
    let pcs_transcript = cs.num_constraints() - before_pcs;

    // M(r_x, r_y), computed natively from the challenges' values (what SPARK or the final
    // verifier would supply), as a witness.
    let val = |xs: &[Em]| -> Vec<Fr> { xs.iter().map(|x| x.value().unwrap_or_default()).collect() };
    let (rx, ry, rh) = (val(&r_x), val(&r_y), val(&rho));
    let m = r1cs.eval_combined(&eq_table(&rx), &eq_table(&ry), [rh[0], rh[1], rh[2]]);
    let m_eval = w(m)?;
    let vars = Vars {
        tau,
        outer,
        r_x,
        v,
        rho: [rho[0].clone(), rho[1].clone(), rho[2].clone()],
        inner,
        r_y,
        v_w,
        io: io_v,
        m_eval,
        mipp_x,
        mipp_rho,
    };
    let arith = arithmetic(&cs, &vars)?;
    Ok(FqCounts {
        total: cs.num_constraints(),
        allocation,
        transcript,
        pcs_transcript,
        arith,
        satisfied: cs.is_satisfied()?,
        scalars: t.scalars,
        points: t.points,
        challenges: t.challenges,
    })
}

// ---------------------------------------------------------------------------------------
// 1b. The crate's Spartan verifier gadget (design steps 3–4) on the same proof.

struct GadgetCounts {
    total: usize,
    /// Allocating the public inputs (digest chunk, io and v_M range-checked, r_x, ρ, r_y).
    public: usize,
    /// Allocating the proof's F_r values as canonical bits, and the commitment's elements.
    proof: usize,
    /// The transcript, both sumchecks, the final checks, ũ, the public challenges pinned.
    verify: usize,
    public_inputs: usize,
    satisfied: bool,
}

fn spartan_gadget(
    r1cs: &R1cs<Fr>,
    io: &[Fr],
    proof: &Proof,
) -> Result<GadgetCounts, testudo::Error> {
    let cs = new_cs::<Fq>();
    let shape = SpartanShape::of(r1cs);
    let values = PublicValues::for_proof::<Tc>(r1cs, io, proof)?;
    let public = PublicValuesVar::new_input(cs.clone(), shape, Some(&values))?;
    let after_public = cs.num_constraints();
    let commitment = proof
        .commitment
        .0
         .0
        .to_base_prime_field_elements()
        .map(|x| FpVar::new_witness(cs.clone(), || Ok(x)))
        .collect::<Result<Vec<_>, _>>()?;
    let proof_var = SpartanProofVar::new_witness(cs.clone(), shape, Some(proof))?;
    let after_proof = cs.num_constraints();
    spartan_gadget_verify(cs.clone(), shape, &public, &commitment, &proof_var)?;
    Ok(GadgetCounts {
        total: cs.num_constraints(),
        public: after_public,
        proof: after_proof - after_public,
        verify: cs.num_constraints() - after_proof,
        public_inputs: cs.num_instance_variables() - 1,
        satisfied: cs.is_satisfied()?,
    })
}

// ---------------------------------------------------------------------------------------
// 2. Unit costs over F_q.

fn bits_witness(cs: &ConstraintSystemRef<Fq>, x: Fr) -> Result<Vec<Boolean<Fq>>, SynthesisError> {
    x.into_bigint()
        .to_bits_le()
        .into_iter()
        .take(Fr::MODULUS_BIT_SIZE as usize)
        .map(|b| Boolean::new_witness(cs.clone(), || Ok(b)))
        .collect()
}

/// Constraints added by `f` in a fresh system (after whatever `setup` allocates).
fn delta<S, F>(setup: S, f: F) -> usize
where
    S: FnOnce(&ConstraintSystemRef<Fq>) -> Result<Box<dyn std::any::Any>, SynthesisError>,
    F: FnOnce(&ConstraintSystemRef<Fq>, Box<dyn std::any::Any>) -> Result<(), SynthesisError>,
{
    let cs = new_cs::<Fq>();
    let state = setup(&cs).expect("allocation");
    let before = cs.num_constraints();
    f(&cs, state).expect("synthesis");
    assert!(
        cs.is_satisfied().expect("satisfiable"),
        "the unit gadget is satisfied"
    );
    cs.num_constraints() - before
}

struct Units {
    tr_scalar: usize,
    tr_challenge: usize,
    em_mul: usize,
    em_alloc: usize,
    em_to_bits: usize,
    poseidon_fq: usize,
    poseidon_fr: usize,
    fq_to_bits: usize,
    g1_mul: usize,
    g2_mul: usize,
    gt_exp: usize,
    gt_two_exp: usize,
    gt_exp_u: usize,
    miller_1: usize,
    miller_2: usize,
    miller_const_g2: usize,
    final_exp: usize,
}

fn units() -> Units {
    let mut rng = ChaCha20Rng::seed_from_u64(3);
    let (a, b) = (Fr::rand(&mut rng), Fr::rand(&mut rng));
    let s = Fr::rand(&mut rng);
    let em_alloc = {
        let cs = new_cs::<Fq>();
        let _ = Em::new_witness(cs.clone(), || Ok(a)).unwrap();
        cs.num_constraints()
    };
    let em_mul = delta(
        |cs| {
            Ok(Box::new((
                Em::new_witness(cs.clone(), || Ok(a))?,
                Em::new_witness(cs.clone(), || Ok(b))?,
            )))
        },
        |_, st| {
            let (x, y) = *st.downcast::<(Em, Em)>().unwrap();
            let z = x * &y;
            z.enforce_equal(&Em::constant(a * b))
        },
    );
    let em_to_bits = delta(
        |cs| Ok(Box::new(Em::new_witness(cs.clone(), || Ok(a))?)),
        |_, st| {
            use ark_r1cs_std::convert::ToBitsGadget;
            let x = *st.downcast::<Em>().unwrap();
            let _ = x.to_bits_le()?;
            Ok(())
        },
    );
    let poseidon_fq = delta(
        |cs| {
            Ok(Box::new((
                FpVar::new_witness(cs.clone(), || Ok(Fq::from(1u64)))?,
                cs.clone(),
            )))
        },
        |_, st| {
            let (x, cs) = *st
                .downcast::<(FpVar<Fq>, ConstraintSystemRef<Fq>)>()
                .unwrap();
            let mut sponge = PoseidonSpongeVar::new(cs, &poseidon_config::<Fq>());
            sponge.absorb(&vec![x.clone(), x])?;
            let _ = sponge.squeeze_field_elements(1)?;
            Ok(())
        },
    );
    let poseidon_fr = {
        let cs = new_cs::<Fr>();
        let x = FpVar::new_witness(cs.clone(), || Ok(Fr::from(1u64))).unwrap();
        let before = cs.num_constraints();
        let mut sponge = PoseidonSpongeVar::new(cs.clone(), &poseidon_config::<Fr>());
        sponge.absorb(&vec![x.clone(), x]).unwrap();
        let _ = sponge.squeeze_field_elements(1).unwrap();
        cs.num_constraints() - before
    };
    let fq_to_bits = delta(
        |cs| {
            Ok(Box::new(FpVar::new_witness(cs.clone(), || {
                Ok(Fq::from(12345u64))
            })?))
        },
        |_, st| {
            use ark_r1cs_std::convert::ToBitsGadget;
            let x = *st.downcast::<FpVar<Fq>>().unwrap();
            let _ = x.to_bits_le()?;
            Ok(())
        },
    );
    // The transcript gadget, from a sponge holding variables at squeeze position 1 (the next
    // absorb starts a block without permuting, the next squeeze takes the second rate
    // element): what an F_r absorb and a challenge cost beyond the permutations (one per two
    // absorbed elements or two challenges, counted in the Poseidon row).
    let transcript_at_rest = |cs: &ConstraintSystemRef<Fq>| -> Result<Tv, SynthesisError> {
        let mut t = Tv::new(cs.clone(), b"units").map_err(|_| SynthesisError::Unsatisfiable)?;
        t.absorb_base(&FpVar::new_witness(cs.clone(), || Ok(Fq::from(7u64)))?)?;
        t.challenge()?;
        Ok(t)
    };
    let tr_scalar = delta(
        |cs| {
            Ok(Box::new((
                transcript_at_rest(cs)?,
                Em::new_witness(cs.clone(), || Ok(a))?,
            )))
        },
        |_, st| {
            let (mut t, x) = *st.downcast::<(Tv, Em)>().unwrap();
            t.absorb_scalar(&x).map(|_| ())
        },
    );
    let tr_challenge = delta(
        |cs| Ok(Box::new(transcript_at_rest(cs)?)),
        |_, st| {
            let mut t = *st.downcast::<Tv>().unwrap();
            t.challenge().map(|_| ())
        },
    );
    let g1 = (G1Projective::generator() * a).into_affine();
    let g1_mul = delta(
        |cs| {
            let p = G1Var::<Config>::new_witness(cs.clone(), || Ok(g1))?;
            Ok(Box::new((p, bits_witness(cs, s)?)))
        },
        |_, st| {
            let (p, bits) = *st.downcast::<(G1Var<Config>, Vec<Boolean<Fq>>)>().unwrap();
            let _ = p.scalar_mul_le(bits.iter())?;
            Ok(())
        },
    );
    let g2 = (G2Projective::generator() * b).into_affine();
    let g2_mul = delta(
        |cs| {
            let p = G2Var::<Config>::new_witness(cs.clone(), || Ok(g2))?;
            Ok(Box::new((p, bits_witness(cs, s)?)))
        },
        |_, st| {
            let (p, bits) = *st.downcast::<(G2Var<Config>, Vec<Boolean<Fq>>)>().unwrap();
            let _ = p.scalar_mul_le(bits.iter())?;
            Ok(())
        },
    );
    let gt = Bls12_381::pairing(g1, g2).0;
    type Gt = Fp12Var<ark_bls12_381::Fq12Config>;
    let gt_exp = delta(
        |cs| {
            let x = Gt::new_witness(cs.clone(), || Ok(gt))?;
            Ok(Box::new((x, bits_witness(cs, s)?)))
        },
        |_, st| {
            let (x, bits) = *st.downcast::<(Gt, Vec<Boolean<Fq>>)>().unwrap();
            let _ = x.pow_le(&bits)?;
            Ok(())
        },
    );
    // The MIPP fold's T_L^{x⁻¹}·T_R^{x}: one square-and-multiply over both exponents, with
    // cyclotomic squarings (valid in G_T) and a table {1, T_L, T_R, T_L·T_R}.
    let gt_two_exp = delta(
        |cs| {
            let x = Gt::new_witness(cs.clone(), || Ok(gt))?;
            let y = Gt::new_witness(cs.clone(), || Ok(gt.square()))?;
            Ok(Box::new((x, y, bits_witness(cs, s)?, bits_witness(cs, a)?)))
        },
        |_, st| {
            let (x, y, ea, eb) = *st
                .downcast::<(Gt, Gt, Vec<Boolean<Fq>>, Vec<Boolean<Fq>>)>()
                .unwrap();
            let xy = x.clone() * &y;
            let mut acc = Gt::one();
            for (ba, bb) in ea.iter().rev().zip(eb.iter().rev()) {
                acc = acc.cyclotomic_square()?;
                let if_a = ba.select(&xy, &y)?;
                let if_not_a = ba.select(&x, &Gt::one())?;
                let factor = bb.select(&if_a, &if_not_a)?;
                acc *= factor;
            }
            Ok(())
        },
    );
    // An exponentiation by the BLS parameter u (64 bits, NAF): the size of the exponentiation
    // in a G_T membership test of the f^q = f^u kind (an estimate's unit, not the test).
    let gt_exp_u = delta(
        |cs| Ok(Box::new(Gt::new_witness(cs.clone(), || Ok(gt))?)),
        |_, st| {
            let x = *st.downcast::<Gt>().unwrap();
            let _ = x.optimized_cyclotomic_exp([0xd201_0000_0001_0000u64])?;
            Ok(())
        },
    );
    // A pair whose G2 side is a key constant (PST's h^{t_j}, Testudo-Comm's h).
    let miller_const_g2 = delta(
        |cs| {
            Ok(Box::new(G1Var::<Config>::new_witness(cs.clone(), || {
                Ok(g1)
            })?))
        },
        |cs, st| {
            use ark_r1cs_std::groups::bls12::G2PreparedVar;
            let p = *st.downcast::<G1Var<Config>>().unwrap();
            let q = G2PreparedVar::<Config>::new_constant(
                cs.clone(),
                ark_ec::bls12::G2Prepared::from(g2),
            )?;
            let _ =
                PairingVar::<Config>::miller_loop(&[PairingVar::<Config>::prepare_g1(&p)?], &[q])?;
            Ok(())
        },
    );
    let miller = |pairs: usize| {
        delta(
            |cs| {
                let ps: Vec<(G1Var<Config>, G2Var<Config>)> = (0..pairs)
                    .map(|_| {
                        Ok((
                            G1Var::<Config>::new_witness(cs.clone(), || Ok(g1))?,
                            G2Var::<Config>::new_witness(cs.clone(), || Ok(g2))?,
                        ))
                    })
                    .collect::<Result<_, SynthesisError>>()?;
                Ok(Box::new(ps))
            },
            |_, st| {
                let ps = *st
                    .downcast::<Vec<(G1Var<Config>, G2Var<Config>)>>()
                    .unwrap();
                let g1s = ps
                    .iter()
                    .map(|(p, _)| PairingVar::<Config>::prepare_g1(p))
                    .collect::<Result<Vec<_>, _>>()?;
                let g2s = ps
                    .iter()
                    .map(|(_, q)| PairingVar::<Config>::prepare_g2(q))
                    .collect::<Result<Vec<_>, _>>()?;
                let _ = PairingVar::<Config>::miller_loop(&g1s, &g2s)?;
                Ok(())
            },
        )
    };
    let (miller_1, miller_2) = (miller(1), miller(2));
    let ml = Bls12_381::multi_miller_loop([g1], [g2]).0;
    let final_exp = delta(
        |cs| Ok(Box::new(Gt::new_witness(cs.clone(), || Ok(ml))?)),
        |_, st| {
            let f = *st.downcast::<Gt>().unwrap();
            let _ = PairingVar::<Config>::final_exponentiation(&f)?;
            Ok(())
        },
    );
    Units {
        tr_scalar,
        tr_challenge,
        em_mul,
        em_alloc,
        em_to_bits,
        poseidon_fq,
        poseidon_fr,
        fq_to_bits,
        g1_mul,
        g2_mul,
        gt_exp,
        gt_two_exp,
        gt_exp_u,
        miller_1,
        miller_2,
        miller_const_g2,
        final_exp,
    }
}

fn main() {
    let ks: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("sizes k"))
        .collect();
    let ks = if ks.is_empty() { vec![10, 14] } else { ks };
    println!("#### 1. The scalar half of the verifier over F_q, per instance size (R1CS of 2^k constraints, w̃ of k variables)\n");
    println!("| 2^k | total | transcript gadget | (F_r absorbs, group elements, challenges) | emulated sumchecks + final checks | Testudo-Comm scalars | allocating the proof's F_r values | honest proof | tampered round |");
    println!("|---|---|---|---|---|---|---|---|---|");
    let mut gadget_rows = Vec::new();
    for &k in &ks {
        let common::Instance { r1cs, io, w, .. } =
            common::Instance::random(1 << k, &mut ChaCha20Rng::seed_from_u64(k as u64));
        let (ck, vk) = testudo_comm::setup_insecure_from_seed::<Bls12_381>(r1cs.witness_vars(), 1)
            .expect("setup");
        let proof = prove::<Fr, Tc>(&ck, &r1cs, &io, &w).expect("prove");
        verify::<Fr, Tc>(&vk, &r1cs, &io, &proof).expect("verify");
        let honest = fq_circuit(&r1cs, &io, &proof).expect("synthesis");
        let mut bad = proof.clone();
        bad.outer.rounds[1][0] += Fr::one();
        assert!(
            verify::<Fr, Tc>(&vk, &r1cs, &io, &bad).is_err(),
            "the native verifier rejects it"
        );
        let tampered = fq_circuit(&r1cs, &io, &bad).expect("synthesis");
        assert!(honest.satisfied, "the honest proof satisfies the circuit");
        assert!(
            !tampered.satisfied,
            "a tampered round leaves the circuit unsatisfied"
        );
        let gadget = spartan_gadget(&r1cs, &io, &proof).expect("synthesis");
        let mut bad_v = proof.clone();
        bad_v.v_a += Fr::one();
        let gadget_bad = spartan_gadget(&r1cs, &io, &bad_v).expect("synthesis");
        assert!(
            gadget.satisfied,
            "the honest proof satisfies the Spartan gadget"
        );
        assert!(
            !gadget_bad.satisfied,
            "a tampered v_A leaves the Spartan gadget unsatisfied"
        );
        let pcs_part = honest.pcs_transcript + honest.arith.pcs_scalars;
        gadget_rows.push(format!(
            "| 2^{k} | {} | {} | {} | {} | {} | satisfied | unsatisfied | {} ({} + {}) | {} |",
            gadget.total,
            gadget.verify,
            gadget.proof,
            gadget.public,
            gadget.public_inputs,
            pcs_part,
            honest.pcs_transcript,
            honest.arith.pcs_scalars,
            gadget.total + pcs_part
        ));
        println!(
            "| 2^{k} | {} | {} | ({}, {}, {}) | {} | {} | {} | satisfied | unsatisfied |",
            honest.total,
            honest.transcript,
            honest.scalars,
            honest.points,
            honest.challenges,
            honest.arith.sumchecks,
            honest.arith.pcs_scalars,
            honest.allocation
        );
    }
    println!("\n#### 1b. The Spartan verifier gadget (testudo::spartan::constraints, design steps 3–4), up to the opening, per instance size\n");
    println!("| 2^k | total | transcript, sumchecks, final checks, ũ, challenges pinned | proof's F_r values (canonical bits) + commitment elements | public inputs (io, v_M range-checked) | public inputs (count) | honest proof | tampered v_A | Testudo-Comm's scalar part from 1 (transcript + scalars) | scalar half with the gadget |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for row in &gadget_rows {
        println!("{row}");
    }
    let u = units();
    println!("\n#### 2. Unit costs over F_q (BLS12-381's base field = BW6-767's scalar field), constraints\n");
    println!("| gadget | constraints |");
    println!("|---|---|");
    for (name, n) in [
        (
            "transcript: absorb an F_r value (canonical integer, < r enforced)",
            u.tr_scalar,
        ),
        (
            "transcript: a challenge (254 bits of a canonical F_q decomposition + emulated F_r)",
            u.tr_challenge,
        ),
        ("emulated F_r: allocate one element", u.em_alloc),
        (
            "emulated F_r: one multiplication (and equality with a constant)",
            u.em_mul,
        ),
        ("emulated F_r: to bits", u.em_to_bits),
        ("F_q element to bits (a squeezed challenge)", u.fq_to_bits),
        (
            "Poseidon permutation over F_q (absorb 2, squeeze 1)",
            u.poseidon_fq,
        ),
        (
            "Poseidon permutation over F_r, natively (for comparison)",
            u.poseidon_fr,
        ),
        ("G1: 255-bit variable scalar × variable point", u.g1_mul),
        ("G2: 255-bit variable scalar × variable point", u.g2_mul),
        ("G_T: 255-bit variable exponent (`pow_le`)", u.gt_exp),
        (
            "G_T: T_L^a·T_R^b, two 255-bit exponents, shared cyclotomic squarings",
            u.gt_two_exp,
        ),
        (
            "G_T: exponent u (64-bit BLS parameter, NAF, cyclotomic)",
            u.gt_exp_u,
        ),
        ("Miller loop, 1 pair (variable G1, G2)", u.miller_1),
        ("Miller loop, 2 pairs", u.miller_2),
        (
            "Miller loop, 1 pair with a constant G2 side",
            u.miller_const_g2,
        ),
        ("final exponentiation", u.final_exp),
    ] {
        println!("| {name} | {n} |");
    }
}
