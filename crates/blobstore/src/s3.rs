//! The S3 [`BlobStore`] (aws-sdk-s3): any S3-compatible endpoint, path-style addressing, static
//! credentials, the SDK's standard retries, multipart upload above [`MULTIPART_THRESHOLD`].

use async_trait::async_trait;
use aws_sdk_s3::config::{BehaviorVersion, Credentials, Region};
use aws_sdk_s3::error::ProvideErrorMetadata;
use aws_sdk_s3::primitives::ByteStream;
use aws_sdk_s3::types::{CompletedMultipartUpload, CompletedPart};
use aws_sdk_s3::Client;
use bytes::Bytes;

use crate::{check_key, check_range, BlobError, BlobStore, Upload, MIN_COPY_PART};

/// Objects larger than this are uploaded in parts of this size.
pub const MULTIPART_THRESHOLD: usize = 8 << 20;
/// The largest part one `UploadPartCopy` makes (S3 allows 5 GiB; smaller parts keep each call
/// well inside a request timeout).
const MAX_COPY_PART: u64 = 1 << 30;

/// A copy source, `bucket/key` URL-encoded: of the characters keys may hold, only '=' needs it.
fn copy_source(bucket: &str, key: &str) -> String {
    format!("{bucket}/{}", key.replace('=', "%3D"))
}

#[derive(Clone, Debug)]
pub struct S3Config {
    pub endpoint: String,
    pub bucket: String,
    pub region: String,
    pub access_key: String,
    pub secret_key: String,
}

#[derive(Clone)]
pub struct S3Store {
    client: Client,
    bucket: String,
}

fn backend(e: impl std::fmt::Display) -> BlobError {
    BlobError::Backend(e.to_string())
}

fn sdk<E: std::error::Error + 'static>(e: aws_sdk_s3::error::SdkError<E>) -> BlobError {
    BlobError::Backend(aws_sdk_s3::error::DisplayErrorContext(e).to_string())
}

impl S3Store {
    /// Connects and creates the bucket if it does not exist.
    pub async fn connect(cfg: S3Config) -> Result<Self, BlobError> {
        if cfg.bucket.len() < 3 {
            return Err(BlobError::Backend(format!("bucket name {:?} must have at least 3 characters", cfg.bucket)));
        }
        let conf = aws_sdk_s3::config::Builder::new()
            .behavior_version(BehaviorVersion::latest())
            .region(Region::new(cfg.region.clone()))
            .endpoint_url(&cfg.endpoint)
            .force_path_style(true)
            .credentials_provider(Credentials::new(&cfg.access_key, &cfg.secret_key, None, None, "prover-static"))
            .retry_config(aws_sdk_s3::config::retry::RetryConfig::standard().with_max_attempts(5))
            .build();
        let client = Client::from_conf(conf);
        if client.head_bucket().bucket(&cfg.bucket).send().await.is_err() {
            match client.create_bucket().bucket(&cfg.bucket).send().await {
                Ok(_) => {}
                Err(e) => {
                    let msg = aws_sdk_s3::error::DisplayErrorContext(&e).to_string();
                    if !msg.contains("BucketAlreadyOwnedByYou") && !msg.contains("BucketAlreadyExists") {
                        return Err(BlobError::Backend(format!("bucket {}: {msg}", cfg.bucket)));
                    }
                }
            }
        }
        Ok(Self { client, bucket: cfg.bucket })
    }

    async fn put_multipart(&self, key: &str, data: Bytes) -> Result<(), BlobError> {
        let created = self.client.create_multipart_upload().bucket(&self.bucket).key(key).send().await.map_err(sdk)?;
        let upload_id = created.upload_id().ok_or_else(|| backend("no upload id"))?.to_string();
        let result = async {
            let mut parts = Vec::new();
            for (i, chunk) in data.chunks(MULTIPART_THRESHOLD).enumerate() {
                let n = i as i32 + 1;
                let part = self
                    .client
                    .upload_part()
                    .bucket(&self.bucket)
                    .key(key)
                    .upload_id(&upload_id)
                    .part_number(n)
                    .body(ByteStream::from(data.slice_ref(chunk)))
                    .send()
                    .await
                    .map_err(sdk)?;
                parts.push(CompletedPart::builder().part_number(n).set_e_tag(part.e_tag().map(String::from)).build());
            }
            self.client
                .complete_multipart_upload()
                .bucket(&self.bucket)
                .key(key)
                .upload_id(&upload_id)
                .multipart_upload(CompletedMultipartUpload::builder().set_parts(Some(parts)).build())
                .send()
                .await
                .map_err(sdk)?;
            Ok(())
        }
        .await;
        if result.is_err() {
            let _ = self.client.abort_multipart_upload().bucket(&self.bucket).key(key).upload_id(&upload_id).send().await;
        }
        result
    }
}

#[async_trait]
impl BlobStore for S3Store {
    async fn put(&self, key: &str, data: Bytes) -> Result<(), BlobError> {
        check_key(key)?;
        if data.len() > MULTIPART_THRESHOLD {
            return self.put_multipart(key, data).await;
        }
        self.client.put_object().bucket(&self.bucket).key(key).body(ByteStream::from(data)).send().await.map_err(sdk)?;
        Ok(())
    }

    async fn get(&self, key: &str) -> Result<Bytes, BlobError> {
        check_key(key)?;
        match self.client.get_object().bucket(&self.bucket).key(key).send().await {
            Ok(out) => Ok(out.body.collect().await.map_err(backend)?.into_bytes()),
            Err(e) if e.as_service_error().map(|s| s.is_no_such_key()).unwrap_or(false) => {
                Err(BlobError::NotFound(key.to_string()))
            }
            Err(e) => Err(sdk(e)),
        }
    }

    async fn copy(&self, from: &str, to: &str) -> Result<(), BlobError> {
        check_key(from)?;
        check_key(to)?;
        let source = copy_source(&self.bucket, from);
        match self.client.copy_object().bucket(&self.bucket).copy_source(source).key(to).send().await {
            Ok(_) => Ok(()),
            Err(e) if e.as_service_error().and_then(|s| s.code()) == Some("NoSuchKey") => Err(BlobError::NotFound(from.to_string())),
            Err(e) => Err(sdk(e)),
        }
    }

    async fn size(&self, key: &str) -> Result<u64, BlobError> {
        check_key(key)?;
        match self.client.head_object().bucket(&self.bucket).key(key).send().await {
            Ok(out) => Ok(out.content_length().unwrap_or(0).max(0) as u64),
            Err(e) if e.as_service_error().map(|s| s.is_not_found()).unwrap_or(false) => Err(BlobError::NotFound(key.to_string())),
            Err(e) => Err(sdk(e)),
        }
    }

    async fn get_range(&self, key: &str, start: u64, len: u64) -> Result<Bytes, BlobError> {
        check_key(key)?;
        if len == 0 {
            let size = self.size(key).await?;
            check_range(key, size, start, len)?;
            return Ok(Bytes::new());
        }
        let end = start.checked_add(len).ok_or_else(|| BlobError::OutOfRange { key: key.to_string(), size: 0, start, end: u64::MAX })?;
        // HTTP ranges are inclusive; a range past the end comes back short (or as
        // InvalidRange when it starts past the end), which is an error here.
        let out = match self.client.get_object().bucket(&self.bucket).key(key).range(format!("bytes={start}-{}", end - 1)).send().await {
            Ok(out) => out.body.collect().await.map_err(backend)?.into_bytes(),
            Err(e) if e.as_service_error().map(|s| s.is_no_such_key()).unwrap_or(false) => return Err(BlobError::NotFound(key.to_string())),
            Err(e) if e.as_service_error().and_then(|s| s.code()) == Some("InvalidRange") => {
                let size = self.size(key).await?;
                return Err(BlobError::OutOfRange { key: key.to_string(), size, start, end });
            }
            Err(e) => return Err(sdk(e)),
        };
        if out.len() as u64 != len {
            let size = self.size(key).await?;
            return Err(BlobError::OutOfRange { key: key.to_string(), size, start, end });
        }
        Ok(out)
    }

    async fn upload<'a>(&'a self, key: &str) -> Result<Box<dyn Upload + 'a>, BlobError> {
        check_key(key)?;
        Ok(Box::new(S3Upload {
            client: self.client.clone(),
            bucket: self.bucket.clone(),
            key: key.to_string(),
            buf: Vec::new(),
            upload_id: None,
            parts: Vec::new(),
            size: 0,
        }))
    }

    async fn exists(&self, key: &str) -> Result<bool, BlobError> {
        check_key(key)?;
        match self.client.head_object().bucket(&self.bucket).key(key).send().await {
            Ok(_) => Ok(true),
            Err(e) if e.as_service_error().map(|s| s.is_not_found()).unwrap_or(false) => Ok(false),
            Err(e) => Err(sdk(e)),
        }
    }

    async fn list(&self, prefix: &str) -> Result<Vec<String>, BlobError> {
        Ok(self.list_objects(prefix).await?.into_iter().map(|o| o.key).collect())
    }

    /// `DeleteObjects`, 1,000 keys a call (S3's most), instead of a call per object.
    async fn delete_prefix(&self, prefix: &str) -> Result<usize, BlobError> {
        use aws_sdk_s3::types::{Delete, ObjectIdentifier};
        let keys = self.list(prefix).await?;
        for batch in keys.chunks(1000) {
            let objects = batch.iter().map(|k| ObjectIdentifier::builder().key(k).build().map_err(backend)).collect::<Result<Vec<_>, _>>()?;
            let delete = Delete::builder().set_objects(Some(objects)).quiet(true).build().map_err(backend)?;
            let out = self.client.delete_objects().bucket(&self.bucket).delete(delete).send().await.map_err(sdk)?;
            if let Some(e) = out.errors().first() {
                return Err(BlobError::Backend(format!(
                    "deleting {} ({} of {} refused): {}",
                    e.key().unwrap_or("?"),
                    out.errors().len(),
                    batch.len(),
                    e.message().unwrap_or("no message")
                )));
            }
        }
        Ok(keys.len())
    }

    async fn list_objects(&self, prefix: &str) -> Result<Vec<crate::ObjectInfo>, BlobError> {
        let mut keys = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let mut req = self.client.list_objects_v2().bucket(&self.bucket);
            if !prefix.is_empty() {
                req = req.prefix(prefix);
            }
            if let Some(t) = &token {
                req = req.continuation_token(t);
            }
            let out = req.send().await.map_err(sdk)?;
            keys.extend(out.contents().iter().filter_map(|o| {
                let modified_ms = o.last_modified().and_then(|t| t.to_millis().ok()).unwrap_or(0).max(0) as u64;
                o.key().map(|k| crate::ObjectInfo { key: k.to_string(), size: o.size().unwrap_or(0).max(0) as u64, modified_ms })
            }));
            match out.next_continuation_token() {
                Some(t) if out.is_truncated() == Some(true) => token = Some(t.to_string()),
                _ => break,
            }
        }
        keys.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(keys)
    }

    /// `ListObjectsV2` with `Delimiter=/`: one entry per folder (a common prefix), paged.
    async fn list_dirs(&self, prefix: &str) -> Result<Vec<String>, BlobError> {
        let mut dirs = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let mut req = self.client.list_objects_v2().bucket(&self.bucket).delimiter("/");
            if !prefix.is_empty() {
                req = req.prefix(prefix);
            }
            if let Some(t) = &token {
                req = req.continuation_token(t);
            }
            let out = req.send().await.map_err(sdk)?;
            dirs.extend(out.common_prefixes().iter().filter_map(|c| {
                let d = c.prefix()?.strip_prefix(prefix)?.strip_suffix('/')?;
                (!d.is_empty()).then(|| d.to_string())
            }));
            match out.next_continuation_token() {
                Some(t) if out.is_truncated() == Some(true) => token = Some(t.to_string()),
                _ => break,
            }
        }
        dirs.sort();
        dirs.dedup();
        Ok(dirs)
    }

    async fn delete(&self, key: &str) -> Result<(), BlobError> {
        check_key(key)?;
        self.client.delete_object().bucket(&self.bucket).key(key).send().await.map_err(sdk)?;
        Ok(())
    }
}

/// A multipart upload started once the first [`MULTIPART_THRESHOLD`] bytes are written (a
/// smaller object is one `PutObject` at `finish`); at most one part is held in memory. Dropped
/// unfinished, it aborts the multipart upload so no parts are left billed in the bucket.
struct S3Upload {
    client: Client,
    bucket: String,
    key: String,
    buf: Vec<u8>,
    upload_id: Option<String>,
    parts: Vec<CompletedPart>,
    size: u64,
}

impl S3Upload {
    /// The multipart upload's id, started on first use.
    async fn started(&mut self) -> Result<String, BlobError> {
        if let Some(id) = &self.upload_id {
            return Ok(id.clone());
        }
        let created = self.client.create_multipart_upload().bucket(&self.bucket).key(&self.key).send().await.map_err(sdk)?;
        let id = created.upload_id().ok_or_else(|| backend("no upload id"))?.to_string();
        self.upload_id = Some(id.clone());
        Ok(id)
    }

    /// The store this upload writes to, for reading a copy's source.
    fn store(&self) -> S3Store {
        S3Store { client: self.client.clone(), bucket: self.bucket.clone() }
    }

    /// Appends `start..end` of `from` as one part copied on the server.
    async fn copy_part(&mut self, from: &str, start: u64, end: u64) -> Result<(), BlobError> {
        let upload_id = self.started().await?;
        let n = self.parts.len() as i32 + 1;
        let out = self
            .client
            .upload_part_copy()
            .bucket(&self.bucket)
            .key(&self.key)
            .upload_id(&upload_id)
            .part_number(n)
            .copy_source(copy_source(&self.bucket, from))
            .copy_source_range(format!("bytes={start}-{}", end - 1))
            .send()
            .await
            .map_err(sdk)?;
        let etag = out.copy_part_result().and_then(|r| r.e_tag()).map(String::from);
        self.parts.push(CompletedPart::builder().part_number(n).set_e_tag(etag).build());
        self.size += end - start;
        Ok(())
    }

    async fn send_part(&mut self, data: Bytes) -> Result<(), BlobError> {
        let upload_id = self.started().await?;
        let n = self.parts.len() as i32 + 1;
        let part = self
            .client
            .upload_part()
            .bucket(&self.bucket)
            .key(&self.key)
            .upload_id(&upload_id)
            .part_number(n)
            .body(ByteStream::from(data))
            .send()
            .await
            .map_err(sdk)?;
        self.parts.push(CompletedPart::builder().part_number(n).set_e_tag(part.e_tag().map(String::from)).build());
        Ok(())
    }
}

#[async_trait]
impl Upload for S3Upload {
    async fn write(&mut self, data: Bytes) -> Result<(), BlobError> {
        self.size += data.len() as u64;
        self.buf.extend_from_slice(&data);
        while self.buf.len() >= MULTIPART_THRESHOLD {
            let rest = self.buf.split_off(MULTIPART_THRESHOLD);
            let part = std::mem::replace(&mut self.buf, rest);
            self.send_part(Bytes::from(part)).await?;
        }
        Ok(())
    }

    async fn append_copy(&mut self, from: &str, start: u64, len: u64) -> Result<(), BlobError> {
        check_key(from)?;
        let store = self.store();
        let size = store.size(from).await?;
        let r = check_range(from, size, start, len)?;
        let (mut at, end) = (r.start, r.end);
        // Bytes written before are held until they make a whole part: top them up from the
        // source (parts other than the last must be at least 5 MiB).
        if !self.buf.is_empty() {
            let n = (MULTIPART_THRESHOLD - self.buf.len()) as u64;
            let n = n.min(end - at);
            let got = store.get_range(from, at, n).await?;
            self.write(got).await?;
            at += n;
        }
        // With nothing held, whole parts are copied on the server; a short tail is held as
        // written bytes (it may be the last part, or later writes fill it).
        while self.buf.is_empty() && end - at >= MIN_COPY_PART {
            let n = (end - at).min(MAX_COPY_PART);
            self.copy_part(from, at, at + n).await?;
            at += n;
        }
        if at < end {
            let got = store.get_range(from, at, end - at).await?;
            self.write(got).await?;
        }
        Ok(())
    }

    async fn finish(mut self: Box<Self>) -> Result<u64, BlobError> {
        let last = Bytes::from(std::mem::take(&mut self.buf));
        if self.upload_id.is_none() {
            self.client.put_object().bucket(&self.bucket).key(&self.key).body(ByteStream::from(last)).send().await.map_err(sdk)?;
            return Ok(self.size);
        }
        if !last.is_empty() {
            self.send_part(last).await?;
        }
        let upload_id = self.upload_id.clone().expect("started");
        self.client
            .complete_multipart_upload()
            .bucket(&self.bucket)
            .key(&self.key)
            .upload_id(&upload_id)
            .multipart_upload(CompletedMultipartUpload::builder().set_parts(Some(std::mem::take(&mut self.parts))).build())
            .send()
            .await
            .map_err(sdk)?;
        self.upload_id = None;
        Ok(self.size)
    }

    async fn abort(mut self: Box<Self>) -> Result<(), BlobError> {
        if let Some(id) = self.upload_id.take() {
            self.client.abort_multipart_upload().bucket(&self.bucket).key(&self.key).upload_id(id).send().await.map_err(sdk)?;
        }
        Ok(())
    }
}

impl Drop for S3Upload {
    fn drop(&mut self) {
        if let (Some(id), Ok(rt)) = (self.upload_id.take(), tokio::runtime::Handle::try_current()) {
            let (client, bucket, key) = (self.client.clone(), self.bucket.clone(), self.key.clone());
            rt.spawn(async move {
                let _ = client.abort_multipart_upload().bucket(bucket).key(key).upload_id(id).send().await;
            });
        }
    }
}
