//! The typed job-kind contract: a kind is one file implementing [`Kind`], plus its proto
//! message. Everything a kind used to copy (decode the spec, check the job is alive, parse the
//! step from a queue name, count a report once, dispatch once per task id, end the job) is done
//! once, here, by the adaptor [`Typed`], which implements the role-facing [`JobKind`].
//!
//! Parse once, then apply (as mini-redis parses a frame into a `Command` and applies it):
//!
//! 1. **Submission.** [`Kind::from_pb`] turns the kind's proto message into its typed
//!    [`Kind::Spec`]; in-process callers build the spec themselves ([`spec_request`]).
//!    [`Kind::validate`] checks it and says how many tasks each step plans. The spec is
//!    recorded as JSON and decoded once per task by the adaptor.
//! 2. **Planning.** [`Kind::plan`] is pure: the spec in, [`Effect`]s out.
//! 3. **Work.** [`Kind::work`] runs a step's task `index` on a worker and returns what it found
//!    out (a payload for the report); the adaptor sends the report to [`Kind::REPORT`].
//! 4. **Reports.** The adaptor counts the report once per task, then [`Kind::on_done`], a pure
//!    function of the spec, the job's progress and the report, says what follows: tasks to
//!    dispatch, the job done, or failed. It is tested without Redis (see `noop.rs`).
//! 5. **Finish** (optional, aggregator steps) and **verify** ([`Kind::verify_outputs`], required:
//!    a kind that does not say how its outputs are verified does not compile).
//!
//! The state machine is explicit: the steps are an enum ([`Step`]), each variant one task kind;
//! a task's id is its index within its step; a job's state is its record's per-step done counts
//! ([`Progress`]). Job kinds and task kinds are separate namespaces: the registry refuses a task
//! kind named like a job kind.

use std::collections::BTreeMap;
use std::marker::PhantomData;
use std::ops::Range;
use std::sync::Arc;

use api::v1 as pb;
use async_trait::async_trait;
use bytes::Bytes;
use jobs::JobRecord;
use queue::Lease;
use serde::de::DeserializeOwned;
use serde::Serialize;

use super::{JobKind, Pins, Submission, TaskKind, Validated};
use crate::error::corrupt;
use crate::{Ending, Platform, PlatformError};

/// One step of a job kind: a task kind it owns, as a value.
pub trait Step: Copy + Eq + std::fmt::Debug + Send + Sync + 'static {
    /// Every step, in the order a job goes through them.
    const ALL: &'static [Self];
    /// The step's task kind (queue name, role, deadline).
    fn task(self) -> TaskKind;
    /// The step of a task kind name.
    fn of(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|s| s.task().name == name)
    }
}

/// What the executor does next, as [`Kind::plan`] and [`Kind::on_done`] decide it. Every
/// effect is idempotent: saying it again (a report delivered twice) changes nothing more.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Effect<S> {
    /// Dispatch the tasks `indices` of `step` (each at most once, however often this is said).
    Dispatch(S, Range<u64>),
    /// Release the tasks `0..n` of `step` in index order, fair share (see [`super::Window`]):
    /// at most the job's share of them beyond the `freed` whose work is over. The adaptor keeps
    /// the step's release mark; say it when the step starts and again on each report that
    /// frees a place (`freed` counts the tasks whose end frees one: the step's own done tasks,
    /// or a later step's when each of its tasks follows one of these).
    Release { step: S, n: u64, freed: u64 },
    /// Dispatch task `index` of `step` once every task `after` of step `of` is done (a bundle
    /// after its prove range, a parent after its children). Said on each report of `of`; the
    /// adaptor checks the range's done set.
    Join { step: S, index: u64, of: S, after: Range<u64> },
    /// The job's outputs are published: it ends `done`.
    Done,
    /// The job ends `failed` with this reason.
    Fail(String),
}

/// A job's progress as the pure functions see it: per step, tasks planned and done.
#[derive(Clone, Debug)]
pub struct Progress<S> {
    counts: BTreeMap<String, jobs::TaskCounts>,
    _step: PhantomData<S>,
}

impl<S: Step> Progress<S> {
    /// From per-task-kind counts (a job record's).
    pub fn new(counts: BTreeMap<String, jobs::TaskCounts>) -> Self {
        Self { counts, _step: PhantomData }
    }
    /// Tasks of `step` done.
    pub fn done(&self, step: S) -> u64 {
        self.counts.get(step.task().name).map_or(0, |c| c.done)
    }
    /// Tasks of `step` planned.
    pub fn total(&self, step: S) -> u64 {
        self.counts.get(step.task().name).map_or(0, |c| c.total)
    }
    /// Every task of `step` is done.
    pub fn complete(&self, step: S) -> bool {
        self.done(step) >= self.total(step)
    }
    /// From `(step, done, total)` for each step (what a pure `on_done` test starts from).
    pub fn of(counts: &[(S, u64, u64)]) -> Self {
        Self::new(counts.iter().map(|&(s, done, total)| (s.task().name.to_string(), jobs::TaskCounts { total, done })).collect())
    }
}

/// A worker's report on task `index` of `step`, with what the task found out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report<S> {
    pub step: S,
    pub index: u64,
    pub payload: String,
}

/// A job of kind `K` as its tasks see it: the record, with the spec decoded (once per process:
/// see [`Kind::resident_bytes`]).
pub struct Job<K: Kind> {
    pub record: JobRecord,
    pub spec: Arc<K::Spec>,
    /// The job's window (`--job-window` when it was submitted; `None`: every task at once),
    /// recorded with the spec so that every executor slides the same one.
    pub window: Option<u64>,
}

impl<K: Kind> Job<K> {
    pub fn id(&self) -> &str {
        &self.record.id
    }
}

/// A spec as the job records it: the kind's fields and, beside them, what the platform adds
/// (the window). Specs recorded without a window decode with none (every task at once), as
/// they were released.
#[derive(serde::Serialize, serde::Deserialize)]
struct Recorded<S> {
    #[serde(flatten)]
    spec: S,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    window: Option<u64>,
}

/// Bad input a task found (a witness that breaks a constraint, a proof that does not verify):
/// the adaptor ends the job failed with `reason`, as it is; kind code never ends a job itself.
pub fn reject(reason: impl Into<String>) -> PlatformError {
    PlatformError::Rejected(reason.into())
}

/// What [`Kind::validate`] accepts: tasks planned per step, and the objects to store.
pub struct Planned<S> {
    pub tasks: Vec<(S, u64)>,
    /// Objects stored under `jobs/<id>/inputs/` (part of the idempotency fingerprint).
    pub inputs: Vec<(String, Bytes)>,
    /// Objects stored there but left out of the fingerprint (secrets drawn per job).
    pub secrets: Vec<(String, Bytes)>,
    /// Uploads the object store copies into the inputs (see [`super::Validated::copies`]).
    pub copies: Vec<super::InputCopy>,
}

impl<S> Planned<S> {
    pub fn tasks(tasks: Vec<(S, u64)>) -> Self {
        Self { tasks, inputs: Vec::new(), secrets: Vec::new(), copies: Vec::new() }
    }
}

/// One job kind on the typed contract (see the module doc). Wrap it in [`Typed`] to register it.
#[async_trait]
pub trait Kind: Send + Sync + Sized + 'static {
    /// The job kind as recorded, e.g. `noop`.
    const NAME: &'static str;
    /// The executor task kind the kind's reports go to.
    const REPORT: TaskKind;
    /// Its steps (task kinds other than [`Kind::REPORT`]).
    type Step: Step;
    /// The validated request, recorded with the job (JSON, at most `jobs::MAX_SPEC_BYTES`).
    type Spec: Serialize + DeserializeOwned + Send + Sync;

    /// The spec of a `SubmitJob` request, if its params are this kind's message (`None`: another
    /// kind's). Field errors name the proto field.
    fn from_pb(params: &pb::submit_job_request::Params) -> Option<Result<Self::Spec, PlatformError>>;
    /// Checks a spec for `tenant` (nothing is written for a spec refused here) and plans it.
    /// It may complete the spec with what the request names and the platform resolves now (a
    /// registered circuit's curve and key digest), which the job then records; [`Kind::check`]
    /// runs on the completed spec.
    async fn validate(&self, p: &Platform, tenant: &str, spec: &mut Self::Spec) -> Result<Planned<Self::Step>, PlatformError>;
    /// The tasks dispatched when the job is planned. Pure.
    fn plan(spec: &Self::Spec) -> Vec<Effect<Self::Step>>;
    /// The bounds every recorded spec keeps, checked after [`Kind::validate`] and again
    /// whenever a record is decoded (a spec read back from a shared job store is input too: a
    /// zero divisor in it would otherwise panic an executor; found by `crates/fuzz`). Pure;
    /// errors name the request field. Default: none.
    fn check(spec: &Self::Spec) -> Result<(), PlatformError> {
        let _ = spec;
        Ok(())
    }
    /// A dispatched task's payload (default none): what the task needs beyond the spec and its
    /// index, given the report whose effect dispatches it (`None` when the job is planned).
    /// What one task finds out travels on this way (Pari's key digest, from its setup's report
    /// to every task after it) without a shared object to agree on.
    fn payload(spec: &Self::Spec, step: Self::Step, index: u64, cause: Option<&Report<Self::Step>>) -> String {
        let _ = (spec, step, index, cause);
        String::new()
    }
    /// A worker's task: step `step`'s task `index` of `job`. Returns the report's payload.
    async fn work(&self, p: &Platform, job: &Job<Self>, step: Self::Step, index: u64, lease: &Lease) -> Result<String, PlatformError>;
    /// What follows a report. Pure: `progress` already counts it. A report delivered twice
    /// (a redelivered task, an executor cut short) is given to it again with the same or later
    /// progress; the effects are idempotent, so saying them again is safe.
    fn on_done(spec: &Self::Spec, progress: &Progress<Self::Step>, report: &Report<Self::Step>) -> Vec<Effect<Self::Step>>;
    /// What a report tells beyond the job's state (metrics, benchmarks), seen by the executor
    /// before [`Kind::on_done`] (default: nothing).
    fn observe(report: &Report<Self::Step>) {
        let _ = report;
    }
    /// An aggregator step's task (default: the kind has none).
    async fn finish(&self, p: &Platform, job: &Job<Self>, step: Self::Step, index: u64, lease: &Lease) -> Result<String, PlatformError> {
        let _ = (p, job, index, lease);
        Err(PlatformError::Config(format!("job kind {} has no aggregator step {:?}", Self::NAME, step)))
    }
    /// `VerifyProof` on a done job (see [`JobKind::verify_outputs`]).
    async fn verify_outputs(&self, p: &Platform, job: &Job<Self>, pins: Pins<'_>) -> Result<Result<String, String>, PlatformError>;
    /// Object prefixes of a job's intermediate data (deleted with its inputs when the job ends).
    fn scratch_prefixes(job: &str) -> Vec<String> {
        let _ = job;
        Vec::new()
    }
    /// What a done job keeps of its intermediate data and inputs because later jobs read it
    /// (see [`JobKind::kept_when_done`]). Default: nothing.
    fn kept_when_done(job: &str) -> Vec<String> {
        let _ = job;
        Vec::new()
    }
    /// Run by a worker that serves this kind before it claims anything, with the kind's jobs
    /// that have not ended (see [`JobKind::warm_up`]). Default: nothing to prepare.
    async fn warm_up(&self, p: &Platform, active: &[Job<Self>]) -> Result<(), PlatformError> {
        let _ = (p, active);
        Ok(())
    }
    /// Bytes a decoded spec holds beyond its JSON (what [`Kind::check`] derived from it and
    /// kept in it, e.g. Reckle's node sets): a process decodes each job's spec once and keeps
    /// it in its byte-bounded cache ([`crate::cache`]), so the per-job state the pure functions
    /// read is derived once per process, not once per report. Default: nothing beyond.
    fn resident_bytes(spec: &Self::Spec) -> u64 {
        let _ = spec;
        0
    }
    /// See [`JobKind::expected_secs`].
    fn expected_secs() -> u64 {
        3600
    }
    /// See [`JobKind::limits`].
    fn limits() -> Vec<crate::limit::Limit> {
        Vec::new()
    }
    /// Every task kind of the kind: its steps, then [`Kind::REPORT`].
    fn task_kinds() -> Vec<TaskKind> {
        Self::Step::ALL.iter().map(|s| s.task()).chain([Self::REPORT]).collect()
    }
}

/// An in-process request for a kind on the typed contract (what [`Kind::from_pb`] gives over
/// gRPC): the spec, as the job will record it.
pub fn spec_request<K: Kind>(spec: &K::Spec) -> Submission {
    Submission { kind: K::NAME, json: serde_json::to_string(spec).expect("a spec serialises") }
}

/// The report message a worker sends: step, index and payload.
#[derive(serde::Serialize, serde::Deserialize)]
struct ReportMessage {
    step: String,
    index: u64,
    payload: String,
}

/// A [`Kind`] as the roles see it: the adaptor that does, once, what each kind would copy.
pub struct Typed<K: Kind> {
    kind: K,
    /// [`Kind::task_kinds`], leaked once (the registry hands out `&'static` lists).
    tasks: &'static [TaskKind],
}

impl<K: Kind> Typed<K> {
    pub fn new(kind: K) -> Self {
        Self { kind, tasks: Box::leak(K::task_kinds().into_boxed_slice()) }
    }

    /// The job, if it has not ended (a task of a job that has ended does nothing). For an
    /// ended job the intermediate objects and inputs are deleted again: a worker may have
    /// written one after the ending's clean-up.
    async fn live(p: &Platform, job: &str) -> Result<Option<Job<K>>, PlatformError> {
        let Some(record) = p.job_store().get(job).await? else { return Ok(None) };
        if record.state.is_terminal() {
            p.delete_ended_objects(&record).await?;
            return Ok(None);
        }
        let (spec, window) = decoded::<K>(p, &record)?;
        Ok(Some(Job { record, spec, window }))
    }

    fn step_index(task: TaskKind, lease: &Lease) -> Result<(K::Step, u64), PlatformError> {
        let step = K::Step::of(task.name).ok_or_else(|| corrupt(format!("{}: task kind {} is not one of its steps", K::NAME, task.name)))?;
        let index = lease.task.task_id.parse().map_err(|_| corrupt(format!("{}: task id {:?} is not an index", K::NAME, lease.task.task_id)))?;
        Ok((step, index))
    }

    /// Carries out effects for `job`.
    async fn apply(p: &Platform, job: &Job<K>, cause: Option<&Report<K::Step>>, effects: Vec<Effect<K::Step>>) -> Result<(), PlatformError> {
        let id = job.id();
        for e in effects {
            match e {
                Effect::Dispatch(step, range) => Self::dispatch(p, job, step, range, cause).await?,
                Effect::Release { step, n, freed } => {
                    let window = super::Window { step: step.task().name, n, cap: job.window };
                    let due = window.due(p, &job.record, freed).await?;
                    if !due.is_empty() {
                        Self::dispatch(p, job, step, due.clone(), cause).await?;
                        window.released(p, id, due.end).await?;
                    }
                }
                Effect::Join { step, index, of, after } => {
                    let mut ready = true;
                    for i in after {
                        if !p.job_store().is_done(id, &report_id(of.task(), i)).await? {
                            ready = false;
                            break;
                        }
                    }
                    if ready {
                        Self::dispatch(p, job, step, index..index + 1, cause).await?;
                    }
                }
                Effect::Done => {
                    p.end(id, Ending::Done).await?;
                }
                Effect::Fail(reason) => {
                    p.end(id, Ending::Failed(&reason)).await?;
                }
            }
        }
        Ok(())
    }

    /// Dispatches the tasks `range` of `step` (each at most once).
    async fn dispatch(p: &Platform, job: &Job<K>, step: K::Step, range: Range<u64>, cause: Option<&Report<K::Step>>) -> Result<(), PlatformError> {
        /// Tasks enqueued per round trip.
        const CHUNK: u64 = 500;
        let mut next = range.start;
        while next < range.end {
            let end = (next + CHUNK).min(range.end);
            p.dispatch_many(job.id(), step.task(), (next..end).map(|i| (i.to_string(), K::payload(&job.spec, step, i, cause)))).await?;
            next = end;
        }
        Ok(())
    }

    async fn run_step(&self, p: &Platform, task: TaskKind, lease: &Lease, aggregator: bool) -> Result<(), PlatformError> {
        let (step, index) = Self::step_index(task, lease)?;
        let Some(job) = Self::live(p, &lease.task.job_id).await? else { return Ok(()) };
        let done = if aggregator { self.kind.finish(p, &job, step, index, lease).await } else { self.kind.work(p, &job, step, index, lease).await };
        let payload = match done {
            Ok(payload) => payload,
            Err(PlatformError::Rejected(reason)) => {
                p.end(job.id(), Ending::Failed(&reason)).await?;
                return Ok(());
            }
            Err(e) => return Err(e),
        };
        report::<K>(p, lease, step, index, payload).await
    }
}

/// Sends a worker's report on task `index` of `step` (leased as `lease`) with `payload`: what
/// the adaptor does after [`Kind::work`] or [`Kind::finish`] (and what a test that plays a
/// worker sends).
pub async fn report<K: Kind>(p: &Platform, lease: &Lease, step: K::Step, index: u64, payload: String) -> Result<(), PlatformError> {
    let task = step.task();
    let m = ReportMessage { step: task.name.to_string(), index, payload };
    // The report's message id names the step as well as the index (the reports of every
    // step share one queue; step indices alone repeat).
    let mut report = lease.clone();
    report.task.task_id = report_id(task, index);
    p.report_with(&report, K::REPORT, serde_json::to_string(&m).map_err(corrupt)?).await
}

/// The id of task `index` of the step with task kind `task` among all the job's tasks: its
/// report's message id and its entry in the job's done set (a step's index alone repeats
/// across steps: the second step's task 0 was counted as the first's, and its job stalled).
fn report_id(task: TaskKind, index: u64) -> String {
    format!("{}:{index}", task.name)
}

/// The spec a job of kind `K` recorded, decoded and checked (for readers outside its tasks,
/// e.g. a cross-job bundle reading done jobs).
pub fn spec_of<K: Kind>(rec: &JobRecord) -> Result<K::Spec, PlatformError> {
    decode::<K>(rec).map(|r| r.spec)
}

/// A recorded spec, decoded and checked once per process: kept in the process's cache under the
/// job's id (a job's spec never changes), its size the JSON's and [`Kind::resident_bytes`].
fn decoded<K: Kind>(p: &Platform, rec: &JobRecord) -> Result<(Arc<K::Spec>, Option<u64>), PlatformError> {
    let key = format!("spec/{}/{}", K::NAME, rec.id);
    if let Some(d) = p.cache().get::<(Arc<K::Spec>, Option<u64>)>(&key) {
        return Ok((d.0.clone(), d.1));
    }
    let Recorded { spec, window } = decode::<K>(rec)?;
    let bytes = 2 * rec.spec.len() as u64 + K::resident_bytes(&spec);
    let spec = Arc::new(spec);
    p.cache().put(&key, Arc::new((spec.clone(), window)), bytes);
    Ok((spec, window))
}

/// A recorded spec, decoded.
fn decode<K: Kind>(rec: &JobRecord) -> Result<Recorded<K::Spec>, PlatformError> {
    let r: Recorded<K::Spec> = serde_json::from_str(&rec.spec).map_err(|e| corrupt(format!("job {} spec: {e}", rec.id)))?;
    K::check(&r.spec).map_err(|e| corrupt(format!("job {} spec: {e}", rec.id)))?;
    Ok(r)
}

#[async_trait]
impl<K: Kind> JobKind for Typed<K> {
    fn name(&self) -> &'static str {
        K::NAME
    }

    fn task_kinds(&self) -> &'static [TaskKind] {
        self.tasks
    }

    fn from_pb(&self, params: &pb::submit_job_request::Params) -> Option<Result<Submission, PlatformError>> {
        K::from_pb(params).map(|r| r.map(|spec| spec_request::<K>(&spec)))
    }

    async fn validate(&self, p: &Platform, tenant: &str, request: Submission) -> Result<Validated, PlatformError> {
        let Submission { kind, json } = request;
        if kind != K::NAME {
            return Err(PlatformError::Config(format!("{}: a request for {kind}", K::NAME)));
        }
        let mut spec: K::Spec = serde_json::from_str(&json).map_err(|e| PlatformError::Config(format!("{}: spec: {e}", K::NAME)))?;
        let planned = self.kind.validate(p, tenant, &mut spec).await?;
        K::check(&spec)?;
        let recorded = Recorded { spec, window: Some(p.config().job_window.max(1)) };
        Ok(Validated {
            // Recorded as the kind serialises it (so the record is what the tasks decode).
            spec: serde_json::to_string(&recorded).map_err(corrupt)?,
            inputs: planned.inputs,
            tasks: planned.tasks.into_iter().map(|(s, n)| (s.task().name, n)).collect(),
            secrets: planned.secrets,
            copies: planned.copies,
        })
    }

    async fn plan(&self, p: &Platform, job: &JobRecord) -> Result<(), PlatformError> {
        let (spec, window) = decoded::<K>(p, job)?;
        let effects = K::plan(&spec);
        Self::apply(p, &Job { record: job.clone(), spec, window }, None, effects).await
    }

    async fn work(&self, p: &Platform, task: TaskKind, lease: &Lease) -> Result<(), PlatformError> {
        self.run_step(p, task, lease, false).await
    }

    async fn finish(&self, p: &Platform, task: TaskKind, lease: &Lease) -> Result<(), PlatformError> {
        self.run_step(p, task, lease, true).await
    }

    async fn on_done(&self, p: &Platform, task: TaskKind, lease: &Lease) -> Result<(), PlatformError> {
        if task != K::REPORT {
            return Err(corrupt(format!("{}: {} is not its report kind", K::NAME, task.name)));
        }
        let m: ReportMessage = serde_json::from_str(&lease.task.payload).map_err(|e| corrupt(format!("{} report: {e}", K::NAME)))?;
        let step = K::Step::of(&m.step).ok_or_else(|| corrupt(format!("{} report: unknown step {:?}", K::NAME, m.step)))?;
        let job = &lease.task.job_id;
        // Counted once per task. The effects are derived and applied again for a report that
        // arrives twice (each is idempotent): an executor cut short after counting a report and
        // before applying them leaves them to the redelivery.
        // Per job, the store keeps one set of done task ids for every step: the id names both.
        match p.job_store().task_done(job, step.task().name, &report_id(step.task(), m.index)).await {
            Ok(_) => {}
            Err(jobs::JobError::NotFound(_)) => return Ok(()),
            Err(e) => return Err(e.into()),
        }
        let Some(live) = Self::live(p, job).await? else { return Ok(()) };
        let progress = Progress::new(live.record.tasks.clone());
        let report = Report { step, index: m.index, payload: m.payload };
        K::observe(&report);
        let effects = K::on_done(&live.spec, &progress, &report);
        Self::apply(p, &live, Some(&report), effects).await
    }

    async fn verify_outputs(&self, p: &Platform, job: &JobRecord, pins: Pins<'_>) -> Result<Result<String, String>, PlatformError> {
        let (spec, window) = decoded::<K>(p, job)?;
        self.kind.verify_outputs(p, &Job { record: job.clone(), spec, window }, pins).await
    }

    fn scratch_prefixes(&self, job: &str) -> Vec<String> {
        K::scratch_prefixes(job)
    }

    fn kept_when_done(&self, job: &str) -> Vec<String> {
        K::kept_when_done(job)
    }

    async fn warm_up(&self, p: &Platform, active: &[JobRecord]) -> Result<(), PlatformError> {
        let mut jobs = Vec::with_capacity(active.len());
        for record in active {
            // A spec that does not decode is no reason not to serve: its own tasks say why.
            if let Ok((spec, window)) = decoded::<K>(p, record) {
                jobs.push(Job { record: record.clone(), spec, window });
            }
        }
        self.kind.warm_up(p, &jobs).await
    }

    fn expected_secs(&self) -> u64 {
        K::expected_secs()
    }

    fn limits(&self) -> Vec<crate::limit::Limit> {
        K::limits()
    }
}
