//! The checkpoint off the host (`checkpoint_store = "s3://…"`), in moto's
//! S3 (`scripts/with-moto`): a roll killed mid-way is resumed from another
//! folder with another env file (another host, as far as roller can
//! tell) and finishes; a run whose checkpoint someone else wrote stops
//! before its next side effect. The cluster is the simulator; only the
//! checkpoint is in moto.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use aws_sdk_s3::primitives::ByteStream;
use roller::roll::record::checkpoint::{Checkpoint, EventKind};
use tempfile::TempDir;

use super::cluster::{Cluster, assert_clean_end, text};

fn moto_url() -> String {
    std::env::var("ROLLER_TEST_MOTO_URL")
        .ok()
        .filter(|u| !u.is_empty())
        .expect("ROLLER_TEST_MOTO_URL is unset: these tests need moto; run scripts/with-moto cargo test")
}

/// A fresh bucket in moto and a client on it (run on the cluster's runtime).
pub(crate) struct Bucket {
    name: String,
    client: aws_sdk_s3::Client,
}

impl Bucket {
    pub(crate) fn create(cluster: &Cluster) -> Bucket {
        let name = format!("roller-{}", uuid::Uuid::new_v4().simple());
        let client = cluster.runtime.block_on(async {
            let credentials = aws_sdk_s3::config::Credentials::new("t", "t", None, None, "test");
            let config = aws_sdk_s3::config::Builder::new()
                .behavior_version(aws_sdk_s3::config::BehaviorVersion::latest())
                .region(aws_sdk_s3::config::Region::new("us-east-1"))
                .endpoint_url(moto_url())
                .credentials_provider(credentials)
                .force_path_style(true)
                .build();
            let client = aws_sdk_s3::Client::from_conf(config);
            client
                .create_bucket()
                .bucket(&name)
                .send()
                .await
                .expect("create bucket");
            client
        });
        Bucket { name, client }
    }

    /// Puts `cluster`'s checkpoint in this bucket (folder `rolls`).
    pub(crate) fn use_for(&self, cluster: &Cluster) {
        let env = std::fs::read_to_string(&cluster.env_file).unwrap();
        let lines = format!(
            "checkpoint_store = \"s3://{}/rolls\"\ncheckpoint_endpoint_url = \"{}\"\n",
            self.name,
            moto_url()
        );
        std::fs::write(&cluster.env_file, format!("{lines}{env}")).unwrap();
    }

    pub(crate) fn keys(&self, cluster: &Cluster) -> Vec<String> {
        cluster.runtime.block_on(async {
            let listed = self
                .client
                .list_objects_v2()
                .bucket(&self.name)
                .send()
                .await
                .expect("list");
            listed
                .contents()
                .iter()
                .filter_map(|o| o.key().map(str::to_string))
                .collect()
        })
    }

    /// The object and its ETag, if there is one.
    fn get(&self, cluster: &Cluster, key: &str) -> Option<(String, String)> {
        cluster.runtime.block_on(async {
            let answer = self
                .client
                .get_object()
                .bucket(&self.name)
                .key(key)
                .send()
                .await
                .ok()?;
            let etag = answer.e_tag()?.to_string();
            let body = answer.body.collect().await.ok()?.into_bytes();
            Some((String::from_utf8(body.to_vec()).ok()?, etag))
        })
    }

    /// Writes `body` over `key` if it is still version `etag`.
    fn put_if(&self, cluster: &Cluster, key: &str, body: String, etag: &str) -> bool {
        cluster.runtime.block_on(async {
            self.client
                .put_object()
                .bucket(&self.name)
                .key(key)
                .if_match(etag)
                .body(ByteStream::from(body.into_bytes()))
                .send()
                .await
                .is_ok()
        })
    }
}

/// The same environment in a fresh folder with its own (empty)
/// checkpoint_dir: a second host.
fn second_host(cluster: &Cluster) -> (TempDir, std::path::PathBuf) {
    let dir = TempDir::new().unwrap();
    let text = std::fs::read_to_string(&cluster.env_file).unwrap();
    let here = cluster.dir.path().join("checkpoints").display().to_string();
    let there = dir.path().join("checkpoints").display().to_string();
    let env = dir.path().join("env.toml");
    std::fs::write(&env, text.replace(&here, &there)).unwrap();
    (dir, env)
}

pub(crate) fn files(dir: &Path) -> usize {
    walk(dir)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .count()
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .flat_map(|e| {
            let p = e.path();
            if p.is_dir() { walk(&p) } else { vec![p] }
        })
        .collect()
}

#[test]
fn a_roll_killed_on_one_host_resumes_from_s3_on_another_and_finishes() {
    for strategy in ["drain", "serial"] {
        let cluster = Cluster::start("demo", "");
        let bucket = Bucket::create(&cluster);
        bucket.use_for(&cluster);
        let originals = cluster.live();
        let key = format!("rolls/{}.json", cluster.asg);

        // Host one: killed (SIGKILL) right after its 12th checkpoint write.
        let first = cluster
            .run_command(&["--target", "12", "--strategy", strategy])
            .env("ROLLER_CRASH_AT", "after:12")
            .output()
            .unwrap();
        assert_eq!(first.status.code(), None, "{strategy}: {}", text(&first));
        let (kept, _) = bucket
            .get(&cluster, &key)
            .expect("the checkpoint is in the bucket");
        let kept = Checkpoint::parse(Path::new(&key), &kept).expect("a whole checkpoint");
        assert!(!kept.plan.is_complete());

        // Host two: another folder, another env file, nothing local.
        let (dir, env) = second_host(&cluster);
        let deadline = Instant::now() + Duration::from_secs(120);
        let second = loop {
            let output = cluster
                .roller(&["run", "--env", env.to_str().unwrap()])
                .current_dir(dir.path())
                .output()
                .unwrap();
            // A pause (exit 3) on a loaded machine is resumed again.
            if output.status.code() != Some(3) || Instant::now() > deadline {
                break output;
            }
        };
        let out = text(&second);
        assert_eq!(second.status.code(), Some(0), "{strategy}: {out}");
        assert!(
            out.contains(&format!(
                "resuming run {} from s3://{}/{key}",
                kept.run_id, bucket.name
            )),
            "{out}"
        );
        let archive = format!("rolls/{}.{}.complete.json", cluster.asg, kept.run_id);
        assert!(
            out.contains(&format!(
                "checkpoint archived as s3://{}/{archive}",
                bucket.name
            )),
            "{out}"
        );
        assert_eq!(bucket.keys(&cluster), vec![archive.clone()], "{strategy}");
        let (archived, _) = bucket.get(&cluster, &archive).unwrap();
        let archived = Checkpoint::parse(Path::new(&archive), &archived).unwrap();
        assert!(archived.plan.is_complete());
        assert_eq!(
            files(cluster.dir.path()) + files(dir.path()),
            0,
            "nothing local"
        );
        assert_clean_end(&cluster, &originals, 12);
        let report = cluster.report();
        assert!(report.repeated_terminations.is_empty(), "{strategy}");
        assert!(report.terminations_of_gone.is_empty(), "{strategy}");

        // The status of an archived roll: there is no live checkpoint.
        let status = cluster
            .roller(&["status", "--env", env.to_str().unwrap()])
            .output()
            .unwrap();
        assert_eq!(status.status.code(), Some(2), "{}", text(&status));
        assert!(
            text(&status).contains("no checkpoint at s3://"),
            "{}",
            text(&status)
        );
    }
}

#[test]
fn a_run_whose_s3_checkpoint_someone_else_wrote_stops_before_its_next_side_effect() {
    let cluster = Cluster::start("demo", "");
    let bucket = Bucket::create(&cluster);
    bucket.use_for(&cluster);
    let originals = cluster.live();
    let key = format!("rolls/{}.json", cluster.asg);

    let (mut child, lines) = cluster.spawn(&["--target", "12", "--strategy", "serial"]);
    // Once the roll is under way, another writer takes the checkpoint: it
    // writes the run's own last version back with one event more (a new
    // ETag: S3's is the content's MD5, so the same bytes would keep it),
    // conditioned on that version so it never overwrites a newer one.
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut taken = None;
    while taken.is_none() && Instant::now() < deadline {
        let _ = lines.recv_timeout(Duration::from_millis(50));
        if let Some((body, etag)) = bucket.get(&cluster, &key) {
            let mut record = Checkpoint::parse(Path::new(&key), &body).unwrap();
            if record.groups[0].terminated() >= 1 {
                record.log(
                    std::time::SystemTime::now(),
                    EventKind::Operator,
                    "taken over by another writer",
                );
                let json = record.to_json(Path::new(&key)).unwrap();
                let json = String::from_utf8(json).unwrap();
                if bucket.put_if(&cluster, &key, json.clone(), &etag) {
                    taken = Some(json);
                }
            }
        }
    }
    let taken = taken.expect("the roll got under way and the checkpoint was taken");
    let status = child.wait().unwrap();
    // What the run printed, from the threads that read it.
    let stderr = lines.iter().collect::<Vec<String>>().join("\n");
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("was written by someone else"), "{stderr}");
    assert!(
        stderr.contains(&format!("s3://{}/{key}", bucket.name)),
        "{stderr}"
    );
    // Nothing the run did is missing from the version the other writer
    // holds: every original out of service had its termination recorded
    // there (the run wrote each intent before acting, and stopped at its
    // first refused write).
    let record = Checkpoint::parse(Path::new(&key), &taken).unwrap();
    let group = cluster.group();
    for id in &originals {
        let gone = group
            .instance(id)
            .is_none_or(|i| i.lifecycle_state.is_leaving());
        let sent = record.groups[0]
            .instances
            .iter()
            .any(|i| &i.id == id && i.terminate_sent);
        assert!(
            !gone || sent,
            "{id} was terminated after the lease was lost"
        );
    }
    assert_eq!(
        bucket.get(&cluster, &key).unwrap().0,
        taken,
        "the taker's version stands"
    );

    // Whoever holds it now (here: a rerun) finishes the roll.
    let rerun = cluster.resume_patiently(&[]);
    assert_eq!(rerun.status.code(), Some(0), "{}", text(&rerun));
    assert_clean_end(&cluster, &originals, 12);
}

#[test]
fn commands_that_change_local_files_refuse_an_s3_checkpoint_by_name() {
    let dir = TempDir::new().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_roller"))
        .args(["plan", "interrupt", "--file", "s3://bucket/rolls/asg.json"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", text(&output));
    assert!(text(&output).contains("is in S3"), "{}", text(&output));

    let cluster = Cluster::start("demo", "checkpoint_store = \"s3://bucket/rolls\"\n");
    let output = cluster
        .roller(&[
            "abandon",
            "--env",
            cluster.env_file.to_str().unwrap(),
            "--run-id",
            "r",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", text(&output));
    assert!(
        text(&output).contains("this one is in S3"),
        "{}",
        text(&output)
    );
}
