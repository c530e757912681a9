//! A load generator over the platform's gRPC API.
//!
//! A [`Scenario`] (TOML) names the endpoint, how long to submit, the target rate, how many
//! jobs may be in flight, and a weighted mix of job templates. [`run`] submits jobs at the
//! target rate (a job waits when `clients` jobs are already in flight, and counts as late),
//! follows each with `WatchJob` until it ends, and returns a [`Report`]: accepted, rejected,
//! completed, failed; throughput; submit→done latency percentiles overall and per kind; one
//! row per job (for the CSV).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use api::v1 as pb;
use rand::Rng;
use tokio::sync::{Mutex, Semaphore};

#[derive(Clone, Debug, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub endpoint: String,
    /// Seconds during which jobs are submitted.
    pub duration_secs: f64,
    /// Target submissions per second.
    pub rate_per_sec: f64,
    /// Jobs in flight at most (submitted and not yet ended).
    #[serde(default = "default_clients")]
    pub clients: usize,
    /// Seconds to wait for jobs still running after the submission window.
    #[serde(default = "default_drain")]
    pub drain_secs: f64,
    pub mix: Vec<Template>,
}

fn default_clients() -> usize {
    8
}
fn default_drain() -> f64 {
    600.0
}

/// One job template with its weight in the mix.
#[derive(Clone, Debug, serde::Deserialize, serde::Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Template {
    /// A Reckle batch job over `2^log_n` random leaves, `batch` random indices.
    Reckle { weight: u32, log_n: u32, log_bucket: u32, batch: u64 },
    /// A Pari batch job.
    Pari { weight: u32, circuit: String, size: u64, count: u64, proofs_per_task: Option<u64>, bundle_size: Option<u64> },
    /// A Hekaton job: `circuit = "synthetic"` with `subcircuits`, `steps`, `wires`, or
    /// `"merkle-update"` with `depth`, `updates`, `parts`; a random seed per job. Jobs of one
    /// template share the circuit structure, so after the first they reuse its keys.
    Hekaton {
        weight: u32,
        circuit: String,
        #[serde(default)]
        subcircuits: u32,
        #[serde(default)]
        steps: u32,
        #[serde(default)]
        wires: u32,
        #[serde(default)]
        depth: u32,
        #[serde(default)]
        updates: u32,
        #[serde(default)]
        parts: u32,
    },
}

impl Template {
    fn weight(&self) -> u32 {
        match self {
            Template::Reckle { weight, .. } | Template::Pari { weight, .. } | Template::Hekaton { weight, .. } => *weight,
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Template::Reckle { .. } => "reckle.batch",
            Template::Pari { .. } => "pari.batch",
            Template::Hekaton { .. } => "hekaton.prove",
        }
    }

    fn request(&self, rng: &mut impl Rng) -> pb::SubmitJobRequest {
        let params = match self {
            Template::Reckle { log_n, log_bucket, batch, .. } => {
                let n = 1u64 << log_n;
                let values: Vec<u64> = (0..n).map(|_| rng.gen()).collect();
                let mut idx: Vec<u64> = rand::seq::index::sample(rng, n as usize, (*batch).min(n) as usize).into_iter().map(|i| i as u64).collect();
                idx.sort_unstable();
                pb::submit_job_request::Params::ReckleBatch(pb::ReckleBatchParams {
                    log_n: *log_n,
                    log_bucket: *log_bucket,
                    batch: idx,
                    leaves: Some(pb::reckle_batch_params::Leaves::Inline(pb::LeafValues { values })),
                    final_proof: false,
                })
            }
            Template::Pari { circuit, size, count, proofs_per_task, bundle_size, .. } => pb::submit_job_request::Params::PariBatch(pb::PariBatchParams {
                circuit: circuit.clone(),
                size: *size,
                seed_start: rng.gen_range(0..1 << 40),
                count: *count,
                proofs_per_task: proofs_per_task.unwrap_or(0),
                bundle_size: bundle_size.unwrap_or(0),
            }),
            Template::Hekaton { circuit, subcircuits, steps, wires, depth, updates, parts, .. } => {
                pb::submit_job_request::Params::Hekaton(pb::HekatonParams {
                    circuit: circuit.clone(),
                    subcircuits: *subcircuits,
                    steps: *steps,
                    wires: *wires,
                    depth: *depth,
                    updates: *updates,
                    parts: *parts,
                    seed: rng.gen_range(0..1 << 40),
                    final_proof: false,
                })
            }
        };
        pb::SubmitJobRequest { idempotency_key: String::new(), params: Some(params) }
    }
}

impl Scenario {
    pub fn from_toml(text: &str) -> anyhow::Result<Self> {
        let s: Scenario = toml::from_str(text)?;
        s.check()?;
        Ok(s)
    }

    pub fn check(&self) -> anyhow::Result<()> {
        anyhow::ensure!(self.duration_secs > 0.0 && self.duration_secs.is_finite(), "duration_secs must be positive");
        anyhow::ensure!(self.rate_per_sec > 0.0 && self.rate_per_sec.is_finite(), "rate_per_sec must be positive");
        anyhow::ensure!(self.clients >= 1, "clients must be at least 1");
        anyhow::ensure!(self.drain_secs >= 0.0 && self.drain_secs.is_finite(), "drain_secs must not be negative");
        anyhow::ensure!(!self.mix.is_empty(), "mix: give at least one job template");
        anyhow::ensure!(self.mix.iter().map(Template::weight).sum::<u32>() > 0, "mix: the weights add up to 0");
        Ok(())
    }
}

/// What happened to one job.
#[derive(Clone, Debug, serde::Serialize)]
pub struct JobRow {
    pub kind: String,
    pub job_id: String,
    /// Seconds after the start of the run.
    pub submitted_at: f64,
    /// done | failed | cancelled | rejected | timeout | error
    pub outcome: String,
    /// Submit → end, seconds (submit → answer for a rejected job).
    pub latency: f64,
    pub message: String,
}

#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Percentiles {
    pub count: usize,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub max: f64,
}

impl Percentiles {
    fn of(mut v: Vec<f64>) -> Self {
        if v.is_empty() {
            return Self::default();
        }
        v.sort_by(|a, b| a.total_cmp(b));
        let at = |q: f64| v[((q * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1];
        Self { count: v.len(), p50: at(0.50), p90: at(0.90), p99: at(0.99), max: *v.last().expect("non-empty") }
    }
}

#[derive(Clone, Debug, serde::Serialize)]
pub struct Report {
    pub scenario: Scenario,
    pub wall_secs: f64,
    pub submitted: usize,
    pub accepted: usize,
    pub rejected: usize,
    pub completed: usize,
    pub failed: usize,
    /// Submissions that started more than a second behind schedule (too few `clients`).
    pub late: usize,
    /// Completed jobs per second of wall time.
    pub throughput_per_sec: f64,
    pub latency: Percentiles,
    pub latency_by_kind: BTreeMap<String, Percentiles>,
    pub jobs: Vec<JobRow>,
}

impl Report {
    /// One line per job.
    pub fn csv(&self) -> String {
        let mut out = String::from("kind,job_id,submitted_at,outcome,latency_secs,message\n");
        for r in &self.jobs {
            let msg = r.message.replace('"', "'");
            out.push_str(&format!("{},{},{:.3},{},{:.3},\"{}\"\n", r.kind, r.job_id, r.submitted_at, r.outcome, r.latency, msg));
        }
        out
    }

    /// A table for the terminal.
    pub fn table(&self) -> String {
        let mut s = format!(
            "submitted {}  accepted {}  rejected {}  completed {}  failed {}  late {}  wall {:.1} s  throughput {:.3} jobs/s\n",
            self.submitted, self.accepted, self.rejected, self.completed, self.failed, self.late, self.wall_secs, self.throughput_per_sec
        );
        s.push_str("| kind | done | p50 | p90 | p99 | max |\n|---|---|---|---|---|---|\n");
        let mut rows: Vec<(&str, &Percentiles)> = self.latency_by_kind.iter().map(|(k, v)| (k.as_str(), v)).collect();
        rows.push(("all", &self.latency));
        for (k, p) in rows {
            s.push_str(&format!("| {k} | {} | {:.2} s | {:.2} s | {:.2} s | {:.2} s |\n", p.count, p.p50, p.p90, p.p99, p.max));
        }
        s
    }
}

async fn follow(client: &mut api::AuthedClient, job: &str) -> Result<(String, String), tonic::Status> {
    let mut stream = client.watch_job(pb::WatchJobRequest { job_id: job.into() }).await?.into_inner();
    let mut last = None;
    while let Some(j) = stream.message().await? {
        last = Some(j);
    }
    let j = last.ok_or_else(|| tonic::Status::unknown("no update"))?;
    let outcome = match pb::JobState::try_from(j.state).unwrap_or(pb::JobState::Unspecified) {
        pb::JobState::Done => "done",
        pb::JobState::Failed => "failed",
        pb::JobState::Cancelled => "cancelled",
        _ => "error",
    };
    Ok((outcome.into(), j.message))
}

/// Runs the scenario against its endpoint, without a token or a CA.
pub async fn run(scenario: Scenario) -> anyhow::Result<Report> {
    run_with(scenario, &api::ClientArgs::default()).await
}

/// Runs the scenario against its endpoint, with `client`'s token and CA (its endpoint is
/// ignored: the scenario's, which `--endpoint` overrides, is used).
pub async fn run_with(scenario: Scenario, client: &api::ClientArgs) -> anyhow::Result<Report> {
    scenario.check()?;
    let client = api::ClientArgs { endpoint: Some(scenario.endpoint.clone()), ..client.clone() }.connect().await.map_err(anyhow::Error::msg)?;
    let slots = Arc::new(Semaphore::new(scenario.clients));
    let rows = Arc::new(Mutex::new(Vec::new()));
    let start = Instant::now();
    let period = Duration::from_secs_f64(1.0 / scenario.rate_per_sec);
    let total_weight: u32 = scenario.mix.iter().map(Template::weight).sum();
    let mut handles = Vec::new();
    let (mut submitted, mut late) = (0usize, 0usize);
    let mut rng = rand::rngs::StdRng::from_entropy();
    while start.elapsed().as_secs_f64() < scenario.duration_secs {
        let due = start + period * submitted as u32;
        tokio::time::sleep_until(due.into()).await;
        if start.elapsed().as_secs_f64() >= scenario.duration_secs {
            break;
        }
        let permit = slots.clone().acquire_owned().await?;
        if due.elapsed() > Duration::from_secs(1) {
            late += 1;
        }
        let mut pick = rng.gen_range(0..total_weight);
        let t = scenario.mix.iter().find(|t| {
            if pick < t.weight() {
                true
            } else {
                pick -= t.weight();
                false
            }
        });
        let t = t.expect("weights add up").clone();
        let req = t.request(&mut rng);
        let (mut client, rows) = (client.clone(), rows.clone());
        submitted += 1;
        handles.push(tokio::spawn(async move {
            let _permit = permit;
            let t0 = Instant::now();
            let submitted_at = start.elapsed().as_secs_f64();
            let row = |job_id: String, outcome: &str, message: String| JobRow {
                kind: t.name().into(),
                job_id,
                submitted_at,
                outcome: outcome.into(),
                latency: t0.elapsed().as_secs_f64(),
                message,
            };
            let r = match client.submit_job(req).await {
                Err(s) if matches!(s.code(), tonic::Code::InvalidArgument | tonic::Code::FailedPrecondition) => {
                    row(String::new(), "rejected", s.message().into())
                }
                Err(s) => row(String::new(), "error", s.message().into()),
                Ok(resp) => {
                    let id = resp.into_inner().job_id;
                    match follow(&mut client, &id).await {
                        Ok((outcome, message)) => row(id, &outcome, message),
                        Err(s) => row(id, "error", s.message().into()),
                    }
                }
            };
            rows.lock().await.push(r);
        }));
    }
    let drain = tokio::time::sleep(Duration::from_secs_f64(scenario.drain_secs));
    tokio::pin!(drain);
    for h in handles {
        tokio::select! {
            _ = h => {}
            _ = &mut drain => break,
        }
    }
    let wall = start.elapsed().as_secs_f64();
    let mut jobs = rows.lock().await.clone();
    // Jobs still running after the drain.
    for _ in jobs.len()..submitted {
        jobs.push(JobRow { kind: "?".into(), job_id: String::new(), submitted_at: 0.0, outcome: "timeout".into(), latency: wall, message: String::new() });
    }
    jobs.sort_by(|a, b| a.submitted_at.total_cmp(&b.submitted_at));
    let done: Vec<&JobRow> = jobs.iter().filter(|r| r.outcome == "done").collect();
    let mut by_kind: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for r in &done {
        by_kind.entry(r.kind.clone()).or_default().push(r.latency);
    }
    let rejected = jobs.iter().filter(|r| r.outcome == "rejected").count();
    Ok(Report {
        wall_secs: wall,
        submitted,
        accepted: submitted - rejected - jobs.iter().filter(|r| r.outcome == "error" && r.job_id.is_empty()).count(),
        rejected,
        completed: done.len(),
        failed: jobs.iter().filter(|r| !matches!(r.outcome.as_str(), "done" | "rejected")).count(),
        late,
        throughput_per_sec: done.len() as f64 / wall,
        latency: Percentiles::of(done.iter().map(|r| r.latency).collect()),
        latency_by_kind: by_kind.into_iter().map(|(k, v)| (k, Percentiles::of(v))).collect(),
        jobs,
        scenario,
    })
}

use rand::SeedableRng;
