//! The checkpoint as one S3 object (`crate::roll::ports::checkpoint_object`):
//! GetObject, PutObject with `If-None-Match: *` or `If-Match: <ETag>`,
//! DeleteObject with `If-Match`. S3 answers a condition that no longer
//! holds with 412 PreconditionFailed (moto does too).

use aws_sdk_s3::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_s3::primitives::ByteStream;

use super::config::AwsSettings;
use super::error::AwsError;
use crate::roll::ports::checkpoint_object::{
    BoxFuture, CheckpointObject, Condition, ObjectError, Versioned,
};

/// `s3://bucket/key`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct S3Location {
    pub(crate) bucket: String,
    pub(crate) key: String,
}

impl S3Location {
    /// Whether `text` names an S3 object or prefix (`s3://…`).
    pub(crate) fn is_s3(text: &str) -> bool {
        text.starts_with("s3://")
    }

    /// `s3://bucket/key`: a bucket and a key, the key not a folder.
    pub(crate) fn parse(text: &str) -> Result<S3Location, String> {
        let rest = text
            .strip_prefix("s3://")
            .ok_or_else(|| format!("'{text}' is not an S3 URL (s3://bucket/key)"))?;
        let (bucket, key) = rest
            .split_once('/')
            .ok_or_else(|| format!("'{text}' names a bucket but no key: use s3://bucket/key"))?;
        if bucket.is_empty() {
            return Err(format!("'{text}' names no bucket: use s3://bucket/key"));
        }
        if key.is_empty() || key.ends_with('/') {
            return Err(format!(
                "'{text}' names a folder, not an object: use s3://{bucket}/<key>"
            ));
        }
        Ok(S3Location {
            bucket: bucket.to_string(),
            key: key.to_string(),
        })
    }

    /// The checkpoint of group `asg` under the prefix `text` (the env
    /// file's `checkpoint_store`, `s3://bucket[/folder]`).
    pub(crate) fn for_group(text: &str, asg: &str) -> Result<S3Location, String> {
        let rest = text.strip_prefix("s3://").ok_or_else(|| {
            format!(
                "checkpoint_store '{text}' is not an S3 URL (s3://bucket or s3://bucket/folder)"
            )
        })?;
        let (bucket, folder) = rest.split_once('/').unwrap_or((rest, ""));
        if bucket.is_empty() {
            return Err(format!(
                "checkpoint_store '{text}' names no bucket: use s3://bucket or s3://bucket/folder"
            ));
        }
        let folder = folder.trim_end_matches('/');
        let key = if folder.is_empty() {
            format!("{asg}.json")
        } else {
            format!("{folder}/{asg}.json")
        };
        Ok(S3Location {
            bucket: bucket.to_string(),
            key,
        })
    }

    fn sibling_key(&self, name: &str) -> String {
        match self.key.rsplit_once('/') {
            Some((folder, _)) => format!("{folder}/{name}"),
            None => name.to_string(),
        }
    }
}

impl std::fmt::Display for S3Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "s3://{}/{}", self.bucket, self.key)
    }
}

pub(crate) struct S3Checkpoint {
    client: aws_sdk_s3::Client,
    location: S3Location,
}

impl S3Checkpoint {
    /// A client for `location` with `settings` (region, profile, timeouts,
    /// retries; `endpoint_url` is the S3 endpoint, e.g. moto). An explicit
    /// endpoint is addressed path-style (`http://host/bucket/key`), as
    /// S3-compatible stores and moto expect.
    pub(crate) async fn connect(
        settings: &AwsSettings,
        location: S3Location,
    ) -> Result<S3Checkpoint, AwsError> {
        let sdk = settings.loader().load().await;
        if sdk.region().is_none() {
            return Err(AwsError::Config {
                message:
                    "no AWS region for the S3 checkpoint: set region in the env file or AWS_REGION"
                        .to_string(),
            });
        }
        let config = aws_sdk_s3::config::Builder::from(&sdk)
            .force_path_style(settings.endpoint_url.is_some())
            .interceptor(super::call_meter::CallMeter)
            .build();
        Ok(S3Checkpoint {
            client: aws_sdk_s3::Client::from_conf(config),
            location,
        })
    }
}

impl S3Checkpoint {
    /// A PutObject of `body` as JSON at `key` of this bucket.
    fn put_request(
        &self,
        key: &str,
        body: Vec<u8>,
    ) -> aws_sdk_s3::operation::put_object::builders::PutObjectFluentBuilder {
        self.client
            .put_object()
            .bucket(&self.location.bucket)
            .key(key)
            .content_type("application/json")
            .body(ByteStream::from(body))
    }
}

/// 412 is the one answer that proves the condition failed; everything
/// else leaves open whether the write landed.
fn object_error<E, R>(err: SdkError<E, R>) -> ObjectError
where
    E: ProvideErrorMetadata + std::error::Error + 'static,
    R: std::fmt::Debug,
    SdkError<E, R>: std::error::Error + 'static,
{
    let precondition = err
        .as_service_error()
        .and_then(|e| e.code())
        .is_some_and(|code| code == "PreconditionFailed");
    if precondition {
        ObjectError::PreconditionFailed {
            condition: "the ETag this run holds".to_string(),
        }
    } else {
        ObjectError::Failed(crate::sentence::sentence(&err))
    }
}

impl CheckpointObject for S3Checkpoint {
    fn location(&self) -> String {
        self.location.to_string()
    }

    fn sibling_location(&self, name: &str) -> String {
        format!(
            "s3://{}/{}",
            self.location.bucket,
            self.location.sibling_key(name)
        )
    }

    fn get(&self) -> BoxFuture<'_, Result<Option<Versioned>, ObjectError>> {
        Box::pin(async move {
            let answer = self
                .client
                .get_object()
                .bucket(&self.location.bucket)
                .key(&self.location.key)
                .send()
                .await;
            let output = match answer {
                Ok(output) => output,
                Err(err) if err.as_service_error().is_some_and(|e| e.is_no_such_key()) => {
                    return Ok(None);
                }
                Err(err) => return Err(object_error(err)),
            };
            let etag = output
                .e_tag()
                .ok_or_else(|| ObjectError::Failed("S3 answered GetObject without an ETag".into()))?
                .to_string();
            let body = output
                .body
                .collect()
                .await
                .map_err(|e| ObjectError::Failed(format!("reading the object: {e}")))?
                .into_bytes()
                .to_vec();
            Ok(Some(Versioned { body, etag }))
        })
    }

    fn put(
        &self,
        body: Vec<u8>,
        condition: Condition,
    ) -> BoxFuture<'_, Result<String, ObjectError>> {
        Box::pin(async move {
            let request = self.put_request(&self.location.key, body);
            let request = match condition {
                Condition::Absent => request.if_none_match("*"),
                Condition::Matches(etag) => request.if_match(etag),
            };
            let output = request.send().await.map_err(object_error)?;
            output
                .e_tag()
                .map(str::to_string)
                .ok_or_else(|| ObjectError::Failed("S3 answered PutObject without an ETag".into()))
        })
    }

    fn put_sibling<'a>(
        &'a self,
        name: &'a str,
        body: Vec<u8>,
    ) -> BoxFuture<'a, Result<String, ObjectError>> {
        Box::pin(async move {
            self.put_request(&self.location.sibling_key(name), body)
                .send()
                .await
                .map_err(object_error)?;
            Ok(self.sibling_location(name))
        })
    }

    fn delete(&self, etag: String) -> BoxFuture<'_, Result<(), ObjectError>> {
        Box::pin(async move {
            self.client
                .delete_object()
                .bucket(&self.location.bucket)
                .key(&self.location.key)
                .if_match(etag)
                .send()
                .await
                .map_err(object_error)?;
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_s3_url_names_a_bucket_and_an_object_key() {
        let at = S3Location::parse("s3://ops-rolls/prod/mesos.json").unwrap();
        assert_eq!(at.bucket, "ops-rolls");
        assert_eq!(at.key, "prod/mesos.json");
        assert_eq!(at.to_string(), "s3://ops-rolls/prod/mesos.json");
        assert_eq!(at.sibling_key("x.json"), "prod/x.json");
        assert_eq!(
            S3Location::parse("s3://b/k.json").unwrap().sibling_key("x"),
            "x"
        );
        for bad in [
            "s3://bucket",
            "s3://bucket/",
            "s3:///key",
            "s3://b/folder/",
            "/tmp/x.json",
        ] {
            let err = S3Location::parse(bad).unwrap_err();
            assert!(err.contains(bad), "{bad}: {err}");
        }
    }

    #[test]
    fn a_checkpoint_store_prefix_holds_one_object_per_group() {
        let at = |p| {
            S3Location::for_group(p, "mesos-agents")
                .unwrap()
                .to_string()
        };
        assert_eq!(at("s3://b"), "s3://b/mesos-agents.json");
        assert_eq!(at("s3://b/"), "s3://b/mesos-agents.json");
        assert_eq!(
            at("s3://b/rolls/prod/"),
            "s3://b/rolls/prod/mesos-agents.json"
        );
        assert!(S3Location::for_group("s3:///x", "g").is_err());
        assert!(S3Location::for_group("file:///x", "g").is_err());
    }
}

/// Against moto's S3 (`scripts/with-moto cargo test s3_checkpoint`): the
/// conditions are enforced as S3 documents them (412 PreconditionFailed).
#[cfg(test)]
mod moto_tests {
    use super::*;
    use crate::aws::contract::moto::moto_url;

    async fn object(key: &str) -> S3Checkpoint {
        let settings = AwsSettings {
            region: Some("us-east-1".to_string()),
            endpoint_url: Some(moto_url()),
            ..AwsSettings::default()
        };
        // One bucket per test: the tests share one moto.
        let bucket = format!("roller-{}", uuid::Uuid::new_v4().simple());
        let location = S3Location {
            bucket: bucket.clone(),
            key: key.to_string(),
        };
        let object = S3Checkpoint::connect(&settings, location).await.unwrap();
        object
            .client
            .create_bucket()
            .bucket(&bucket)
            .send()
            .await
            .expect("create bucket");
        object
    }

    #[tokio::test]
    async fn conditional_writes_are_the_lease_on_moto() {
        let o = object("rolls/asg.json").await;
        assert_eq!(o.get().await.unwrap(), None);
        let v1 = o.put(b"one".to_vec(), Condition::Absent).await.unwrap();
        assert!(matches!(
            o.put(b"again".to_vec(), Condition::Absent).await,
            Err(ObjectError::PreconditionFailed { .. })
        ));
        let v2 = o
            .put(b"two".to_vec(), Condition::Matches(v1.clone()))
            .await
            .unwrap();
        assert_ne!(v1, v2);
        assert!(matches!(
            o.put(b"stale".to_vec(), Condition::Matches(v1.clone()))
                .await,
            Err(ObjectError::PreconditionFailed { .. })
        ));
        assert_eq!(
            o.get().await.unwrap(),
            Some(Versioned {
                body: b"two".to_vec(),
                etag: v2.clone()
            })
        );
        assert!(matches!(
            o.delete(v1).await,
            Err(ObjectError::PreconditionFailed { .. })
        ));
        let archived = o
            .put_sibling("asg.r.complete.json", b"two".to_vec())
            .await
            .unwrap();
        assert!(
            archived.ends_with("/rolls/asg.r.complete.json"),
            "{archived}"
        );
        o.delete(v2).await.unwrap();
        assert_eq!(o.get().await.unwrap(), None);
    }

    #[tokio::test]
    async fn a_missing_bucket_is_an_error_naming_it_not_an_empty_checkpoint() {
        let settings = AwsSettings {
            region: Some("us-east-1".to_string()),
            endpoint_url: Some(moto_url()),
            ..AwsSettings::default()
        };
        let o = S3Checkpoint::connect(
            &settings,
            S3Location::parse("s3://roller-no-such-bucket/asg.json").unwrap(),
        )
        .await
        .unwrap();
        let err = o.get().await.unwrap_err();
        assert!(
            matches!(&err, ObjectError::Failed(m) if m.contains("NoSuchBucket")),
            "{err}"
        );
    }
}
