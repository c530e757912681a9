//! Hekaton jobs (`hekaton.prove`): one large circuit, partitioned into `k` subcircuits proved by
//! separate workers (paper §6.2), checked and published by the aggregator.
//!
//! The steps (a task's id is its index within its step; files: [`prove`] the workers' steps,
//! [`keys`] which keys and where, [`wrap`] the final proof, [`publish`] the aggregator's step and
//! `VerifyProof`, [`objects`] reading and writing them):
//!
//! 1. `hekaton.setup` (worker): the keys of the circuit's structure, made once per
//!    [`CircuitSpec::digest`] and reused by every later job of that structure, and (unless the
//!    job asks for the depth-1 wrap) the aggregation keys of that Hekaton key (paper §5, Agg.G:
//!    an SRS sized to `k` and the aggregate keys, [`hekaton::aggregated::setup`]), made once
//!    per Hekaton key, or (for a `--final` job) the wrap keys of that Hekaton key
//!    ([`wrap`]), made once per Hekaton key; then the coordinator's step 1: the
//!    traces, cut into one witness share per subcircuit. **Every key is made from the operating
//!    system's randomness** (`OsRng`, issue 32): nothing in the store, the job's secret
//!    included, can rebuild a trapdoor.
//! 2. `hekaton.commit` × k (worker `i`): `D_i`, the commitment to its share. Its randomness
//!    `κ_D` is drawn from the job's secret and `i`, so a redelivered commit task writes the same
//!    `D_i` (and the prove task re-derives the randomness rather than storing it).
//! 3. `hekaton.challenge` (worker): once every `D_i` is in, the challenge `(α, β)`, the Merkle
//!    tree and one message per subcircuit (a pure function of the commitments). An aggregating
//!    job draws `(α, β)` from `cm_D = CM1(D)` ([`hekaton::aggregated::coordinator_challenge`]),
//!    a wrapped one from the list of `D_i` (the wrap recomputes that challenge in its circuit).
//! 4. `hekaton.subproof` × k (worker `i`): the Mirage proof of subcircuit `i`, from the spec
//!    (the circuit is rebuilt, never shipped), its share, its message and the keys.
//! 5. `--final` jobs only, `hekaton.wrap` (worker, [`wrap::wrap`]): the final
//!    proof, one Pari proof on BW6-767 of the `k`-proof Hekaton proof, under the wrap key the
//!    setup chose.
//! 6. `hekaton.assemble` (aggregator): aggregates the `k` proofs (Agg.P: GIPA's `log k` rounds
//!    one after the other, each round's multi-exponentiations and pairings parallel) into one
//!    [`AggregatedProof`] of `O(log k)` group elements, **verifies it** under the job's keys, and
//!    only then publishes `proof/{circuit.json, vk.bin, agg-vk.bin, proof.bin, public.json}` —
//!    the directory `prover hekaton verify DIR --vk-digest HEX --agg-vk-digest HEX` checks
//!    offline. A `--final` job (any `k` the platform accepts: [`wrap::check_fits`])
//!    publishes the `k` proofs as `proof.bin` instead (the wrap circuit verifies that form),
//!    verified, and beside it the wrap task's `final.bin` once **it** verifies under the job's
//!    final key against the job's statement ([`wrap::check_final`]).
//!
//! Workers report `hekaton.done`; [`Hekaton::on_done`] (pure) releases each step when the
//! previous is done, the commit and subproof steps a job window at a time ([`Effect::Release`]).
//! Which keys a job uses travels in its task payloads from the setup's report on (the digests
//! of the verifying key, of the aggregate verifying key, and of the final key: a payload
//! without the second is a job that publishes the `k` proofs), so a job's tasks agree on one
//! key even if two jobs of one structure make keys at the same time. The setup also records
//! them (`<job>/hekaton/keys.json`): a redelivered setup reuses them (a new run would draw
//! other keys), and the aggregator refuses a payload that names others.
//!
//! Objects: keys under `hekaton/keys/v2/<spec digest>/<vk digest>/` (`v2`: made from the OS's
//! randomness; the keys under `hekaton/keys/<spec digest>/`, made from job secrets, are never
//! read): `vk.bin` and one Mirage proving key per subcircuit shape, `pk-<shape>.bin` (content
//! addressed, never overwritten with other bytes; `vk.bin` is written last, so its presence
//! means the keys are complete), the aggregation keys under
//! `agg/<aggregate vk digest>/{pk.bin, vk.bin}` there (`vk.bin` last) with an `agg-current`
//! pointer beside them, the wrap keys under `wrap/v3/<final key digest>/` there
//! (`final-key.bin` last, no pointer), and `hekaton/keys/v2/<spec digest>/current` (the digest
//! later jobs reuse); per job `jobs/<id>/hekaton/{share,commit,message,proof}-<i>.bin`,
//! `round.bin`, `keys.json` and (wrapped) `final.bin`.
//!
//! A worker fetches the verifying key and **its own shape's** proving key only, never the
//! whole proving key, and keeps what it decoded in the process's byte-bounded cache
//! ([`crate::cache`]): decoding a key runs the curve and subgroup checks of every point, which
//! costs more than a small subcircuit's proof.

use api::v1 as pb;
use async_trait::async_trait;
use bytes::Bytes;
use hekaton::spec::CircuitSpec;
use queue::Lease;

use super::contract::{self, Effect, Job, Kind, Planned, Progress, Report};
use super::{Submission, Pins, Served, TaskKind};
use crate::error::{corrupt, invalid};
use crate::{layout, Platform, PlatformError};

pub mod keys;
mod objects;
mod prove;
mod publish;
pub mod wrap;
mod wrap_keys;

pub use keys::Keys;
pub use wrap::WRAP;

pub const JOB: &str = "hekaton.prove";
pub const SETUP: TaskKind = TaskKind::new("hekaton.setup", Served::Worker, 3600);
pub const COMMIT: TaskKind = TaskKind::new("hekaton.commit", Served::Worker, 1800);
pub const CHALLENGE: TaskKind = TaskKind::new("hekaton.challenge", Served::Worker, 600);
pub const PROVE: TaskKind = TaskKind::new("hekaton.subproof", Served::Worker, 3600);
pub const DONE: TaskKind = TaskKind::new("hekaton.done", Served::Executor, 300);
pub const ASSEMBLE: TaskKind = TaskKind::new("hekaton.assemble", Served::Aggregator, 1800);

/// The job's secret (32 random bytes under `jobs/<id>/inputs/`, drawn at submission): the seed
/// of its commitments' and proofs' randomness and of the leaf salts (zero knowledge: a
/// redelivered commit task writes the same `D_i`). **No key depends on it**: every setup (the
/// Mirage keys, the aggregation SRS and keys, the wrap keys) draws from the operating system
/// (issue 32), so whoever reads the bucket, even the secret, cannot rebuild a trapdoor.
pub const SECRET: &str = "hekaton-secret.bin";

/// The steps of a Hekaton job, in order (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    Setup,
    Commit,
    Challenge,
    Subproof,
    Wrap,
    Assemble,
}

impl contract::Step for Step {
    const ALL: &'static [Self] = &[Step::Setup, Step::Commit, Step::Challenge, Step::Subproof, Step::Wrap, Step::Assemble];
    fn task(self) -> TaskKind {
        match self {
            Step::Setup => SETUP,
            Step::Commit => COMMIT,
            Step::Challenge => CHALLENGE,
            Step::Subproof => PROVE,
            Step::Wrap => WRAP,
            Step::Assemble => ASSEMBLE,
        }
    }
}

/// What a Hekaton job proves: the circuit `circuit` with inputs from `seed`, on BLS12-381.
/// [`Hekaton::check`] holds its bounds (run on submission and on every decode: a stored spec
/// is input too).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct HekatonJobSpec {
    pub circuit: CircuitSpec,
    pub seed: u64,
    /// Also publish the depth-1 wrap (`final.bin`, `final-key.bin`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub final_proof: bool,
}

impl HekatonJobSpec {
    pub fn new(circuit: CircuitSpec, seed: u64, final_proof: bool) -> Self {
        Self { circuit, seed, final_proof }
    }

    /// The number of subcircuits, each proved by one commit and one subproof task.
    pub fn k(&self) -> u64 {
        self.circuit.num_subcircuits() as u64
    }
}

/// An in-process request for a Hekaton job (what the `hekaton` message gives over gRPC).
pub fn request(circuit: CircuitSpec, seed: u64, final_proof: bool) -> Submission {
    contract::spec_request::<Hekaton>(&HekatonJobSpec::new(circuit, seed, final_proof))
}

/// `hekaton.prove`.
pub struct Hekaton;

#[async_trait]
impl Kind for Hekaton {
    const NAME: &'static str = JOB;
    const REPORT: TaskKind = DONE;
    type Step = Step;
    type Spec = HekatonJobSpec;

    fn from_pb(params: &pb::submit_job_request::Params) -> Option<Result<HekatonJobSpec, PlatformError>> {
        let pb::submit_job_request::Params::Hekaton(p) = params else { return None };
        let n = |v: u32| v as usize;
        let circuit = match p.circuit.as_str() {
            "synthetic" => Ok(CircuitSpec::Synthetic { subcircuits: n(p.subcircuits), steps: n(p.steps), wires: n(p.wires) }),
            "merkle-update" => Ok(CircuitSpec::MerkleUpdate { depth: n(p.depth), updates: n(p.updates), parts: n(p.parts) }),
            other => Err(invalid("circuit", format!("{other:?}; use synthetic or merkle-update"))),
        };
        Some(circuit.map(|c| HekatonJobSpec::new(c, p.seed, p.final_proof)))
    }

    async fn validate(&self, _p: &Platform, _tenant: &str, spec: &mut HekatonJobSpec) -> Result<Planned<Step>, PlatformError> {
        Self::check(spec)?;
        let k = spec.k();
        let mut tasks = vec![(Step::Setup, 1), (Step::Commit, k), (Step::Challenge, 1), (Step::Subproof, k), (Step::Assemble, 1)];
        if spec.final_proof {
            tasks.push((Step::Wrap, 1));
        }
        let mut planned = Planned::tasks(tasks);
        planned.secrets.push((SECRET.to_string(), Bytes::from(rand::random::<[u8; 32]>().to_vec())));
        Ok(planned)
    }

    /// The circuit's bounds (naming `circuit`) and, for a `--final` job, that its wrap fits
    /// BW6-767's largest domain ([`wrap::check_fits`]: every circuit the platform accepts).
    fn check(spec: &HekatonJobSpec) -> Result<(), PlatformError> {
        spec.circuit.check().map_err(|e| invalid("circuit", e.to_string()))?;
        if spec.final_proof {
            wrap::check_fits(spec.circuit.num_subcircuits(), spec.circuit.num_public_inputs())?;
        }
        Ok(())
    }

    fn plan(_spec: &HekatonJobSpec) -> Vec<Effect<Step>> {
        vec![Effect::Dispatch(Step::Setup, 0..1)]
    }

    /// The keys travel from the setup's report on: each task gets the ones its cause names
    /// (every worker reports the keys it worked under).
    fn payload(_spec: &HekatonJobSpec, _step: Step, _index: u64, cause: Option<&Report<Step>>) -> String {
        cause.map(|r| r.payload.clone()).unwrap_or_default()
    }

    async fn work(&self, p: &Platform, job: &Job<Self>, step: Step, index: u64, lease: &Lease) -> Result<String, PlatformError> {
        let (id, spec) = (job.id(), &job.spec);
        if matches!(step, Step::Commit | Step::Subproof) && index >= spec.k() {
            return Err(corrupt(format!("{} task {index} out of range", step_name(step))));
        }
        let keys = Keys::of(&lease.task.payload)?;
        match step {
            Step::Setup => return prove::setup(p, id, spec).await?.payload(),
            Step::Commit => prove::commit(p, id, spec, &keys, index).await?,
            Step::Challenge => prove::challenge(p, id, spec, &keys).await?,
            Step::Subproof => prove::subproof(p, id, spec, &keys, index).await?,
            Step::Wrap => wrap::wrap(p, job, &keys).await?,
            Step::Assemble => return Err(PlatformError::Config(format!("hekaton: {} is not a worker task", ASSEMBLE.name))),
        }
        keys.payload()
    }

    fn on_done(spec: &HekatonJobSpec, progress: &Progress<Step>, report: &Report<Step>) -> Vec<Effect<Step>> {
        let k = spec.k();
        let release = |step| Effect::Release { step, n: k, freed: progress.done(step) };
        match report.step {
            Step::Setup => match Keys::of(&report.payload).and_then(|keys| keys.digest()) {
                Ok(_) => vec![release(Step::Commit)],
                Err(e) => vec![Effect::Fail(format!("the setup reported no keys: {e}"))],
            },
            Step::Commit if progress.complete(Step::Commit) => vec![release(Step::Commit), Effect::Dispatch(Step::Challenge, 0..1)],
            Step::Commit => vec![release(Step::Commit)],
            Step::Challenge => vec![release(Step::Subproof)],
            Step::Subproof if progress.complete(Step::Subproof) => {
                let next = if spec.final_proof { Step::Wrap } else { Step::Assemble };
                vec![release(Step::Subproof), Effect::Dispatch(next, 0..1)]
            }
            Step::Subproof => vec![release(Step::Subproof)],
            Step::Wrap => vec![Effect::Dispatch(Step::Assemble, 0..1)],
            Step::Assemble => vec![Effect::Done],
        }
    }

    async fn finish(&self, p: &Platform, job: &Job<Self>, step: Step, _index: u64, lease: &Lease) -> Result<String, PlatformError> {
        if step != Step::Assemble {
            return Err(PlatformError::Config(format!("hekaton: {} is not an aggregator task", step_name(step))));
        }
        publish::assemble(p, job, &Keys::of(&lease.task.payload)?).await?;
        Ok(String::new())
    }

    async fn verify_outputs(&self, p: &Platform, job: &Job<Self>, pins: Pins<'_>) -> Result<Result<String, String>, PlatformError> {
        publish::verify_outputs(p, job, pins).await
    }

    fn scratch_prefixes(job: &str) -> Vec<String> {
        vec![layout::hekaton_prefix(job), layout::inputs_prefix(job)]
    }

    fn expected_secs() -> u64 {
        7200
    }

    fn limits() -> Vec<crate::limit::Limit> {
        let k = hekaton::spec::MAX_SUBCIRCUITS as u64;
        vec![crate::limit::Limit::new(JOB, "circuit", k, "count", "subcircuits (for chains: updates × parts); with final_proof too")]
    }
}

fn step_name(step: Step) -> &'static str {
    contract::Step::task(step).name
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: CircuitSpec = CircuitSpec::Synthetic { subcircuits: 3, steps: 4, wires: 1 };

    fn keys() -> String {
        Keys { vk: hekaton::workflow::VkDigest([1; 32]).to_string(), ..Keys::default() }.payload().unwrap()
    }

    fn report(step: Step, index: u64) -> Report<Step> {
        Report { step, index, payload: keys() }
    }

    fn release(step: Step, freed: u64) -> Effect<Step> {
        Effect::Release { step, n: 3, freed }
    }

    #[test]
    fn stored_specs_are_checked_when_decoded() {
        let good = HekatonJobSpec::new(CircuitSpec::Synthetic { subcircuits: 2, steps: 4, wires: 1 }, 3, false);
        Hekaton::check(&good).unwrap();
        let json = serde_json::to_string(&good).unwrap();
        let bad: HekatonJobSpec = serde_json::from_str(&json.replace("\"subcircuits\":2", "\"subcircuits\":0")).unwrap();
        assert!(matches!(Hekaton::check(&bad), Err(PlatformError::InvalidJob { field: "circuit", .. })));
    }

    /// The steps follow each other; commit and subproof tasks go a window at a time, the
    /// challenge after the last commitment, the wrap (a `--final` job) or the assembly after
    /// the last subproof, and a setup that names no key fails the job.
    #[test]
    fn each_step_releases_the_next() {
        let spec = HekatonJobSpec::new(SPEC, 1, false);
        assert_eq!(Hekaton::plan(&spec), vec![Effect::Dispatch(Step::Setup, 0..1)]);
        let at = |counts: &[(Step, u64, u64)], step, index| Hekaton::on_done(&spec, &Progress::of(counts), &report(step, index));
        assert_eq!(at(&[(Step::Setup, 1, 1)], Step::Setup, 0), vec![release(Step::Commit, 0)]);
        assert_eq!(at(&[(Step::Commit, 2, 3)], Step::Commit, 0), vec![release(Step::Commit, 2)]);
        assert_eq!(at(&[(Step::Commit, 3, 3)], Step::Commit, 2), vec![release(Step::Commit, 3), Effect::Dispatch(Step::Challenge, 0..1)]);
        assert_eq!(at(&[(Step::Challenge, 1, 1)], Step::Challenge, 0), vec![release(Step::Subproof, 0)]);
        assert_eq!(at(&[(Step::Subproof, 1, 3)], Step::Subproof, 1), vec![release(Step::Subproof, 1)]);
        assert_eq!(at(&[(Step::Subproof, 3, 3)], Step::Subproof, 0), vec![release(Step::Subproof, 3), Effect::Dispatch(Step::Assemble, 0..1)]);
        assert_eq!(at(&[(Step::Assemble, 1, 1)], Step::Assemble, 0), vec![Effect::Done]);
        let wrapped = HekatonJobSpec::new(SPEC, 1, true);
        let done = Progress::of(&[(Step::Subproof, 3, 3)]);
        assert_eq!(Hekaton::on_done(&wrapped, &done, &report(Step::Subproof, 2)), vec![release(Step::Subproof, 3), Effect::Dispatch(Step::Wrap, 0..1)]);
        assert_eq!(Hekaton::on_done(&wrapped, &Progress::of(&[(Step::Wrap, 1, 1)]), &report(Step::Wrap, 0)), vec![Effect::Dispatch(Step::Assemble, 0..1)]);
        let keyless = Report { step: Step::Setup, index: 0, payload: String::new() };
        assert!(matches!(Hekaton::on_done(&spec, &Progress::of(&[(Step::Setup, 1, 1)]), &keyless)[..], [Effect::Fail(_)]));
    }

    /// The keys travel on: every task after the setup gets the payload of the report that
    /// released it; the setup gets none.
    #[test]
    fn the_keys_travel_in_the_payloads() {
        let spec = HekatonJobSpec::new(SPEC, 1, false);
        assert_eq!(Hekaton::payload(&spec, Step::Setup, 0, None), "");
        assert_eq!(Hekaton::payload(&spec, Step::Commit, 2, Some(&report(Step::Setup, 0))), keys());
    }
}
