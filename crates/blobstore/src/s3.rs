//! The S3 [`BlobStore`] (aws-sdk-s3): any S3-compatible endpoint, path-style addressing, static
//! credentials, the SDK's standard retries, multipart upload above [`MULTIPART_THRESHOLD`].

use async_trait::async_trait;
use aws_sdk_s3::config::{BehaviorVersion, Credentials, Region};
use aws_sdk_s3::error::ProvideErrorMetadata;
use aws_sdk_s3::primitives::ByteStream;
use aws_sdk_s3::types::{CompletedMultipartUpload, CompletedPart};
use aws_sdk_s3::Client;
use bytes::Bytes;

use crate::{check_key, BlobError, BlobStore};

/// Objects larger than this are uploaded in parts of this size.
pub const MULTIPART_THRESHOLD: usize = 8 << 20;

#[derive(Clone, Debug)]
pub struct S3Config {
    pub endpoint: String,
    pub bucket: String,
    pub region: String,
    pub access_key: String,
    pub secret_key: String,
}

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
        // The source is `bucket/key`, URL-encoded: of the characters keys may hold, only '='
        // needs it.
        let source = format!("{}/{}", self.bucket, from.replace('=', "%3D"));
        match self.client.copy_object().bucket(&self.bucket).copy_source(source).key(to).send().await {
            Ok(_) => Ok(()),
            Err(e) if e.as_service_error().and_then(|s| s.code()) == Some("NoSuchKey") => Err(BlobError::NotFound(from.to_string())),
            Err(e) => Err(sdk(e)),
        }
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
            keys.extend(out.contents().iter().filter_map(|o| o.key().map(String::from)));
            match out.next_continuation_token() {
                Some(t) if out.is_truncated() == Some(true) => token = Some(t.to_string()),
                _ => break,
            }
        }
        keys.sort();
        Ok(keys)
    }

    async fn delete(&self, key: &str) -> Result<(), BlobError> {
        check_key(key)?;
        self.client.delete_object().bucket(&self.bucket).key(key).send().await.map_err(sdk)?;
        Ok(())
    }
}
