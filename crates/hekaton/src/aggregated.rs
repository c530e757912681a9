//! Hekaton with its subcircuit proofs aggregated (paper §6.1, DNA.P and DNA.V with Agg of
//! Fig. 6): the proof carries `O(log k)` group elements in place of the `k` commitments and
//! Mirage proofs of [`crate::workflow::HekatonProof`].
//!
//! | step | who | function | input → output |
//! |---|---|---|---|
//! | 0 | trusted setup | [`crate::workflow::setup`], [`Srs::setup`], [`setup`] | circuit → keys; `k` → SRS; keys, SRS → [`AggProvingKey`], [`AggVerifyingKey`] |
//! | 1, 2 | coordinator, workers | [`crate::workflow::coordinator_traces`], [`crate::workflow::worker_commit`] | as in the workflow |
//! | 3a | coordinator | [`coordinator_commit`] | all `D_i` → `cm_D = CM1(D)` (Agg.C) |
//! | 3b | coordinator | [`coordinator_challenge`] | `cm_D`, shares → [`ChallengeRound`] (`(α, β)` from `cm_D`) |
//! | 4 | worker `i` | [`crate::workflow::worker_prove`] | as in the workflow |
//! | 5 | coordinator | [`coordinator_assemble`] | round, `cm_D`, all `D_i`, `π_i` → [`AggregatedProof`] (Agg.P) |
//! | 6 | verifier | [`verify`] | keys, public input, proof → accept/reject |
//!
//! The only change to the workers' side is where `(α, β)` comes from: a BLAKE2b transcript
//! ([`derive_challenge`]) of the verifying key's digest, the aggregate key's digest, the
//! public input and `cm_D`, the paper's `ρ(cm_Agg)` (§6.1): `cm_D` binds every `D_i` (and so
//! the trace slices) as the list of `D_i` does in the unaggregated proof. The Poseidon
//! transcript of [`crate::transcript`] is not used here: it exists so that the depth-1 wrap
//! can recompute the challenge, and the wrap verifies the unaggregated proof.
//!
//! The verifier checks leaf 0 of `rt` against the public input as before, and then one
//! aggregate proof ([`crate::aggregate::verify`]) that every subcircuit's Mirage proof
//! verifies under its own key with the homogenised input `(1, rt, α, β)`.

use ark_crypto_primitives::sponge::Absorb;
use ark_ec::pairing::Pairing;
use ark_serialize::{CanonicalDeserialize, CanonicalSerialize, Compress};
use rand::Rng;

use crate::aggregate::srs::Srs;
use crate::aggregate::transcript::Transcript;
use crate::aggregate::{self, AggCommitment, AggProvingKey, AggVerifyingKey, AggregateProof};
use crate::merkle::{hash_leaf, poseidon_config, verify_path};
use crate::mirage::{self, Commitment, Proof};
use crate::partition::{Partitioned, Subcircuit};
use crate::workflow::{
    challenge_round, coordinator_traces, worker_commit, worker_prove, Challenge, ChallengeRound,
    ProvingKey, VerifyingKey,
};
use crate::{Check, Error};

/// The version of [`AggregatedProof`]'s encoding.
pub const VERSION: u32 = 1;

/// A Hekaton proof whose subcircuit part is one aggregate proof: `cm_D`, the aggregate, the
/// root and the path of leaf 0.
#[derive(Clone, Debug, PartialEq, Eq, CanonicalSerialize, CanonicalDeserialize)]
pub struct AggregatedProof<E: Pairing> {
    /// [`VERSION`].
    pub version: u32,
    pub cm_d: AggCommitment<E>,
    pub aggregate: AggregateProof<E>,
    pub root: E::ScalarField,
    pub input_path: Vec<E::ScalarField>,
}

impl<E: Pairing> Check for AggregatedProof<E> {
    /// The version, the aggregate's own checks, a path of at most
    /// [`crate::merkle::MAX_DEPTH`] nodes.
    fn check(&self) -> Result<(), Error> {
        if self.version != VERSION || self.input_path.len() > crate::merkle::MAX_DEPTH {
            return Err(Error::malformed(
                "aggregated Hekaton proof",
                format!(
                    "version {} (this build reads {VERSION}), a path of {} nodes",
                    self.version,
                    self.input_path.len()
                ),
            ));
        }
        self.aggregate.check()
    }
}

impl<E: Pairing> AggregatedProof<E> {
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        mirage::from_bytes(bytes)
    }

    /// The compressed size in bytes.
    pub fn size(&self) -> usize {
        self.serialized_size(Compress::Yes)
    }
}

/// Agg.G for a Hekaton key: the aggregation keys over subcircuit `i`'s own Mirage key (its
/// shape's key with `(i, addrs…)` folded in, public input `(rt, α, β)`), bound to `vk` by
/// its digest. `srs` must hold at least `k` (rounded up to a power of two) elements; run by
/// the party that ran [`crate::workflow::setup`] (whoever knows the SRS secrets can break the
/// commitments' binding).
pub fn setup<E: Pairing>(
    vk: &VerifyingKey<E>,
    srs: &Srs<E>,
) -> Result<(AggProvingKey<E>, AggVerifyingKey<E>), Error> {
    vk.check()?;
    let keys = (0..vk.num_subcircuits())
        .map(|i| vk.subcircuit_key(i))
        .collect::<Result<Vec<_>, _>>()?;
    aggregate::setup(srs, &keys, vk.digest()?.0)
}

/// Checks that `apk` is the aggregation key [`setup`] makes for `vk` from `apk`'s SRS (see
/// [`aggregate::scheme::check_keys`]): for a prover that did not run the setup.
pub fn check_proving_key<E: Pairing>(
    vk: &VerifyingKey<E>,
    apk: &AggProvingKey<E>,
) -> Result<(), Error> {
    vk.check()?;
    let keys = (0..vk.num_subcircuits())
        .map(|i| vk.subcircuit_key(i))
        .collect::<Result<Vec<_>, _>>()?;
    aggregate::scheme::check_keys(apk, &keys, vk.digest()?.0)
}

/// Checks that the aggregation keys belong to `vk`: its digest, `k` and three public inputs
/// `(rt, α, β)`.
fn check_keys<E: Pairing>(vk: &VerifyingKey<E>, avk: &AggVerifyingKey<E>) -> Result<(), Error> {
    vk.check()?;
    avk.check()?;
    if avk.statement_digest != vk.digest()?.0 {
        return Err(Error::CircuitMismatch(
            "the aggregate verifying key was made for another Hekaton key".into(),
        ));
    }
    let k = vk.num_subcircuits();
    if avk.num_proofs != k as u64 || avk.num_public_inputs != 3 {
        return Err(Error::CircuitMismatch(format!(
            "the aggregate verifying key takes {} proofs with {} inputs, the key has {k} subcircuits with 3",
            avk.num_proofs, avk.num_public_inputs
        )));
    }
    Ok(())
}

/// `(α, β)`: BLAKE2b ([`Transcript`]) of the verifying key's digest, the aggregate key's
/// digest, the public input and `cm_D`.
pub fn derive_challenge<E: Pairing>(
    vk: &VerifyingKey<E>,
    avk: &AggVerifyingKey<E>,
    public_inputs: &[E::ScalarField],
    cm_d: &AggCommitment<E>,
) -> Result<Challenge<E::ScalarField>, Error> {
    let mut t = Transcript::new(b"hekaton/challenge/aggregated");
    t.append(&vk.digest()?.0)?;
    t.append(&avk.digest()?)?;
    t.append(&public_inputs.to_vec())?;
    t.append(cm_d)?;
    Ok(Challenge {
        alpha: t.challenge(),
        beta: t.challenge(),
    })
}

/// Step 3a (Agg.C): `cm_D = CM1(D)` over the `k` commitments, in subcircuit order.
pub fn coordinator_commit<E: Pairing>(
    apk: &AggProvingKey<E>,
    commitments: &[Commitment<E>],
) -> Result<AggCommitment<E>, Error> {
    aggregate::commit(apk, commitments)
}

/// Step 3b: `(α, β)` from `cm_D`, then the leaves, the tree and the workers' messages as in
/// [`crate::workflow::coordinator_challenge`].
pub fn coordinator_challenge<E>(
    vk: &VerifyingKey<E>,
    avk: &AggVerifyingKey<E>,
    public_inputs: &[E::ScalarField],
    shares: &[crate::workflow::WitnessShare<E::ScalarField>],
    cm_d: &AggCommitment<E>,
) -> Result<ChallengeRound<E::ScalarField>, Error>
where
    E: Pairing,
    E::ScalarField: Absorb,
{
    check_keys(vk, avk)?;
    let challenge = derive_challenge(vk, avk, public_inputs, cm_d)?;
    challenge_round(vk, challenge, public_inputs, shares)
}

/// Step 5 (Agg.P): aggregates the `k` commitments and proofs, in subcircuit order, for the
/// public input `(rt, α, β)` of `round`.
pub fn coordinator_assemble<E: Pairing>(
    apk: &AggProvingKey<E>,
    round: &ChallengeRound<E::ScalarField>,
    cm_d: &AggCommitment<E>,
    commitments: &[Commitment<E>],
    proofs: &[Proof<E>],
) -> Result<AggregatedProof<E>, Error> {
    round.check()?;
    let root = round.tree.root()?;
    let x = [root, round.challenge.alpha, round.challenge.beta];
    let aggregate = aggregate::prove(apk, &x, commitments, proofs, cm_d)?;
    Ok(AggregatedProof {
        version: VERSION,
        cm_d: *cm_d,
        aggregate,
        root,
        input_path: round.tree.path(0)?,
    })
}

/// Step 6: accepts iff `avk` belongs to `vk`, leaf 0 of the tree with root `rt` is the public
/// input, and the aggregate shows that every subcircuit's Mirage proof verifies under its own
/// key with public input `(rt, α, β)`, `(α, β)` recomputed from `cm_D` ([`derive_challenge`]).
///
/// Both keys must come from the party that ran the setup (pin them by
/// [`VerifyingKey::digest`] and [`AggVerifyingKey::digest`]). The pairing work is `O(log k)`;
/// checking and hashing `vk` (the layout) is linear in `k` but pairing-free.
pub fn verify<E>(
    vk: &VerifyingKey<E>,
    avk: &AggVerifyingKey<E>,
    public_inputs: &[E::ScalarField],
    proof: &AggregatedProof<E>,
) -> Result<(), Error>
where
    E: Pairing,
    E::ScalarField: Absorb,
{
    check_keys(vk, avk)?;
    proof.check()?;
    if public_inputs.len() != vk.layout.num_public_inputs as usize {
        return Err(Error::PublicInputLength {
            expected: vk.layout.num_public_inputs as usize,
            got: public_inputs.len(),
        });
    }
    let cfg = poseidon_config::<E::ScalarField>();
    if proof.input_path.len() != vk.layout.tree_depth()
        || !verify_path(
            &cfg,
            proof.root,
            0,
            hash_leaf(&cfg, public_inputs),
            &proof.input_path,
        )
    {
        return Err(Error::VerificationFailed);
    }
    let challenge = derive_challenge(vk, avk, public_inputs, &proof.cm_d)?;
    let x = [proof.root, challenge.alpha, challenge.beta];
    aggregate::verify(avk, &x, &proof.cm_d, &proof.aggregate)
}

/// Runs every step on one machine (tests and benchmarks).
pub fn prove<E, S, R>(
    pk: &ProvingKey<E>,
    apk: &AggProvingKey<E>,
    circuit: &Partitioned<E::ScalarField, S>,
    rng: &mut R,
) -> Result<AggregatedProof<E>, Error>
where
    E: Pairing,
    E::ScalarField: Absorb,
    S: Subcircuit<E::ScalarField>,
    R: Rng,
{
    pk.check()?;
    let (_, shares) = coordinator_traces(&pk.vk.layout, circuit, rng)?;
    let (commitments, randomness): (Vec<_>, Vec<_>) = shares
        .iter()
        .map(|s| worker_commit(pk.subcircuit_key(s.index as usize)?, s, rng))
        .collect::<Result<Vec<_>, _>>()?
        .into_iter()
        .unzip();
    let cm_d = coordinator_commit(apk, &commitments)?;
    let round = coordinator_challenge(&pk.vk, &apk.vk, &circuit.public_inputs, &shares, &cm_d)?;
    let proofs = shares
        .iter()
        .enumerate()
        .map(|(i, s)| {
            worker_prove(
                pk,
                &circuit.subcircuits[i],
                &circuit.public_inputs,
                s,
                &commitments[i],
                &randomness[i],
                &round.messages[i],
                rng,
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    coordinator_assemble(apk, &round, &cm_d, &commitments, &proofs)
}
