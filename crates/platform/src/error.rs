//! The platform's errors, split by what a role does with them: a **fatal** error fails the job
//! at once with its reason (bad input, a corrupt spec or payload, a proof that cannot be made);
//! any other is **retryable** (a backend that is down or slow, a task over its deadline): the
//! task is retried with backoff until its attempts run out.

use blobstore::BlobError;
use jobs::JobError;
use queue::QueueError;

#[derive(Debug, thiserror::Error)]
pub enum PlatformError {
    /// Bad input; the message names the field.
    #[error("invalid {field}: {reason}")]
    InvalidJob { field: &'static str, reason: String },
    /// A valid request that cannot be served in the current state (idempotency key reuse, a
    /// base job that is not done).
    #[error("{0}")]
    Precondition(String),
    #[error("no job {0}")]
    NotFound(String),
    /// A tenant's quota would be exceeded; the message names the limit.
    #[error("{0}")]
    Quota(String),
    #[error(transparent)]
    Queue(#[from] QueueError),
    #[error(transparent)]
    Blob(#[from] BlobError),
    #[error(transparent)]
    Jobs(JobError),
    #[error("proof system: {0}")]
    Proof(#[from] reckle::Error),
    #[error("corrupt job data: {0}")]
    Corrupt(String),
    /// The task was abandoned (deadline, lost lease, drain): what its blocking work returns
    /// when it sees the flag ([`crate::work::Cancel`]). Nobody waits for it any more.
    #[error("the task was abandoned (deadline, lost lease or drain)")]
    Abandoned,
    /// Bad input a task found (see `kinds::contract::reject`): the job ends failed with this
    /// reason, as it is.
    #[error("{0}")]
    Rejected(String),
    /// A setting the process cannot run with (the only error that stops a role loop).
    #[error("configuration: {0}")]
    Config(String),
}

impl PlatformError {
    /// True if retrying cannot help: the job fails now, with this error as the reason.
    pub fn is_fatal(&self) -> bool {
        match self {
            PlatformError::Queue(QueueError::PayloadTooLarge(_) | QueueError::InvalidKind(_)) => true,
            PlatformError::Blob(BlobError::InvalidKey(_)) => true,
            PlatformError::Queue(_) | PlatformError::Blob(_) | PlatformError::Jobs(_) | PlatformError::Abandoned => false,
            PlatformError::InvalidJob { .. }
            | PlatformError::Precondition(_)
            | PlatformError::NotFound(_)
            | PlatformError::Quota(_)
            | PlatformError::Proof(_)
            | PlatformError::Corrupt(_)
            | PlatformError::Rejected(_)
            | PlatformError::Config(_) => true,
        }
    }

    /// True for a backend that failed to answer (Redis, S3): worth waiting out.
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            PlatformError::Queue(QueueError::Backend(_)) | PlatformError::Blob(BlobError::Backend(_)) | PlatformError::Jobs(JobError::Backend(_))
        )
    }
}

impl From<JobError> for PlatformError {
    fn from(e: JobError) -> Self {
        match e {
            JobError::Invalid { field, reason } => PlatformError::InvalidJob { field, reason },
            JobError::IdempotencyConflict { .. } => PlatformError::Precondition(e.to_string()),
            JobError::NotFound(id) => PlatformError::NotFound(id),
            JobError::LimitReached { limit, .. } if limit == jobs::LIMIT_HOURLY_TASKS => {
                PlatformError::Quota(format!("{e}: the budget renews at the start of the next hour (UTC)"))
            }
            JobError::LimitReached { limit, .. } if limit == jobs::LIMIT_RECORD_BYTES => PlatformError::Quota(format!(
                "{e}: a job's record is kept for its retention after it ends (--retention-secs, --failed-retention-secs) and its task \
                 state an hour; wait for older records to expire"
            )),
            JobError::LimitReached { limit, .. } if limit == jobs::LIMIT_UPLOAD_BYTES => {
                PlatformError::Quota(format!("{e}: replace an upload by uploading under its name, or wait for old uploads to be collected"))
            }
            JobError::LimitReached { limit, .. } if limit == jobs::LIMIT_CIRCUIT_BYTES => {
                PlatformError::Quota(format!("{e}: delete a circuit you no longer prove (DeleteCircuit, `prover circuit delete`)"))
            }
            JobError::LimitReached { .. } => PlatformError::Quota(format!("{e}: wait for one of your jobs to end, or cancel one")),
            e => PlatformError::Jobs(e),
        }
    }
}

pub(crate) fn invalid(field: &'static str, reason: impl Into<String>) -> PlatformError {
    PlatformError::InvalidJob { field, reason: reason.into() }
}

pub(crate) fn corrupt(e: impl std::fmt::Display) -> PlatformError {
    PlatformError::Corrupt(e.to_string())
}
