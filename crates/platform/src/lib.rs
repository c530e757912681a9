//! The platform's job pipeline for Reckle batch jobs, written against the [`Queue`] and
//! [`BlobStore`] traits only, so that the same code runs embedded (in-process queue,
//! filesystem store) and against Redis and S3.
//!
//! Roles (each a loop that can run in its own process or task):
//!
//! * **planner** ([`Platform::submit_reckle`]): validates the job, stores its inputs under
//!   `jobs/<id>/inputs/`, and enqueues one `reckle.leaf` task per bucket of `T'_I`. Invalid jobs
//!   are refused before anything is written.
//! * **worker** ([`Platform::run_worker`]): claims `reckle.leaf` / `reckle.node` tasks, proves the
//!   node (a pure function of the job inputs and the children's proofs, read from the store),
//!   writes the proof to `jobs/<id>/nodes/<level>-<index>.bin` (a fixed key, so a redelivered
//!   task overwrites the same object), reports `reckle.done`, and completes its lease.
//! * **executor** ([`Platform::run_executor`]): consumes `reckle.done` reports and enqueues a
//!   parent once every child of it in `T'_I` is proven, closest to the root first in the sense
//!   that a parent is released the moment its last child lands; the root releases
//!   `reckle.finish`. DAG state is recomputed from the plan and the store (a node is done iff its
//!   proof object exists), so an executor restarted mid-job resumes from the store.
//! * **aggregator** ([`Platform::run_aggregator`]): claims `reckle.finish`, assembles the
//!   statement, **verifies** the root proof, and only then writes the proof directory
//!   `jobs/<id>/proof/` (the files of `reckle::files`) and marks the job done.
//!
//! Not built yet (see the platform issue): the gRPC API, DAG state in Redis shared by several
//! executors, job cancellation, metrics, and the separate service binaries.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use blobstore::{BlobError, BlobStore};
use bytes::Bytes;
use queue::{Lease, Queue, QueueError, TaskMessage};
use reckle::{files, BatchProof, Child, Circuits, NodeId, NodeProof, Params, Statement, Tree};
use tokio::sync::watch;

pub const KIND_LEAF: &str = "reckle.leaf";
pub const KIND_NODE: &str = "reckle.node";
pub const KIND_DONE: &str = "reckle.done";
pub const KIND_FINISH: &str = "reckle.finish";

#[derive(Debug, thiserror::Error)]
pub enum PlatformError {
    #[error("invalid job: {0}")]
    InvalidJob(String),
    #[error(transparent)]
    Queue(#[from] QueueError),
    #[error(transparent)]
    Blob(#[from] BlobError),
    #[error("proof system: {0}")]
    Proof(#[from] reckle::Error),
    #[error("corrupt job data: {0}")]
    Corrupt(String),
}

/// What a Reckle job proves.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct ReckleJobSpec {
    pub log_n: u32,
    pub log_bucket: u32,
    pub batch: Vec<u64>,
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
struct NodeTask {
    level: u32,
    index: u64,
}

/// Final state of a job, as seen by [`Platform::wait`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JobOutcome {
    Running { done: usize, total: usize },
    Done,
    Failed(String),
}

fn node_key(job: &str, id: NodeId) -> String {
    format!("jobs/{job}/nodes/{}-{}.bin", id.level, id.index)
}

/// Shared state of one process running any of the roles.
pub struct Platform {
    queue: Arc<dyn Queue>,
    blobs: Arc<dyn BlobStore>,
    circuits: Mutex<HashMap<Params, Arc<Circuits>>>,
    building: tokio::sync::Mutex<()>,
    jobs: Mutex<HashMap<String, Arc<(ReckleJobSpec, Tree)>>>,
    progress: Mutex<HashMap<String, watch::Sender<JobOutcome>>>,
    /// Parents this executor has already released (a redelivered report must not release a
    /// parent twice; if it did, the duplicate would overwrite the same object with an equal
    /// proof).
    released: Mutex<std::collections::HashSet<(String, NodeId)>>,
    /// Nodes reported proven, per job (progress only).
    proven: Mutex<HashMap<String, BTreeSet<NodeId>>>,
}

impl Platform {
    pub fn new(queue: Arc<dyn Queue>, blobs: Arc<dyn BlobStore>) -> Arc<Self> {
        Arc::new(Self {
            queue,
            blobs,
            circuits: Mutex::new(HashMap::new()),
            building: tokio::sync::Mutex::new(()),
            jobs: Mutex::new(HashMap::new()),
            progress: Mutex::new(HashMap::new()),
            released: Mutex::new(Default::default()),
            proven: Mutex::new(HashMap::new()),
        })
    }

    /// Circuit data per `(ℓ, q)`, built once per process.
    async fn circuits(&self, params: Params) -> Result<Arc<Circuits>, PlatformError> {
        if let Some(c) = self.circuits.lock().expect("mutex").get(&params) {
            return Ok(c.clone());
        }
        // One build at a time: concurrent workers wait for the first instead of building again.
        let _building = self.building.lock().await;
        if let Some(c) = self.circuits.lock().expect("mutex").get(&params) {
            return Ok(c.clone());
        }
        let built = tokio::task::spawn_blocking(move || Circuits::build(params))
            .await
            .map_err(|e| PlatformError::Corrupt(e.to_string()))??;
        let built = Arc::new(built);
        self.circuits.lock().expect("mutex").entry(params).or_insert(built.clone());
        Ok(built)
    }

    /// The job's spec and tree, loaded from the store once per process.
    async fn job(&self, job: &str) -> Result<Arc<(ReckleJobSpec, Tree)>, PlatformError> {
        if let Some(j) = self.jobs.lock().expect("mutex").get(job) {
            return Ok(j.clone());
        }
        let spec: ReckleJobSpec = serde_json::from_slice(&self.blobs.get(&format!("jobs/{job}/inputs/job.json")).await?)
            .map_err(|e| PlatformError::Corrupt(format!("job.json: {e}")))?;
        let values = reckle::decode_values(&self.blobs.get(&format!("jobs/{job}/inputs/leaves.bin")).await?)?;
        let params = Params::new(spec.log_n, spec.log_bucket)?;
        let tree = tokio::task::spawn_blocking(move || Tree::build(params, values))
            .await
            .map_err(|e| PlatformError::Corrupt(e.to_string()))??;
        let j = Arc::new((spec, tree));
        self.jobs.lock().expect("mutex").insert(job.to_string(), j.clone());
        Ok(j)
    }

    /// Planner: validates, stores inputs, enqueues the bucket tasks. Nothing is written for an
    /// invalid job.
    pub async fn submit_reckle(&self, job: &str, spec: ReckleJobSpec, values: Vec<u64>) -> Result<usize, PlatformError> {
        let params = Params::new(spec.log_n, spec.log_bucket).map_err(|e| PlatformError::InvalidJob(e.to_string()))?;
        if values.len() as u64 != params.num_leaves() {
            return Err(PlatformError::InvalidJob(format!(
                "leaves: expected {} values for log_n = {}, got {}",
                params.num_leaves(),
                spec.log_n,
                values.len()
            )));
        }
        let plan = reckle::plan_batch(params, &spec.batch).map_err(|e| PlatformError::InvalidJob(e.to_string()))?;
        if job.is_empty() || !job.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
            return Err(PlatformError::InvalidJob(format!("job id {job:?}: use letters, digits and '-'")));
        }
        let (tx, _) = watch::channel(JobOutcome::Running { done: 0, total: plan.len() });
        self.progress.lock().expect("mutex").insert(job.to_string(), tx);
        self.blobs.put(&format!("jobs/{job}/inputs/leaves.bin"), Bytes::from(reckle::encode_values(&values))).await?;
        let spec_json = serde_json::to_vec(&spec).map_err(|e| PlatformError::Corrupt(e.to_string()))?;
        self.blobs.put(&format!("jobs/{job}/inputs/job.json"), Bytes::from(spec_json)).await?;
        for id in plan.iter().filter(|id| id.level == params.log_bucket) {
            self.enqueue_node(job, *id, KIND_LEAF).await?;
        }
        Ok(plan.len())
    }

    async fn enqueue_node(&self, job: &str, id: NodeId, kind: &str) -> Result<(), PlatformError> {
        let payload = serde_json::to_string(&NodeTask { level: id.level, index: id.index }).expect("serialize");
        self.queue
            .enqueue(kind, TaskMessage { job_id: job.into(), task_id: id.to_string(), payload, failures: 0 })
            .await?;
        Ok(())
    }

    fn task_node(lease: &Lease) -> Result<NodeId, PlatformError> {
        let t: NodeTask = serde_json::from_str(&lease.task.payload).map_err(|e| PlatformError::Corrupt(e.to_string()))?;
        Ok(NodeId::new(t.level, t.index))
    }

    /// Worker: proves one claimed node task.
    async fn prove_task(&self, lease: &Lease) -> Result<(), PlatformError> {
        let job = &lease.task.job_id;
        let id = Self::task_node(lease)?;
        let j = self.job(job).await?;
        let params = Params::new(j.0.log_n, j.0.log_bucket)?;
        let circuits = self.circuits(params).await?;
        let plan: BTreeSet<NodeId> = reckle::plan_batch(params, &j.0.batch)?.into_iter().collect();
        let proof = if id.level == params.log_bucket {
            let selected = reckle::selected_in_bucket(params, &j.0.batch, id.index);
            let (c, j2) = (circuits.clone(), j.clone());
            tokio::task::spawn_blocking(move || reckle::prove_bucket(&c, id.index, j2.1.bucket_values(id.index)?, &selected))
                .await
                .map_err(|e| PlatformError::Corrupt(e.to_string()))??
        } else {
            let mut children = Vec::with_capacity(2);
            for child in id.children() {
                if plan.contains(&child) {
                    let bytes = self.blobs.get(&node_key(job, child)).await?;
                    children.push(Child::Proven(NodeProof::from_bytes(&circuits, &bytes)?));
                } else {
                    children.push(Child::Hash(j.1.hash(child.level, child.index)?));
                }
            }
            let c = circuits.clone();
            tokio::task::spawn_blocking(move || reckle::prove_node(&c, id, &children[0], &children[1]))
                .await
                .map_err(|e| PlatformError::Corrupt(e.to_string()))??
        };
        self.blobs.put(&node_key(job, id), Bytes::from(proof.to_bytes())).await?;
        self.enqueue_node(job, id, KIND_DONE).await
    }

    /// Worker loop for `reckle.leaf` and `reckle.node`, until `stop` is set.
    pub async fn run_worker(self: Arc<Self>, name: String, mut stop: watch::Receiver<bool>) -> Result<(), PlatformError> {
        while !*stop.borrow() {
            let mut claimed = None;
            for kind in [KIND_NODE, KIND_LEAF] {
                if let Some(l) = self.queue.claim(kind, &name, Duration::ZERO).await? {
                    claimed = Some(l);
                    break;
                }
            }
            let Some(lease) = claimed else {
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_millis(20)) => {}
                    _ = stop.changed() => {}
                }
                continue;
            };
            match self.prove_task(&lease).await {
                Ok(()) => match self.queue.complete(&lease).await {
                    Ok(()) | Err(QueueError::StaleLease) => {}
                    Err(e) => return Err(e.into()),
                },
                Err(e) => {
                    tracing::warn!(job = %lease.task.job_id, task = %lease.task.task_id, error = %e, "task failed");
                    if self.queue.fail(&lease, &e.to_string()).await? == queue::FailOutcome::DeadLettered {
                        self.set_outcome(&lease.task.job_id, JobOutcome::Failed(format!("task {}: {e}", lease.task.task_id)));
                    }
                }
            }
        }
        Ok(())
    }

    fn set_outcome(&self, job: &str, outcome: JobOutcome) {
        if let Some(tx) = self.progress.lock().expect("mutex").get(job) {
            let _ = tx.send(outcome);
        }
    }

    /// Executor: releases parents whose children in `T'_I` are all proven.
    async fn handle_done(&self, lease: &Lease) -> Result<(), PlatformError> {
        let job = &lease.task.job_id;
        let id = Self::task_node(lease)?;
        let j = self.job(job).await?;
        let params = Params::new(j.0.log_n, j.0.log_bucket)?;
        let plan: BTreeSet<NodeId> = reckle::plan_batch(params, &j.0.batch)?.into_iter().collect();
        let done = {
            let mut proven = self.proven.lock().expect("mutex");
            let set = proven.entry(job.clone()).or_default();
            set.insert(id);
            set.len()
        };
        self.set_outcome(job, JobOutcome::Running { done, total: plan.len() });
        if id.level == params.log_n {
            return self.enqueue_node(job, id, KIND_FINISH).await;
        }
        let parent = id.parent();
        let siblings_in_plan: Vec<NodeId> = parent.children().into_iter().filter(|c| plan.contains(c)).collect();
        let mut ready = true;
        for c in &siblings_in_plan {
            if !self.blobs.exists(&node_key(job, *c)).await? {
                ready = false;
            }
        }
        // Release the parent once, when the last of its children in T'_I has landed.
        if ready && self.released.lock().expect("mutex").insert((job.clone(), parent)) {
            self.enqueue_node(job, parent, KIND_NODE).await?;
        }
        Ok(())
    }

    /// Executor loop, until `stop` is set.
    pub async fn run_executor(self: Arc<Self>, name: String, mut stop: watch::Receiver<bool>) -> Result<(), PlatformError> {
        while !*stop.borrow() {
            match self.queue.claim(KIND_DONE, &name, Duration::ZERO).await? {
                Some(lease) => {
                    self.handle_done(&lease).await?;
                    let _ = self.queue.complete(&lease).await;
                }
                None => {
                    tokio::select! {
                        _ = tokio::time::sleep(Duration::from_millis(10)) => {}
                        _ = stop.changed() => {}
                    }
                }
            }
        }
        Ok(())
    }

    /// Aggregator: verifies the root proof against the statement and publishes the proof
    /// directory.
    async fn finish(&self, lease: &Lease) -> Result<(), PlatformError> {
        let job = &lease.task.job_id;
        let j = self.job(job).await?;
        let params = Params::new(j.0.log_n, j.0.log_bucket)?;
        let circuits = self.circuits(params).await?;
        let root = NodeProof::from_bytes(&circuits, &self.blobs.get(&node_key(job, NodeId::new(params.log_n, 0))).await?)?;
        let pairs: Vec<(u64, u64)> = j.0.batch.iter().map(|&i| Ok((i, j.1.value(i)?))).collect::<Result<_, reckle::Error>>()?;
        let statement = Statement::new(&circuits, j.1.root(), &pairs)?;
        statement.verify(&circuits, &root)?;
        // Λ_I from the node proofs, for later update jobs.
        let mut lambda_nodes = Vec::new();
        for id in reckle::plan_batch(params, &j.0.batch)? {
            lambda_nodes.push(NodeProof::from_bytes(&circuits, &self.blobs.get(&node_key(job, id)).await?)?);
        }
        let lambda = BatchProof::from_node_proofs(&circuits, &j.1, &j.0.batch, lambda_nodes)?;
        let dir = format!("jobs/{job}/proof");
        self.blobs.put(&format!("{dir}/{}", files::LAMBDA), Bytes::from(lambda.to_bytes())).await?;
        self.blobs.put(&format!("{dir}/{}", files::LEAVES), Bytes::from(reckle::encode_values(j.1.values()))).await?;
        self.blobs.put(&format!("{dir}/{}", files::PROOF), Bytes::from(root.to_bytes())).await?;
        let st = serde_json::to_vec_pretty(&statement).map_err(|e| PlatformError::Corrupt(e.to_string()))?;
        // The statement is written last: its presence marks the job done.
        self.blobs.put(&format!("{dir}/{}", files::STATEMENT), Bytes::from(st)).await?;
        self.set_outcome(job, JobOutcome::Done);
        Ok(())
    }

    /// Aggregator loop, until `stop` is set.
    pub async fn run_aggregator(self: Arc<Self>, name: String, mut stop: watch::Receiver<bool>) -> Result<(), PlatformError> {
        while !*stop.borrow() {
            match self.queue.claim(KIND_FINISH, &name, Duration::ZERO).await? {
                Some(lease) => match self.finish(&lease).await {
                    Ok(()) => {
                        let _ = self.queue.complete(&lease).await;
                    }
                    Err(e) => {
                        self.set_outcome(&lease.task.job_id, JobOutcome::Failed(format!("final verification: {e}")));
                        let _ = self.queue.fail(&lease, &e.to_string()).await;
                    }
                },
                None => {
                    tokio::select! {
                        _ = tokio::time::sleep(Duration::from_millis(20)) => {}
                        _ = stop.changed() => {}
                    }
                }
            }
        }
        Ok(())
    }

    /// Watches a job submitted through this process until it is done or failed, calling
    /// `on_progress` on every change.
    pub async fn wait(&self, job: &str, mut on_progress: impl FnMut(&JobOutcome)) -> JobOutcome {
        let rx = self.progress.lock().expect("mutex").get(job).map(|tx| tx.subscribe());
        let Some(mut rx) = rx else { return JobOutcome::Failed(format!("unknown job {job}")) };
        loop {
            let cur = rx.borrow_and_update().clone();
            on_progress(&cur);
            if !matches!(cur, JobOutcome::Running { .. }) {
                return cur;
            }
            if rx.changed().await.is_err() {
                return JobOutcome::Failed("platform stopped".into());
            }
        }
    }
}
