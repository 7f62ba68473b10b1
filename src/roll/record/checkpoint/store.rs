//! Where a roll keeps its checkpoint: a local file (the default), held by
//! the run lock beside it, or an object off the host (`s3://bucket/key`),
//! held by its ETag. Either way a write is whole or absent, and a run that
//! can no longer write stops before its next side effect (each side effect
//! is preceded by a write of its intent).

use std::io;
use std::path::{Path, PathBuf};

use super::{Checkpoint, CheckpointError, RunLock, RunLockError};
use crate::roll::ports::checkpoint_object::{CheckpointObject, Condition, ObjectError};

pub(crate) struct CheckpointStore {
    place: Place,
    /// As messages name it: the file's path, or the object's URL.
    location: PathBuf,
}

enum Place {
    File {
        path: PathBuf,
        /// Taken by `lock` and held for the run's life.
        lock: Option<RunLock>,
    },
    Object {
        object: Box<dyn CheckpointObject>,
        /// The lease: the version this run last read or wrote; `None`
        /// until the object exists.
        etag: Option<String>,
    },
}

impl CheckpointStore {
    pub(crate) fn file(path: impl Into<PathBuf>) -> CheckpointStore {
        let path = path.into();
        CheckpointStore {
            location: path.clone(),
            place: Place::File { path, lock: None },
        }
    }

    pub(crate) fn object(object: Box<dyn CheckpointObject>) -> CheckpointStore {
        CheckpointStore {
            location: PathBuf::from(object.location()),
            place: Place::Object { object, etag: None },
        }
    }

    /// The file's path or the object's URL, for messages.
    pub(crate) fn location(&self) -> &Path {
        &self.location
    }

    /// As a command typed elsewhere must name it: an absolute path (the
    /// command may be run from another folder), or the URL.
    pub(crate) fn for_command(&self) -> String {
        match &self.place {
            Place::File { path, .. } => std::path::absolute(path)
                .unwrap_or_else(|_| path.clone())
                .display()
                .to_string(),
            Place::Object { .. } => self.location.display().to_string(),
        }
    }

    /// The local file, when it is one (operations queued by `roller plan`
    /// live beside it).
    pub(crate) fn file_path(&self) -> Option<&Path> {
        match &self.place {
            Place::File { path, .. } => Some(path),
            Place::Object { .. } => None,
        }
    }

    /// One run per checkpoint. A file is locked here for the run's life
    /// (`<checkpoint>.lock`); an object needs no lock: its ETag is the
    /// lease, and of two runs the second to write is refused.
    pub(crate) fn lock(&mut self) -> Result<(), RunLockError> {
        if let Place::File { path, lock } = &mut self.place
            && lock.is_none()
        {
            *lock = Some(RunLock::acquire(path)?);
        }
        Ok(())
    }

    /// Reads the checkpoint; `Ok(None)` when there is none. An object's
    /// ETag becomes the lease.
    pub(crate) async fn load(&mut self) -> Result<Option<Checkpoint>, CheckpointError> {
        match &mut self.place {
            Place::File { path, .. } => Checkpoint::load(path),
            Place::Object { object, etag } => {
                let found = object.get().await.map_err(|e| CheckpointError::Read {
                    path: self.location.clone(),
                    source: io::Error::other(e.to_string()),
                })?;
                let Some(found) = found else {
                    *etag = None;
                    return Ok(None);
                };
                let text = Checkpoint::text_of(&self.location, found.body)?;
                let checkpoint = Checkpoint::parse(&self.location, &text)?;
                *etag = Some(found.etag);
                Ok(Some(checkpoint))
            }
        }
    }

    /// Writes `checkpoint` whole (`write` of its JSON).
    pub(crate) async fn save(&mut self, checkpoint: &Checkpoint) -> Result<(), CheckpointError> {
        let json = checkpoint.to_json(&self.location)?;
        self.write(checkpoint, &json).await.map(drop)
    }

    /// Writes `json` (from `Checkpoint::to_json`) whole, compressed from 512
    /// KiB on; answers the bytes written. An object is written only if
    /// it is still the version this run holds; when it is not, the lease
    /// is lost and the run must stop.
    pub(crate) async fn write(
        &mut self,
        checkpoint: &Checkpoint,
        json: &[u8],
    ) -> Result<usize, CheckpointError> {
        let (object, etag) = match &mut self.place {
            Place::File { path, .. } => return checkpoint.write(path, json),
            Place::Object { object, etag } => (object, etag),
        };
        let bytes = Checkpoint::bytes_of(json).map_err(|source| CheckpointError::Write {
            path: self.location.clone(),
            source,
        })?;
        crate::crash_point::before_checkpoint_write();
        let condition = match etag.clone() {
            Some(held) => Condition::Matches(held),
            None => Condition::Absent,
        };
        match object.put(bytes.to_vec(), condition).await {
            Ok(new) => *etag = Some(new),
            Err(ObjectError::PreconditionFailed { condition }) => {
                return Err(CheckpointError::LeaseLost {
                    path: self.location.clone(),
                    reason: condition,
                });
            }
            Err(ObjectError::Failed(reason)) => {
                // The write may have landed with its answer lost: then the
                // object is ours, byte for byte, and its ETag the lease.
                match object.get().await {
                    Ok(Some(now)) if now.body == *bytes => *etag = Some(now.etag),
                    _ => {
                        return Err(CheckpointError::Write {
                            path: self.location.clone(),
                            source: io::Error::other(reason),
                        });
                    }
                }
            }
        }
        crate::crash_point::after_checkpoint_write();
        Ok(bytes.len())
    }

    /// Appends `events` (dropped from `checkpoint`, oldest first) to the
    /// roll's event log beside a file checkpoint,
    /// `<asg>.<run-id>.events.jsonl`, one JSON object a line, mode 0600:
    /// appended and synced before the checkpoint without them is written,
    /// so a crash between the two repeats them in the log rather than
    /// losing them (once per `KEPT_EVENTS` events, not per write).
    /// A checkpoint in S3 keeps no such log: its dropped events are in
    /// roller's own log only.
    pub(crate) fn append_events(
        &self,
        checkpoint: &Checkpoint,
        events: &[super::Event],
    ) -> Result<(), CheckpointError> {
        let Place::File { path, .. } = &self.place else {
            return Ok(());
        };
        let name = format!("{}.{}.events.jsonl", checkpoint.name(), checkpoint.run_id);
        let log = path.with_file_name(name);
        let mut lines = Vec::new();
        for event in events {
            serde_json::to_writer(&mut lines, event).map_err(|e| CheckpointError::Write {
                path: log.clone(),
                source: io::Error::other(e),
            })?;
            lines.push(b'\n');
        }
        let mut options = std::fs::OpenOptions::new();
        options.append(true).create(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(super::FILE_MODE);
        }
        // Synced before the checkpoint without them is written: a power loss
        // between the two must not lose what the checkpoint no longer has.
        let appended = options.open(&log).and_then(|mut file| {
            std::io::Write::write_all(&mut file, &lines)?;
            file.sync_data()
        });
        appended.map_err(|source| CheckpointError::Write { path: log, source })
    }

    /// Moves a completed checkpoint aside (`<asg>.<run-id>.complete.json`
    /// beside it), so the next run starts fresh and the record stays;
    /// answers where it went.
    pub(crate) async fn archive(
        &mut self,
        checkpoint: &Checkpoint,
    ) -> Result<PathBuf, CheckpointError> {
        self.archive_as(checkpoint, "complete").await
    }

    /// Moves the checkpoint aside as `<asg>.<run-id>.<how>.json` (`complete`,
    /// or `refused` for a run that another held off before it changed
    /// anything).
    pub(crate) async fn archive_as(
        &mut self,
        checkpoint: &Checkpoint,
        how: &str,
    ) -> Result<PathBuf, CheckpointError> {
        let name = format!("{}.{}.{how}.json", checkpoint.name(), checkpoint.run_id);
        match &mut self.place {
            Place::File { path, .. } => {
                let dir = path.parent().unwrap_or(Path::new("."));
                let to = dir.join(name);
                std::fs::rename(&*path, &to).map_err(|source| CheckpointError::Write {
                    path: to.clone(),
                    source,
                })?;
                crate::roll::record::operations::tidy(path);
                Ok(to)
            }
            Place::Object { object, etag } => {
                let to = PathBuf::from(object.sibling_location(&name));
                let json = checkpoint.to_json(&self.location)?;
                let bytes =
                    Checkpoint::bytes_of(&json).map_err(|source| CheckpointError::Write {
                        path: to.clone(),
                        source,
                    })?;
                // The archive is written whole before the live object goes;
                // a crash between the two leaves the live one, and the
                // rerun archives again (the same name, the same bytes).
                object
                    .put_sibling(&name, bytes.into_owned())
                    .await
                    .map_err(|e| CheckpointError::Write {
                        path: to.clone(),
                        source: io::Error::other(e.to_string()),
                    })?;
                let held = etag.clone().ok_or_else(|| CheckpointError::Write {
                    path: self.location.clone(),
                    source: io::Error::other("this run never wrote the checkpoint it archives"),
                })?;
                match object.delete(held).await {
                    Ok(()) => {
                        *etag = None;
                        Ok(to)
                    }
                    Err(ObjectError::PreconditionFailed { condition }) => {
                        Err(CheckpointError::LeaseLost {
                            path: self.location.clone(),
                            reason: condition,
                        })
                    }
                    Err(ObjectError::Failed(reason)) => Err(CheckpointError::Write {
                        path: self.location.clone(),
                        source: io::Error::other(reason),
                    }),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::{Arc, Mutex};

    use std::time::SystemTime;

    use super::*;
    use crate::roll::ports::checkpoint_object::{BoxFuture, Versioned};

    /// Objects in memory, with S3's conditions: a bucket two hosts share.
    #[derive(Clone, Default)]
    struct Bucket {
        objects: Arc<Mutex<BTreeMap<String, Versioned>>>,
        versions: Arc<Mutex<u64>>,
        /// The next put lands, but its answer is lost (a timeout).
        lose_next_answer: Arc<Mutex<bool>>,
        /// The next put fails before it lands.
        fail_next_put: Arc<Mutex<bool>>,
    }

    struct Object {
        bucket: Bucket,
        key: String,
    }

    impl Bucket {
        fn object(&self, key: &str) -> Box<dyn CheckpointObject> {
            Box::new(Object {
                bucket: self.clone(),
                key: key.to_string(),
            })
        }

        fn body(&self, key: &str) -> Option<Vec<u8>> {
            self.objects
                .lock()
                .unwrap()
                .get(key)
                .map(|v| v.body.clone())
        }

        /// Someone else writes the object (another run took it over).
        fn overwrite(&self, key: &str, body: &[u8]) {
            let etag = self.next_etag();
            self.objects.lock().unwrap().insert(
                key.to_string(),
                Versioned {
                    body: body.to_vec(),
                    etag,
                },
            );
        }

        fn next_etag(&self) -> String {
            let mut v = self.versions.lock().unwrap();
            *v += 1;
            format!("\"v{v}\"")
        }
    }

    impl CheckpointObject for Object {
        fn location(&self) -> String {
            format!("s3://bucket/{}", self.key)
        }
        fn sibling_location(&self, name: &str) -> String {
            format!("s3://bucket/{name}")
        }
        fn get(&self) -> BoxFuture<'_, Result<Option<Versioned>, ObjectError>> {
            let found = self.bucket.objects.lock().unwrap().get(&self.key).cloned();
            Box::pin(async move { Ok(found) })
        }
        fn put(
            &self,
            body: Vec<u8>,
            condition: Condition,
        ) -> BoxFuture<'_, Result<String, ObjectError>> {
            Box::pin(async move {
                if std::mem::take(&mut *self.bucket.fail_next_put.lock().unwrap()) {
                    return Err(ObjectError::Failed("connection reset".into()));
                }
                let mut objects = self.bucket.objects.lock().unwrap();
                let holds = match (&condition, objects.get(&self.key)) {
                    (Condition::Absent, None) => true,
                    (Condition::Matches(etag), Some(now)) => *etag == now.etag,
                    _ => false,
                };
                if !holds {
                    return Err(ObjectError::PreconditionFailed {
                        condition: format!("{condition:?}"),
                    });
                }
                let etag = self.bucket.next_etag();
                objects.insert(
                    self.key.clone(),
                    Versioned {
                        body,
                        etag: etag.clone(),
                    },
                );
                if std::mem::take(&mut *self.bucket.lose_next_answer.lock().unwrap()) {
                    return Err(ObjectError::Failed("timed out".into()));
                }
                Ok(etag)
            })
        }
        fn put_sibling<'a>(
            &'a self,
            name: &'a str,
            body: Vec<u8>,
        ) -> BoxFuture<'a, Result<String, ObjectError>> {
            self.bucket.overwrite(name, &body);
            Box::pin(async move { Ok(self.sibling_location(name)) })
        }
        fn delete(&self, etag: String) -> BoxFuture<'_, Result<(), ObjectError>> {
            let mut objects = self.bucket.objects.lock().unwrap();
            let result = match objects.get(&self.key) {
                Some(now) if now.etag == etag => {
                    objects.remove(&self.key);
                    Ok(())
                }
                _ => Err(ObjectError::PreconditionFailed {
                    condition: "If-Match".into(),
                }),
            };
            Box::pin(async move { result })
        }
    }

    fn checkpoint() -> Checkpoint {
        let text = include_str!("../../../../fuzz/seeds/checkpoint/serial-1.json");
        Checkpoint::parse(Path::new("c.json"), text).unwrap()
    }

    async fn write(
        store: &mut CheckpointStore,
        checkpoint: &Checkpoint,
    ) -> Result<(), CheckpointError> {
        let json = checkpoint.to_json(store.location()).unwrap();
        store.write(checkpoint, &json).await.map(drop)
    }

    /// `checkpoint()` with events enough for its JSON to pass 512 KiB (as
    /// a roll of a thousand agents or more does mid-drain).
    fn large_checkpoint() -> Checkpoint {
        let mut c = checkpoint();
        let mut i = 0;
        while c.to_json(Path::new("c.json")).unwrap().len() < super::super::encoding::COMPRESS_FROM
        {
            for _ in 0..2_000 {
                c.log(
                    SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(i),
                    super::super::EventKind::Intent,
                    format!("terminate i-{i:017x} with decrement"),
                );
                i += 1;
            }
        }
        c
    }

    #[tokio::test]
    async fn a_second_host_resumes_and_the_first_loses_its_lease_at_its_next_write() {
        let bucket = Bucket::default();
        let mut first = CheckpointStore::object(bucket.object("roll.json"));
        assert!(first.load().await.unwrap().is_none());
        let mut c = checkpoint();
        write(&mut first, &c).await.unwrap();
        c.log(
            SystemTime::UNIX_EPOCH,
            super::super::EventKind::Operator,
            "one more",
        );
        write(&mut first, &c).await.unwrap();

        // The second host reads the first's last write and goes on.
        let mut second = CheckpointStore::object(bucket.object("roll.json"));
        let resumed = second
            .load()
            .await
            .unwrap()
            .expect("the first host's checkpoint");
        assert_eq!(resumed.events.len(), c.events.len());
        let mut d = resumed.clone();
        d.log(
            SystemTime::UNIX_EPOCH,
            super::super::EventKind::Resume,
            "resumed elsewhere",
        );
        write(&mut second, &d).await.unwrap();

        // The first host, still alive, may not write again.
        c.log(
            SystemTime::UNIX_EPOCH,
            super::super::EventKind::Operator,
            "stale",
        );
        let err = write(&mut first, &c).await.unwrap_err();
        assert_eq!(err.label(), "checkpoint_lease_lost", "{err}");
        assert!(err.to_string().contains("s3://bucket/roll.json"), "{err}");
        let kept = bucket.body("roll.json").unwrap();
        assert!(
            String::from_utf8(kept)
                .unwrap()
                .contains("resumed elsewhere")
        );
    }

    #[tokio::test]
    async fn two_fresh_runs_create_one_checkpoint_and_the_second_is_refused() {
        let bucket = Bucket::default();
        let mut a = CheckpointStore::object(bucket.object("roll.json"));
        let mut b = CheckpointStore::object(bucket.object("roll.json"));
        assert!(a.load().await.unwrap().is_none());
        assert!(b.load().await.unwrap().is_none());
        write(&mut a, &checkpoint()).await.unwrap();
        let err = write(&mut b, &checkpoint()).await.unwrap_err();
        assert_eq!(err.label(), "checkpoint_lease_lost", "{err}");
    }

    #[tokio::test]
    async fn a_write_whose_answer_was_lost_is_adopted_when_the_object_holds_it() {
        let bucket = Bucket::default();
        let mut store = CheckpointStore::object(bucket.object("roll.json"));
        let mut c = checkpoint();
        write(&mut store, &c).await.unwrap();
        *bucket.lose_next_answer.lock().unwrap() = true;
        c.log(
            SystemTime::UNIX_EPOCH,
            super::super::EventKind::Operator,
            "landed, answer lost",
        );
        write(&mut store, &c).await.unwrap();
        // The lease followed: the next write is accepted.
        c.log(
            SystemTime::UNIX_EPOCH,
            super::super::EventKind::Operator,
            "next",
        );
        write(&mut store, &c).await.unwrap();

        // A write that never landed is an error, and the lease stays.
        *bucket.fail_next_put.lock().unwrap() = true;
        c.log(
            SystemTime::UNIX_EPOCH,
            super::super::EventKind::Operator,
            "never landed",
        );
        let err = write(&mut store, &c).await.unwrap_err();
        assert_eq!(err.label(), "checkpoint_write", "{err}");
        write(&mut store, &c).await.unwrap();
    }

    #[tokio::test]
    async fn a_completed_checkpoint_is_archived_beside_it_and_the_live_one_removed() {
        let bucket = Bucket::default();
        let mut store = CheckpointStore::object(bucket.object("ckpt/roll.json"));
        let c = checkpoint();
        write(&mut store, &c).await.unwrap();
        let to = store.archive(&c).await.unwrap();
        let name = format!("{}.{}.complete.json", c.groups[0].asg, c.run_id);
        assert_eq!(to, PathBuf::from(format!("s3://bucket/{name}")));
        assert!(bucket.body("ckpt/roll.json").is_none());
        let archived = Checkpoint::parse(
            &to,
            &String::from_utf8(bucket.body(&name).unwrap()).unwrap(),
        );
        assert_eq!(archived.unwrap().run_id, c.run_id);
    }

    #[tokio::test]
    async fn an_object_of_half_a_mebibyte_or_more_is_kept_gzipd_and_read_back_whole() {
        let bucket = Bucket::default();
        let mut store = CheckpointStore::object(bucket.object("ckpt/roll.json"));
        let mut c = large_checkpoint();
        let json = c.to_json(store.location()).unwrap();
        let written = store.write(&c, &json).await.unwrap();
        let body = bucket.body("ckpt/roll.json").unwrap();
        assert_eq!(written, body.len());
        assert!(body.starts_with(&[0x1f, 0x8b]), "not gzip'd");
        assert!(
            body.len() * 4 < json.len(),
            "{} of {}",
            body.len(),
            json.len()
        );

        // Read back as it was, by another host: the lease is that host's.
        let mut other = CheckpointStore::object(bucket.object("ckpt/roll.json"));
        assert_eq!(other.load().await.unwrap().unwrap(), c);

        // A write whose answer was lost is known by its compressed bytes.
        *bucket.lose_next_answer.lock().unwrap() = true;
        c.log(
            SystemTime::UNIX_EPOCH,
            super::super::EventKind::Operator,
            "landed, answer lost",
        );
        write(&mut other, &c).await.unwrap();
        write(&mut other, &c).await.unwrap();
        assert_eq!(store.load().await.unwrap().unwrap(), c);

        // Archived compressed too, and read as any checkpoint.
        let to = store.archive(&c).await.unwrap();
        let name = format!("{}.{}.complete.json", c.groups[0].asg, c.run_id);
        let archived = bucket.body(&name).unwrap();
        assert!(
            archived.starts_with(&[0x1f, 0x8b]),
            "the archive is not gzip'd"
        );
        let text = Checkpoint::text_of(&to, archived).unwrap();
        assert_eq!(Checkpoint::parse(&to, &text).unwrap(), c);

        // Cut short, it is refused by name, not taken for another document.
        bucket.overwrite("ckpt/roll.json", &body[..body.len() / 2]);
        let err = store.load().await.unwrap_err();
        assert_eq!(err.label(), "checkpoint_corrupt", "{err}");
        assert!(err.to_string().contains("not a whole gzip stream"), "{err}");
    }

    #[test]
    fn a_file_of_half_a_mebibyte_or_more_is_kept_gzipd_and_read_back_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("roll.json");
        let c = large_checkpoint();
        c.save(&path).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert!(bytes.starts_with(&[0x1f, 0x8b]), "not gzip'd");
        assert_eq!(Checkpoint::load(&path).unwrap().unwrap(), c);
        // A small one stays plain JSON, for `jq`.
        let small = checkpoint();
        small.save(&path).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), small.to_json(&path).unwrap());
        assert_eq!(Checkpoint::load(&path).unwrap().unwrap(), small);
    }

    #[tokio::test]
    async fn an_archive_after_another_host_wrote_is_refused_and_the_live_one_kept() {
        let bucket = Bucket::default();
        let mut store = CheckpointStore::object(bucket.object("roll.json"));
        let c = checkpoint();
        write(&mut store, &c).await.unwrap();
        bucket.overwrite("roll.json", b"{}");
        let err = store.archive(&c).await.unwrap_err();
        assert_eq!(err.label(), "checkpoint_lease_lost", "{err}");
        assert_eq!(bucket.body("roll.json").unwrap(), b"{}");
    }

    #[tokio::test]
    async fn an_object_that_is_not_a_checkpoint_is_refused_by_name() {
        let bucket = Bucket::default();
        bucket.overwrite("roll.json", b"\xff\xfe");
        let mut store = CheckpointStore::object(bucket.object("roll.json"));
        let err = store.load().await.unwrap_err();
        assert_eq!(err.label(), "checkpoint_corrupt");
        assert!(err.to_string().contains("s3://bucket/roll.json"), "{err}");
        bucket.overwrite("roll.json", b"{\"version\": 2}");
        assert_eq!(
            store.load().await.unwrap_err().label(),
            "checkpoint_corrupt"
        );
    }

    #[test]
    fn a_file_is_named_absolute_for_commands_and_an_object_by_its_url() {
        let file = CheckpointStore::file("checkpoints/asg.json");
        assert!(Path::new(&file.for_command()).is_absolute());
        assert!(file.file_path().is_some());
        let object = CheckpointStore::object(Bucket::default().object("a/asg.json"));
        assert_eq!(object.for_command(), "s3://bucket/a/asg.json");
        assert!(object.file_path().is_none());
    }
}
