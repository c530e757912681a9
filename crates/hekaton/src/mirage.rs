//! Mirage: Groth16 whose proofs carry a commitment `D` to a block of the witness (paper §5.1.1).
//!
//! # Circuit convention
//!
//! Any arkworks [`ConstraintSynthesizer`] that produces plain R1CS works. The **committed
//! witness** is the first `num_committed` witness variables the circuit allocates (witness
//! indices `0..num_committed`, i.e. QAP variables `ℓ..ℓ+m`); the circuit must allocate them
//! before any other witness variable. [`setup`] fixes `num_committed` in the keys.
//!
//! # Flow
//!
//! 1. [`setup`] samples `α, β, γ, δ, η, s` and returns a [`ProvingKey`] (which contains the
//!    [`CommitmentKey`]) and a [`VerifyingKey`]. Subcircuits with the same shape can share one
//!    setup (paper §6.3): everything that differs between them goes through public inputs,
//!    and [`VerifyingKey::fix_trailing_inputs`] folds the setup-time ones into `IC`.
//! 2. [`commit`] commits to the committed values: `D = Σ w_j·[p_j(s)/η]₁ + κ_D·[δ]₁`.
//! 3. [`prove`] synthesizes the circuit, checks that the witness satisfies it and that `D`
//!    opens to its committed block under `κ_D`, and outputs `(A, B, C)`.
//! 4. [`verify`] checks `e(A,B) = e(α,β)·e(IC,γ)·e(C,δ)·e(D,η)` with a single multi-pairing;
//!    [`batch_verify`] checks many proofs under one key with a random linear combination,
//!    its weights a hash of the key and every item mixed with the caller's randomness
//!    ([`batch_weights`]).
//!
//! All key, commitment and proof types serialize with `ark-serialize`; [`to_bytes`] and
//! [`from_bytes`] use the compressed encoding and full validation (curve and subgroup checks).

use ark_ec::{
    pairing::Pairing, scalar_mul::BatchMulPreprocessing, AffineRepr, CurveGroup, PrimeGroup,
    VariableBaseMSM,
};
use ark_ff::{Field, UniformRand, Zero};
use ark_groth16::r1cs_to_qap::{LibsnarkReduction, R1CSToQAP};
use ark_poly::{EvaluationDomain, GeneralEvaluationDomain};
use ark_relations::gr1cs::{
    ConstraintSynthesizer, ConstraintSystem, ConstraintSystemRef, Matrix, OptimizationGoal,
    SynthesisError, SynthesisMode, R1CS_PREDICATE_LABEL,
};
use ark_serialize::{CanonicalDeserialize, CanonicalSerialize, Compress, Validate};
use blake2::digest::consts::{U32, U64};
use blake2::{Blake2b, Digest};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;

use crate::{Check, Error};

type Domain<F> = GeneralEvaluationDomain<F>;

/// The commitment key `ck = ([δ]₁, {[p_j(s)/η]₁}_{j ∈ w_C})`.
#[derive(Clone, Debug, PartialEq, Eq, CanonicalSerialize, CanonicalDeserialize)]
pub struct CommitmentKey<E: Pairing> {
    /// `[δ]₁`, the hiding base of `D`.
    pub delta_g1: E::G1Affine,
    /// `[p_j(s)/η]₁` for each committed witness variable, in allocation order.
    pub committed_query: Vec<E::G1Affine>,
}

/// The verifying key `(α, β, γ, δ, η, {[p_j(s)/γ]₁}_{j<ℓ})`. `e(α, β)` is not stored: the
/// verifier pairs `−α` with `β` inside its multi-pairing instead.
#[derive(Clone, Debug, PartialEq, Eq, CanonicalSerialize, CanonicalDeserialize)]
pub struct VerifyingKey<E: Pairing> {
    pub alpha_g1: E::G1Affine,
    pub beta_g2: E::G2Affine,
    pub gamma_g2: E::G2Affine,
    pub delta_g2: E::G2Affine,
    pub eta_g2: E::G2Affine,
    /// `[p_j(s)/γ]₁` for the instance variables; entry 0 is the constant `x_0 = 1`.
    pub ic_query: Vec<E::G1Affine>,
}

impl<E: Pairing> VerifyingKey<E> {
    /// Number of public inputs, not counting the constant 1.
    pub fn num_public_inputs(&self) -> usize {
        self.ic_query.len().saturating_sub(1)
    }

    /// Paper §6.3: subcircuits that differ only in values known at setup time (their index,
    /// the positions of the shared wires they touch) take those values as public inputs and
    /// share one setup. This folds the **last** `fixed.len()` public inputs into the constant
    /// term, `[p_0(s)/γ]₁ ← [p_0(s)/γ]₁ + Σ v_j·[p_j(s)/γ]₁`, giving the per-subcircuit key that
    /// is verified with the remaining inputs only.
    pub fn fix_trailing_inputs(&self, fixed: &[E::ScalarField]) -> Result<Self, Error> {
        let n = self.num_public_inputs();
        if self.ic_query.is_empty() || fixed.len() > n {
            return Err(Error::PublicInputLength {
                expected: n,
                got: fixed.len(),
            });
        }
        let keep = self.ic_query.len() - fixed.len();
        let folded =
            self.ic_query[0].into_group() + E::G1::msm_unchecked(&self.ic_query[keep..], fixed);
        let mut ic_query = self.ic_query[..keep].to_vec();
        ic_query[0] = folded.into_affine();
        Ok(VerifyingKey {
            ic_query,
            ..self.clone()
        })
    }
}

/// The proving key.
#[derive(Clone, Debug, PartialEq, Eq, CanonicalSerialize, CanonicalDeserialize)]
pub struct ProvingKey<E: Pairing> {
    pub vk: VerifyingKey<E>,
    pub ck: CommitmentKey<E>,
    pub beta_g1: E::G1Affine,
    /// `[η]₁`, with which `C` absorbs the hiding term `κ_D` of `D`.
    pub eta_g1: E::G1Affine,
    /// `[a_j(s)]₁` for every variable (instance, committed, rest).
    pub a_query: Vec<E::G1Affine>,
    /// `[b_j(s)]₁` for every variable.
    pub b_g1_query: Vec<E::G1Affine>,
    /// `[b_j(s)]₂` for every variable.
    pub b_g2_query: Vec<E::G2Affine>,
    /// `[s^i t(s)/δ]₁`.
    pub h_query: Vec<E::G1Affine>,
    /// `[p_j(s)/δ]₁` for the uncommitted witness variables.
    pub l_query: Vec<E::G1Affine>,
    /// `ℓ`: instance variables including the constant 1.
    pub num_instance: u64,
    /// Total witness variables (committed and not).
    pub num_witness: u64,
    /// R1CS constraints.
    pub num_constraints: u64,
}

impl<E: Pairing> ProvingKey<E> {
    /// `m`: the number of committed witness variables.
    pub fn num_committed(&self) -> usize {
        self.ck.committed_query.len()
    }

    /// Checks that the query lengths agree with the recorded shape, so that a key decoded
    /// from untrusted bytes cannot make [`prove`] silently drop terms (or overflow).
    pub fn check_shape(&self) -> Result<(), Error> {
        let bad = |what| Err(Error::MalformedKey(what));
        let (Ok(l), Ok(w)) = (
            usize::try_from(self.num_instance),
            usize::try_from(self.num_witness),
        ) else {
            return bad("variable counts do not fit in memory");
        };
        let Some(lw) = l.checked_add(w) else {
            return bad("variable counts overflow");
        };
        let m = self.num_committed();
        if m > w {
            return bad("more committed than witness variables");
        }
        if l == 0 {
            return bad("no instance variable (the constant 1 is one)");
        }
        if self.a_query.len() != lw || self.b_g1_query.len() != lw || self.b_g2_query.len() != lw {
            return bad("A/B query length");
        }
        if self.l_query.len() != w - m || self.vk.ic_query.len() != l {
            return bad("IC or L query length");
        }
        Ok(())
    }
}

impl<E: Pairing> crate::Check for ProvingKey<E> {
    /// [`ProvingKey::check_shape`], and the verifying and commitment keys' own checks.
    fn check(&self) -> Result<(), Error> {
        self.check_shape()?;
        self.vk.check()?;
        self.ck.check()?;
        if self.eta_g1.is_zero() || self.beta_g1.is_zero() {
            return Err(Error::MalformedKey("[β]₁ or [η]₁ is the identity"));
        }
        Ok(())
    }
}

impl<E: Pairing> crate::Check for CommitmentKey<E> {
    fn check(&self) -> Result<(), Error> {
        if self.delta_g1.is_zero() {
            return Err(Error::MalformedKey(
                "[δ]₁ is the identity: D would not hide",
            ));
        }
        Ok(())
    }
}

impl<E: Pairing> crate::Check for VerifyingKey<E> {
    /// The instance query holds at least the constant term and no trapdoor element is the
    /// identity (a key with `[δ]₂ = 0` would accept any `C`).
    fn check(&self) -> Result<(), Error> {
        if self.ic_query.is_empty() {
            return Err(Error::MalformedKey(
                "empty IC query (the constant term is missing)",
            ));
        }
        if self.alpha_g1.is_zero()
            || self.beta_g2.is_zero()
            || self.gamma_g2.is_zero()
            || self.delta_g2.is_zero()
            || self.eta_g2.is_zero()
        {
            return Err(Error::MalformedKey(
                "a trapdoor element of the verifying key is the identity",
            ));
        }
        Ok(())
    }
}

macro_rules! no_invariants {
    ($($t:ident),*) => {$(
        impl<E: Pairing> crate::Check for $t<E> {
            /// Nothing beyond the curve and subgroup checks of decoding.
            fn check(&self) -> Result<(), Error> {
                Ok(())
            }
        }
    )*};
}
no_invariants!(Commitment, CommitmentRandomness, Proof);

/// The commitment `D` to the committed witness.
#[derive(Clone, Copy, Debug, PartialEq, Eq, CanonicalSerialize, CanonicalDeserialize)]
pub struct Commitment<E: Pairing> {
    pub d: E::G1Affine,
}

/// The hiding randomness `κ_D` of a commitment; the prover needs it, the verifier never sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, CanonicalSerialize, CanonicalDeserialize)]
pub struct CommitmentRandomness<E: Pairing> {
    pub kappa: E::ScalarField,
}

/// A Mirage proof `(A, B, C)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, CanonicalSerialize, CanonicalDeserialize)]
pub struct Proof<E: Pairing> {
    pub a: E::G1Affine,
    pub b: E::G2Affine,
    pub c: E::G1Affine,
}

/// One statement for [`batch_verify`].
#[derive(Clone, Copy, Debug)]
pub struct BatchItem<'a, E: Pairing> {
    pub public_inputs: &'a [E::ScalarField],
    pub commitment: &'a Commitment<E>,
    pub proof: &'a Proof<E>,
}

/// Compressed encoding of any key, commitment or proof.
pub fn to_bytes<T: CanonicalSerialize>(value: &T) -> Result<Vec<u8>, Error> {
    let mut out = Vec::with_capacity(value.serialized_size(Compress::Yes));
    value.serialize_with_mode(&mut out, Compress::Yes)?;
    Ok(out)
}

/// Decodes a compressed encoding with full validation (curve and subgroup checks, then the
/// type's structural [`Check`]); trailing bytes are an error.
pub fn from_bytes<T: CanonicalDeserialize + Check>(mut bytes: &[u8]) -> Result<T, Error> {
    let value = T::deserialize_with_mode(&mut bytes, Compress::Yes, Validate::Yes)?;
    if !bytes.is_empty() {
        return Err(Error::TrailingBytes(bytes.len()));
    }
    Check::check(&value)?;
    Ok(value)
}

fn nonzero_scalar<F: Field, R: Rng>(rng: &mut R) -> F {
    loop {
        let x = F::rand(rng);
        if !x.is_zero() {
            return x;
        }
    }
}

/// Synthesizes `circuit` in `mode`, with inlined linear combinations, and checks it is plain
/// R1CS.
fn synthesize<F: ark_ff::PrimeField, C: ConstraintSynthesizer<F>>(
    circuit: C,
    mode: SynthesisMode,
) -> Result<ConstraintSystemRef<F>, Error> {
    let cs = ConstraintSystem::<F>::new_ref();
    cs.set_optimization_goal(OptimizationGoal::Constraints);
    cs.set_mode(mode);
    circuit.generate_constraints(cs.clone())?;
    cs.finalize();
    if cs.num_predicates() != 1 {
        return Err(Error::UnsupportedCircuit(
            "only plain R1CS circuits are supported".into(),
        ));
    }
    Ok(cs)
}

fn r1cs_matrices<F: ark_ff::PrimeField>(
    cs: &ConstraintSystemRef<F>,
) -> Result<Vec<Matrix<F>>, Error> {
    let mut all = cs.to_matrices()?;
    let m = all
        .remove(R1CS_PREDICATE_LABEL)
        .ok_or_else(|| Error::UnsupportedCircuit("the circuit has no R1CS constraints".into()))?;
    if m.len() != 3 {
        return Err(Error::UnsupportedCircuit(
            "R1CS predicate without three matrices".into(),
        ));
    }
    Ok(m)
}

/// A digest of the circuit's R1CS as Mirage uses it: BLAKE2b-256 over the variable and
/// constraint counts, `num_committed`, and every nonzero entry `(column, coefficient)` of the
/// matrices `A`, `B`, `C`, row by row. Two circuits with the same digest have the same
/// constraints, so a key made for one is a key for the other; see
/// [`crate::workflow::setup`], which refuses to share a key between subcircuits whose digests
/// differ.
pub fn constraint_digest<F, C>(circuit: C, num_committed: usize) -> Result<[u8; 32], Error>
where
    F: ark_ff::PrimeField,
    C: ConstraintSynthesizer<F>,
{
    let cs = synthesize(circuit, SynthesisMode::Setup)?;
    let matrices = r1cs_matrices(&cs)?;
    let mut h = Blake2b::<U32>::new();
    h.update(b"hekaton/r1cs/v1");
    let counts = [
        cs.num_instance_variables(),
        cs.num_witness_variables(),
        cs.num_constraints(),
        num_committed,
    ];
    for n in counts {
        h.update((n as u64).to_le_bytes());
    }
    let mut buf = Vec::new();
    for m in &matrices {
        h.update((m.len() as u64).to_le_bytes());
        for row in m {
            h.update((row.len() as u64).to_le_bytes());
            for (coeff, col) in row {
                h.update((*col as u64).to_le_bytes());
                buf.clear();
                coeff.serialize_with_mode(&mut buf, Compress::Yes)?;
                h.update(&buf);
            }
        }
    }
    let mut out = [0u8; 32];
    out.copy_from_slice(&h.finalize());
    Ok(out)
}

/// Mirage.Setup for one circuit: samples the trapdoor and returns `(pk, vk)`. The first
/// `num_committed` witness variables of `circuit` form the committed witness.
pub fn setup<E, C, R>(
    circuit: C,
    num_committed: usize,
    rng: &mut R,
) -> Result<(ProvingKey<E>, VerifyingKey<E>), Error>
where
    E: Pairing,
    C: ConstraintSynthesizer<E::ScalarField>,
    R: Rng,
{
    let cs = synthesize(circuit, SynthesisMode::Setup)?;
    // Fails early on non-R1CS systems before the QAP reduction indexes the R1CS label.
    r1cs_matrices(&cs)?;
    let num_instance = cs.num_instance_variables();
    let num_witness = cs.num_witness_variables();
    let num_constraints = cs.num_constraints();
    if num_committed > num_witness {
        return Err(Error::TooManyCommitted {
            requested: num_committed,
            available: num_witness,
        });
    }

    let alpha: E::ScalarField = nonzero_scalar(rng);
    let beta: E::ScalarField = nonzero_scalar(rng);
    let gamma: E::ScalarField = nonzero_scalar(rng);
    let delta: E::ScalarField = nonzero_scalar(rng);
    let eta: E::ScalarField = nonzero_scalar(rng);

    let domain = Domain::<E::ScalarField>::new(num_constraints + num_instance)
        .ok_or(SynthesisError::PolynomialDegreeTooLarge)?;
    let s = domain.sample_element_outside_domain(rng);
    let (a, b, c, zt, _qap_vars, domain_size) = LibsnarkReduction::instance_map_with_evaluation::<
        E::ScalarField,
        Domain<E::ScalarField>,
    >(cs.clone(), &s)?;
    debug_assert_eq!(a.len(), num_instance + num_witness);

    // The inverses exist: the trapdoor elements are nonzero.
    let gamma_inv = gamma.inverse().expect("nonzero");
    let delta_inv = delta.inverse().expect("nonzero");
    let eta_inv = eta.inverse().expect("nonzero");

    let p = |j: usize| beta * a[j] + alpha * b[j] + c[j];
    let committed_start = num_instance;
    let rest_start = num_instance + num_committed;
    let ic: Vec<_> = (0..num_instance).map(|j| p(j) * gamma_inv).collect();
    let committed: Vec<_> = (committed_start..rest_start)
        .map(|j| p(j) * eta_inv)
        .collect();
    if let Some(k) = committed.iter().position(|x| x.is_zero()) {
        // p_j(s) = 0 at a random s means p_j ≡ 0: the variable is in no constraint.
        return Err(Error::UnconstrainedCommittedVariable(k));
    }
    let l: Vec<_> = (rest_start..num_instance + num_witness)
        .map(|j| p(j) * delta_inv)
        .collect();
    let h = LibsnarkReduction::h_query_scalars::<E::ScalarField, Domain<E::ScalarField>>(
        domain_size - 1,
        s,
        zt,
        delta_inv,
    )?;

    let g1 = E::G1::generator();
    let g2 = E::G2::generator();
    let g1_count = a.len() + b.len() + h.len() + ic.len() + committed.len() + l.len();
    let g1_table = BatchMulPreprocessing::new(g1, g1_count);
    let g2_table = BatchMulPreprocessing::new(g2, b.len());

    let vk = VerifyingKey::<E> {
        alpha_g1: (g1 * alpha).into_affine(),
        beta_g2: (g2 * beta).into_affine(),
        gamma_g2: (g2 * gamma).into_affine(),
        delta_g2: (g2 * delta).into_affine(),
        eta_g2: (g2 * eta).into_affine(),
        ic_query: g1_table.batch_mul(&ic),
    };
    let pk = ProvingKey::<E> {
        vk: vk.clone(),
        ck: CommitmentKey {
            delta_g1: (g1 * delta).into_affine(),
            committed_query: g1_table.batch_mul(&committed),
        },
        beta_g1: (g1 * beta).into_affine(),
        eta_g1: (g1 * eta).into_affine(),
        a_query: g1_table.batch_mul(&a),
        b_g1_query: g1_table.batch_mul(&b),
        b_g2_query: g2_table.batch_mul(&b),
        h_query: g1_table.batch_mul(&h),
        l_query: g1_table.batch_mul(&l),
        num_instance: num_instance as u64,
        num_witness: num_witness as u64,
        num_constraints: num_constraints as u64,
    };
    Ok((pk, vk))
}

/// `D = Σ w_j·[p_j(s)/η]₁ + κ_D·[δ]₁` for a given `κ_D`.
pub fn commit_with_randomness<E: Pairing>(
    ck: &CommitmentKey<E>,
    committed_values: &[E::ScalarField],
    randomness: &CommitmentRandomness<E>,
) -> Result<Commitment<E>, Error> {
    if committed_values.len() != ck.committed_query.len() {
        return Err(Error::CommittedLength {
            expected: ck.committed_query.len(),
            got: committed_values.len(),
        });
    }
    let d = E::G1::msm_unchecked(&ck.committed_query, committed_values)
        + ck.delta_g1 * randomness.kappa;
    Ok(Commitment { d: d.into_affine() })
}

/// Mirage.Commit with fresh randomness `κ_D`.
pub fn commit<E: Pairing, R: Rng>(
    pk: &ProvingKey<E>,
    committed_values: &[E::ScalarField],
    rng: &mut R,
) -> Result<(Commitment<E>, CommitmentRandomness<E>), Error> {
    let randomness = CommitmentRandomness {
        kappa: E::ScalarField::rand(rng),
    };
    let commitment = commit_with_randomness(&pk.ck, committed_values, &randomness)?;
    Ok((commitment, randomness))
}

/// Mirage.Prove: a proof for `circuit` consistent with `commitment`, which must open to the
/// circuit's committed witness under `randomness`.
pub fn prove<E, C, R>(
    pk: &ProvingKey<E>,
    circuit: C,
    commitment: &Commitment<E>,
    randomness: &CommitmentRandomness<E>,
    rng: &mut R,
) -> Result<Proof<E>, Error>
where
    E: Pairing,
    C: ConstraintSynthesizer<E::ScalarField>,
    R: Rng,
{
    pk.check_shape()?;
    let cs = synthesize(
        circuit,
        SynthesisMode::Prove {
            construct_matrices: true,
            generate_lc_assignments: false,
        },
    )?;
    let shape = [
        (
            "instance variables",
            pk.num_instance,
            cs.num_instance_variables(),
        ),
        (
            "witness variables",
            pk.num_witness,
            cs.num_witness_variables(),
        ),
        ("constraints", pk.num_constraints, cs.num_constraints()),
    ];
    for (what, expected, got) in shape {
        if expected as usize != got {
            return Err(Error::ShapeMismatch {
                what,
                expected: expected as usize,
                got,
            });
        }
    }
    if let Some(which) = cs.which_is_unsatisfied()? {
        return Err(Error::Unsatisfied(which));
    }
    let instance = cs.instance_assignment()?;
    let witness = cs.witness_assignment()?;
    let num_committed = pk.num_committed();
    let (w_committed, w_rest) = witness.split_at(num_committed);

    // The commitment must open to this circuit's committed block.
    if commit_with_randomness(&pk.ck, w_committed, randomness)? != *commitment {
        return Err(Error::CommitmentMismatch);
    }

    let matrices = r1cs_matrices(&cs)?;
    let num_instance = instance.len();
    let full: Vec<E::ScalarField> = instance
        .into_iter()
        .chain(witness.iter().copied())
        .collect();
    let h = LibsnarkReduction::witness_map_from_matrices::<E::ScalarField, Domain<E::ScalarField>>(
        &matrices,
        num_instance,
        pk.num_constraints as usize,
        &full,
    )?;

    let kappa_a = E::ScalarField::rand(rng);
    let kappa_b = E::ScalarField::rand(rng);
    let delta_g1 = pk.ck.delta_g1;

    // A = [α + p_A(s) + κ_A δ]₁, B = [β + p_B(s) + κ_B δ]₂ (and its G1 twin for C).
    let a =
        pk.vk.alpha_g1.into_group() + E::G1::msm_unchecked(&pk.a_query, &full) + delta_g1 * kappa_a;
    let b_g2 = pk.vk.beta_g2.into_group()
        + E::G2::msm_unchecked(&pk.b_g2_query, &full)
        + pk.vk.delta_g2 * kappa_b;
    let b_g1 =
        pk.beta_g1.into_group() + E::G1::msm_unchecked(&pk.b_g1_query, &full) + delta_g1 * kappa_b;

    // h has one coefficient more than the h-query (its top coefficient is zero for a
    // satisfying witness); msm_unchecked uses the common prefix.
    let ht = E::G1::msm_unchecked(&pk.h_query, &h);
    let v2 = E::G1::msm_unchecked(&pk.l_query, w_rest);
    let c = ht + v2 + a * kappa_b + b_g1 * kappa_a
        - delta_g1 * (kappa_a * kappa_b)
        - pk.eta_g1 * randomness.kappa;

    let mut affine = E::G1::normalize_batch(&[a, c]).into_iter();
    let (a, c) = (
        affine.next().expect("two points"),
        affine.next().expect("two points"),
    );
    Ok(Proof {
        a,
        b: b_g2.into_affine(),
        c,
    })
}

fn check_inputs<E: Pairing>(
    vk: &VerifyingKey<E>,
    public_inputs: &[E::ScalarField],
) -> Result<(), Error> {
    if vk.ic_query.is_empty() || public_inputs.len() != vk.ic_query.len() - 1 {
        return Err(Error::PublicInputLength {
            expected: vk.num_public_inputs(),
            got: public_inputs.len(),
        });
    }
    Ok(())
}

/// Mirage.Verify: `e(A,B) = e(α,β)·e(IC,γ)·e(C,δ)·e(D,η)`, checked as
/// `e(A,B)·e(−α,β)·e(−IC,γ)·e(−C,δ)·e(−D,η) = 1` with one multi-pairing.
pub fn verify<E: Pairing>(
    vk: &VerifyingKey<E>,
    public_inputs: &[E::ScalarField],
    commitment: &Commitment<E>,
    proof: &Proof<E>,
) -> Result<(), Error> {
    check_inputs(vk, public_inputs)?;
    let ic = vk.ic_query[0].into_group() + E::G1::msm_unchecked(&vk.ic_query[1..], public_inputs);
    let g1 = [
        proof.a.into_group(),
        -vk.alpha_g1.into_group(),
        -ic,
        -proof.c.into_group(),
        -commitment.d.into_group(),
    ];
    let g2 = [proof.b, vk.beta_g2, vk.gamma_g2, vk.delta_g2, vk.eta_g2];
    if E::multi_pairing(E::G1::normalize_batch(&g1), g2).is_zero() {
        Ok(())
    } else {
        Err(Error::VerificationFailed)
    }
}

/// BLAKE2b-256 of `"hekaton/mirage-vk/v1"` and the key's compressed encoding: the name of a
/// Mirage verifying key in the batch transcript ([`batch_weights`]).
impl<E: Pairing> VerifyingKey<E> {
    pub fn digest(&self) -> Result<[u8; 32], Error> {
        let mut h = Blake2b::<U32>::new();
        h.update(b"hekaton/mirage-vk/v1");
        h.update(to_bytes(self)?);
        Ok(h.finalize().into())
    }
}

/// The weights of [`batch_verify`]: nonzero 128-bit scalars drawn from ChaCha20 keyed by
/// BLAKE2b-512 of `"hekaton/mirage-batch/v1"`, the key's [`VerifyingKey::digest`], 32 bytes
/// from `rng`, the number of items and every `(x_i, D_i, π_i)` (compressed, each input list
/// prefixed by its length). The weights are fixed only after everything the batched check
/// reads, so a prover who knows (or picks) the caller's RNG still cannot make two errors
/// cancel: that needs `Σ r_i·e_i = 0` for errors chosen before the `r_i` they determine
/// (probability `≤ 2⁻¹²⁸` per try, a hash evaluation per try). The RNG's bytes keep the
/// weights unpredictable to a prover who does not know them, as before.
pub fn batch_weights<E: Pairing, R: Rng>(
    vk: &VerifyingKey<E>,
    items: &[BatchItem<'_, E>],
    rng: &mut R,
) -> Result<Vec<E::ScalarField>, Error> {
    let mut seed = [0u8; 32];
    rng.fill_bytes(&mut seed);
    let mut h = Blake2b::<U64>::new();
    h.update(b"hekaton/mirage-batch/v1");
    h.update(vk.digest()?);
    h.update(seed);
    h.update((items.len() as u64).to_le_bytes());
    let mut buf = Vec::new();
    for item in items {
        buf.clear();
        buf.extend_from_slice(&(item.public_inputs.len() as u64).to_le_bytes());
        for x in item.public_inputs {
            x.serialize_compressed(&mut buf)?;
        }
        item.commitment.serialize_compressed(&mut buf)?;
        item.proof.serialize_compressed(&mut buf)?;
        h.update(&buf);
    }
    let mut key = [0u8; 32];
    key.copy_from_slice(&h.finalize()[..32]);
    let mut stream = ChaCha20Rng::from_seed(key);
    Ok(items
        .iter()
        .map(|_| loop {
            let x: u128 = stream.gen();
            if x != 0 {
                break E::ScalarField::from(x);
            }
        })
        .collect())
}

/// Verifies many Mirage proofs under one verifying key at once. Each equation `i` is raised to
/// a nonzero 128-bit weight `r_i` ([`batch_weights`]: a hash of the key and every item, mixed
/// with `rng`) and the product is checked with one multi-pairing:
///
/// `Π e(r_i·A_i, B_i) · e(−(Σr_i)·α, β) · e(−Σr_i·IC_i, γ) · e(−Σr_i·C_i, δ) · e(−Σr_i·D_i, η) = 1`,
///
/// i.e. `n + 4` Miller loops and one final exponentiation, against `5n` and `n` for separate
/// verification. A batch that contains an invalid proof passes with probability `≤ 2⁻¹²⁸`
/// per hash evaluation the prover spends, whatever `rng` is (a constant `rng` included:
/// the weights are bound to the items); an empty batch is an error ([`Error::EmptyBatch`]),
/// never a vacuous success.
pub fn batch_verify<E: Pairing, R: Rng>(
    vk: &VerifyingKey<E>,
    items: &[BatchItem<'_, E>],
    rng: &mut R,
) -> Result<(), Error> {
    if items.is_empty() {
        return Err(Error::EmptyBatch);
    }
    for item in items {
        check_inputs(vk, item.public_inputs)?;
    }
    let r = batch_weights(vk, items, rng)?;

    // Σ r_i·IC_i = Σ_j (Σ_i r_i x_{i,j})·[p_j(s)/γ]₁, with x_{i,0} = 1.
    let mut input_comb = vec![E::ScalarField::zero(); vk.ic_query.len()];
    for (item, r_i) in items.iter().zip(&r) {
        input_comb[0] += r_i;
        for (acc, x) in input_comb[1..].iter_mut().zip(item.public_inputs) {
            *acc += *r_i * x;
        }
    }
    let r_sum = input_comb[0];
    let ic = E::G1::msm_unchecked(&vk.ic_query, &input_comb);
    let cs: Vec<E::G1Affine> = items.iter().map(|it| it.proof.c).collect();
    let ds: Vec<E::G1Affine> = items.iter().map(|it| it.commitment.d).collect();
    let c = E::G1::msm_unchecked(&cs, &r);
    let d = E::G1::msm_unchecked(&ds, &r);

    let mut g1: Vec<E::G1> = items
        .iter()
        .zip(&r)
        .map(|(it, r_i)| it.proof.a * r_i)
        .collect();
    g1.extend([-(vk.alpha_g1 * r_sum), -ic, -c, -d]);
    let mut g2: Vec<E::G2Affine> = items.iter().map(|it| it.proof.b).collect();
    g2.extend([vk.beta_g2, vk.gamma_g2, vk.delta_g2, vk.eta_g2]);
    if E::multi_pairing(E::G1::normalize_batch(&g1), g2).is_zero() {
        Ok(())
    } else {
        Err(Error::BatchVerificationFailed)
    }
}
