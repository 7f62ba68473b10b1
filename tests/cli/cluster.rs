//! A simulated cluster for tests of the real binary: the simulator served
//! from the test's own runtime, an environment file pointing at it (at
//! its first group, or at every group as `roller sim --write-env` lists a
//! cluster's), and what every finished roll must leave
//! (`assert_clean_end`).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use roller::aws::AwsAutoScaling;
use roller::roll::ports::auto_scaling::{AutoScaling, AutoScalingGroup};
use roller::sim::{Report, Scenario, SimOptions, Simulator};
use tempfile::TempDir;

/// Simulated seconds per real second: the demo roll (about 40 simulated
/// minutes) takes some ten seconds.
pub(crate) const TIME_SCALE: f64 = 300.0;

/// For `msr-55`, whose roll takes some seven simulated hours.
pub(crate) const MSR_TIME_SCALE: f64 = 1000.0;

/// A simulated cluster served from this test's own runtime, and a folder
/// with its environment file and checkpoints.
pub(crate) struct Cluster {
    pub(crate) runtime: tokio::runtime::Runtime,
    pub(crate) sim: Option<Simulator>,
    pub(crate) dir: TempDir,
    pub(crate) env_file: PathBuf,
    /// The scenario's first group: the one its checkpoint is named after.
    pub(crate) asg: String,
    /// Every group of the scenario, in its order (`asg` first), each with
    /// its size: the target `roller sim --write-env` gives it.
    pub(crate) groups: Vec<(String, u32)>,
    /// Each app's instances before any roll: a roll must leave them so.
    pub(crate) instances: std::collections::BTreeMap<String, u32>,
}

impl Cluster {
    pub(crate) fn start(scenario: &str, extra_toml: &str) -> Cluster {
        Cluster::start_at(scenario, TIME_SCALE, extra_toml)
    }

    /// A cluster whose environment file names its first group (`asg`),
    /// for a roll of that group alone.
    pub(crate) fn start_at(scenario: &str, time_scale: f64, extra_toml: &str) -> Cluster {
        Cluster::start_listing(scenario, time_scale, extra_toml, false)
    }

    /// A cluster whose environment file lists every group of a scenario
    /// of several as a `[[group]]` table with its size as its target, as
    /// `roller sim --write-env` writes it, so that `roller run` without
    /// `--target` rolls them all in one plan; a scenario of one group gets
    /// the file `start_at` writes.
    pub(crate) fn start_whole_at(scenario: &str, time_scale: f64, extra_toml: &str) -> Cluster {
        Cluster::start_listing(scenario, time_scale, extra_toml, true)
    }

    fn start_listing(
        scenario: &str,
        time_scale: f64,
        extra_toml: &str,
        every_group: bool,
    ) -> Cluster {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let scenario = Scenario::load(scenario).unwrap();
        let sim = runtime
            .block_on(Simulator::start(
                &scenario,
                SimOptions {
                    time_scale,
                    ..SimOptions::default()
                },
            ))
            .unwrap();
        let dir = TempDir::new().unwrap();
        let endpoints = sim.endpoints().clone();
        let list = |urls: &[String]| {
            urls.iter()
                .map(|u| format!("\"{u}\""))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let groups: Vec<(String, u32)> = scenario
            .groups()
            .map(|g| (g.name.clone(), g.desired_capacity))
            .collect();
        let listed = every_group && groups.len() > 1;
        let asg = if listed {
            String::new()
        } else {
            format!("asg = \"{}\"\n", scenario.group.name)
        };
        let text = format!(
            "{asg}region = \"us-east-1\"\naws_endpoint_url = \"{}\"\nmesos = [{}]\nmarathon = [{}]\n\
             dcos_url = \"{}\"\nmatch = \"ip\"\ntime_scale = {time_scale}\ncheckpoint_dir = \"{}\"\n\
             {extra_toml}\n",
            endpoints.aws_endpoint_url,
            list(&endpoints.mesos),
            list(&endpoints.marathon),
            endpoints.dcos_url,
            dir.path().join("checkpoints").display(),
        );
        // Waits get an hour (simulated) unless a test sets its own: a
        // loaded CI machine must not turn a slow poll into a pause.
        let text = if extra_toml.contains("[timeouts]") {
            text
        } else {
            format!(
                "{text}[timeouts]\nscale_up = \"1h\"\nderegister = \"1h\"\nhealthy = \"1h\"\ntask_move = \"1h\"\n"
            )
        };
        // Last: a table runs to the next header, and `Bucket::use_for`
        // puts its keys first.
        let text = if listed {
            let tables: String = groups
                .iter()
                .map(|(name, target)| {
                    format!("\n[[group]]\nname = \"{name}\"\ntarget = {target}\n")
                })
                .collect();
            format!("{text}{tables}")
        } else {
            text
        };
        let env_file = dir.path().join("env.toml");
        std::fs::write(&env_file, text).unwrap();
        // Let the world settle (five simulated minutes, at most a second of
        // real time: the scenarios start in their steady state).
        std::thread::sleep(Duration::from_secs_f64((300.0 / time_scale).min(1.0)));
        let instances = sim
            .report()
            .apps
            .iter()
            .map(|a| (a.id.clone(), a.instances))
            .collect();
        Cluster {
            instances,
            runtime,
            sim: Some(sim),
            dir,
            env_file,
            asg: scenario.group.name.clone(),
            groups,
        }
    }

    pub(crate) fn roller(&self, args: &[&str]) -> Command {
        // `scripts/crash` runs a private copy of the binary (hours of
        // trials must not pick up a rebuild made meanwhile).
        let binary = std::env::var_os("ROLLER_TEST_BIN")
            .unwrap_or_else(|| env!("CARGO_BIN_EXE_roller").into());
        let mut command = Command::new(binary);
        command
            .args(args)
            .current_dir(self.dir.path())
            .env("AWS_ACCESS_KEY_ID", "simulated")
            .env("AWS_SECRET_ACCESS_KEY", "simulated")
            .env("AWS_EC2_METADATA_DISABLED", "true")
            .env_remove("AWS_PROFILE")
            .env_remove("AWS_ENDPOINT_URL")
            .env("NO_PROXY", "127.0.0.1,localhost")
            .env("no_proxy", "127.0.0.1,localhost");
        command
    }

    /// `roller run --env <this cluster's file>` and `args`, to be run.
    pub(crate) fn run_command(&self, args: &[&str]) -> Command {
        let mut all = vec!["run", "--env", self.env_file.to_str().unwrap()];
        all.extend_from_slice(args);
        self.roller(&all)
    }

    pub(crate) fn run(&self, args: &[&str]) -> Output {
        self.run_command(args).output().unwrap()
    }

    /// `roller run` again (a resume, `args` added) with the scale-up wait
    /// given a real timeout, as an operator does after a pause on a quick
    /// one.
    pub(crate) fn resume_patiently(&self, args: &[&str]) -> Output {
        self.run_command(args)
            .env("ROLLER_TIMEOUTS_SCALE_UP", "20m")
            .output()
            .unwrap()
    }

    pub(crate) fn spawn(&self, args: &[&str]) -> (Child, mpsc::Receiver<String>) {
        let mut child = self
            .run_command(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The log (stderr) and the report (stdout), line by line.
        let stdout = child.stdout.take().unwrap();
        let stderr = child.stderr.take().unwrap();
        let (send, lines) = mpsc::channel();
        let also = send.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if also.send(line).is_err() {
                    break;
                }
            }
        });
        (child, lines)
    }

    pub(crate) fn checkpoint(&self) -> PathBuf {
        self.dir
            .path()
            .join("checkpoints")
            .join(format!("{}.json", self.asg))
    }

    /// An AWS client of the simulator: the tests' own hand on the group
    /// (another writer), run with `self.runtime.block_on`.
    pub(crate) fn aws(&self) -> AwsAutoScaling {
        let url = self
            .sim
            .as_ref()
            .unwrap()
            .endpoints()
            .aws_endpoint_url
            .clone();
        self.runtime
            .block_on(roller::aws::simulated_client(&url, "us-east-1"))
    }

    /// The first group, as Auto Scaling describes it now.
    pub(crate) fn group(&self) -> AutoScalingGroup {
        self.group_named(&self.asg)
    }

    pub(crate) fn group_named(&self, name: &str) -> AutoScalingGroup {
        let aws = self.aws();
        self.runtime.block_on(aws.describe_group(name)).unwrap()
    }

    /// The first group's instances that are not leaving (an instance
    /// shutting down is still listed, Terminating, for a while).
    pub(crate) fn live(&self) -> Vec<String> {
        self.group()
            .instances
            .into_iter()
            .filter(|i| !i.lifecycle_state.is_leaving())
            .map(|i| i.id)
            .collect()
    }

    pub(crate) fn report(&self) -> Report {
        self.sim.as_ref().unwrap().report()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if let Some(sim) = self.sim.take() {
            self.runtime.block_on(sim.shutdown());
        }
    }
}

pub(crate) fn text(output: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Waits for a line containing `needle` (or the end of output).
pub(crate) fn wait_for_line(lines: &mpsc::Receiver<String>, needle: &str) -> bool {
    while let Ok(line) = lines.recv_timeout(Duration::from_secs(60)) {
        if line.contains(needle) {
            return true;
        }
    }
    false
}

/// The names in `dir`, sorted (none when it does not exist).
pub(crate) fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = match std::fs::read_dir(dir) {
        Ok(entries) => entries
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect(),
        Err(_) => Vec::new(),
    };
    names.sort();
    names
}

/// What every finished roll must leave: N agents, none of the originals,
/// processes and tag restored, no outage in the monitor's ground truth.
pub(crate) fn assert_clean_end(cluster: &Cluster, originals: &[String], n: u32) {
    let group = cluster.group();
    let live = cluster.live();
    assert_eq!(live.len() as u32, n, "{live:?}");
    assert_eq!(group.desired_capacity, n);
    for id in originals {
        assert!(!live.contains(id), "{id} still in the group");
    }
    assert!(
        group.suspended_processes.is_empty(),
        "{:?}",
        group.suspended_processes
    );
    assert_eq!(group.tag("roller:run-id"), None);
    let report = cluster.report();
    assert_eq!(report.apps_with_outage, 0, "{}", report.summary());
    let instances: std::collections::BTreeMap<String, u32> = report
        .apps
        .iter()
        .map(|a| (a.id.clone(), a.instances))
        .collect();
    assert_eq!(instances, cluster.instances, "surges must be undone");
    let originals_count = originals.len() as u32;
    let peak: u32 = report.az_peak.values().sum();
    assert!(peak <= n + originals_count, "peak {peak}");
    assert_eq!(report.peak_instances_beyond_desired, 0);
}

/// A webhook receiver on loopback: every request body it gets, answered
/// 200. Stops with the test process.
pub(crate) struct Webhook {
    pub(crate) url: String,
    bodies: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl Webhook {
    pub(crate) fn start() -> Webhook {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        let bodies = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let seen = bodies.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { break };
                let mut data = Vec::new();
                let mut buf = [0u8; 4096];
                // Read the head, then as much body as Content-Length says.
                let body = loop {
                    let Ok(n) = stream.read(&mut buf) else {
                        break None;
                    };
                    if n == 0 {
                        break None;
                    }
                    data.extend_from_slice(&buf[..n]);
                    let text = String::from_utf8_lossy(&data).to_string();
                    if let Some(end) = text.find("\r\n\r\n") {
                        let length = text[..end]
                            .lines()
                            .find_map(|l| {
                                let (k, v) = l.split_once(':')?;
                                k.eq_ignore_ascii_case("content-length")
                                    .then(|| v.trim().parse::<usize>().ok())?
                            })
                            .unwrap_or(0);
                        if data.len() >= end + 4 + length {
                            break Some(text[end + 4..end + 4 + length].to_string());
                        }
                    }
                };
                if let Some(body) = body {
                    seen.lock().unwrap().push(body);
                }
                let _ = stream.write_all(
                    b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok",
                );
            }
        });
        Webhook { url, bodies }
    }

    pub(crate) fn bodies(&self) -> Vec<String> {
        self.bodies.lock().unwrap().clone()
    }
}
