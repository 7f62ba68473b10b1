//! A checkpoint kept off the host: one object in a store with conditional
//! writes (S3's `If-None-Match: *` and `If-Match: <ETag>`). The ETag a
//! run last read or wrote is its lease: a write conditioned on it fails
//! once anyone else has written the object, and the run stops there,
//! before its next side effect (every side effect is preceded by a write
//! of its intent).
//!
//! Object-safe (boxed futures), so the roll holds one as
//! `Box<dyn CheckpointObject>` without another type parameter on the
//! runner.

use std::future::Future;
use std::pin::Pin;

pub(crate) type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The object's bytes and the version they are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Versioned {
    pub(crate) body: Vec<u8>,
    pub(crate) etag: String,
}

/// What a write is conditioned on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Condition {
    /// The object must not exist (`If-None-Match: *`).
    Absent,
    /// The object must still be this version (`If-Match: <ETag>`).
    Matches(String),
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum ObjectError {
    /// The condition did not hold (HTTP 412): someone else wrote, created
    /// or removed the object.
    #[error(
        "the store refused the write: {condition} no longer holds (HTTP 412 PreconditionFailed)"
    )]
    PreconditionFailed { condition: String },
    /// Anything else: unreachable, denied, no such bucket, throttled past
    /// the SDK's retries. Whether the write landed is unknown.
    #[error("{0}")]
    Failed(String),
}

pub(crate) trait CheckpointObject: Send + Sync {
    /// Where it is, as a user types it: `s3://bucket/key`.
    fn location(&self) -> String;
    /// A sibling object's location (same bucket and folder), `name` being
    /// its last path segment.
    fn sibling_location(&self, name: &str) -> String;
    /// The object, or `None` when there is none.
    fn get(&self) -> BoxFuture<'_, Result<Option<Versioned>, ObjectError>>;
    /// Writes the object if `condition` holds; answers the new ETag.
    fn put(
        &self,
        body: Vec<u8>,
        condition: Condition,
    ) -> BoxFuture<'_, Result<String, ObjectError>>;
    /// Writes the sibling `name` (an archive: one name always carries the
    /// same bytes, so a rerun may write it again); answers its location.
    fn put_sibling<'a>(
        &'a self,
        name: &'a str,
        body: Vec<u8>,
    ) -> BoxFuture<'a, Result<String, ObjectError>>;
    /// Deletes the object if it is still version `etag`.
    fn delete(&self, etag: String) -> BoxFuture<'_, Result<(), ObjectError>>;
}
