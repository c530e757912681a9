//! What one call may ask for: the bounds the gRPC service ([`crate::grpc`]) enforces on every
//! call, whatever its job kind. Listed for `GetLimits` and `prover limits` by
//! [`crate::limits::request_limits`]; the per-tenant quotas are [`crate::Quotas`], the request
//! budget's shares [`crate::budget`].

/// Chunk size of `GetProof`.
pub const CHUNK: usize = 1 << 20;
/// Largest request message the server decodes (inline leaves of a 2^19-leaf tree fit).
pub const MAX_REQUEST_BYTES: usize = api::MAX_REQUEST_BYTES;
/// Largest response message the server sends.
pub const MAX_MESSAGE_BYTES: usize = api::MAX_MESSAGE_BYTES;

/// Most WatchJob streams one tenant holds open at once (each polls its job's record).
pub const MAX_WATCHES_PER_TENANT: usize = 64;
/// Most GetProof streams one tenant holds open at once: each holds up to [`PROOF_CHUNKS_AHEAD`]
/// chunks of [`CHUNK`] bytes read ahead of its client, and the one in hand (about 3 MiB), so
/// a tenant's streams that read nothing hold at most ~50 MiB of the planner.
pub const MAX_PROOF_STREAMS_PER_TENANT: usize = 16;
/// Chunks a GetProof stream reads ahead of its client.
pub const PROOF_CHUNKS_AHEAD: usize = 2;
/// Most calls one HTTP/2 connection to the planner carries at once (its
/// `SETTINGS_MAX_CONCURRENT_STREAMS`).
pub const MAX_STREAMS_PER_CONNECTION: u32 = 256;

/// Largest `UploadInput`: the leaves of the largest tree (8 bytes per value, 2^27 values: 1 GiB).
pub const MAX_UPLOAD_BYTES: u64 = 8 << crate::MAX_LOG_N;
/// What one `UploadInput` holds besides its current message: the object store's part being
/// filled (S3 multipart parts of 8 MiB, in a buffer that may double while it fills).
pub const UPLOAD_BUFFER_BYTES: u64 = 2 * blobstore::MULTIPART_THRESHOLD as u64;
/// Most characters of an upload's name (`UploadChunk.name`).
pub const MAX_UPLOAD_NAME: usize = 64;

/// Most jobs of one ListJobs page (`ListJobsRequest.page_size`).
pub const MAX_PAGE_SIZE: u32 = 1000;
