//! `roller sim`: the endpoints and READY on stdout, the environment file,
//! the control endpoints over real HTTP, a clean stop on SIGTERM/SIGINT
//! with the report written, and refused scenarios.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;
use tempfile::TempDir;

use crate::test::Test;

/// Generous: the simulator is up in milliseconds, but CI machines stall.
const PATIENCE: Duration = Duration::from_secs(30);

/// A `roller sim` child, its stdout read line by line on a thread.
struct Sim {
    child: Child,
    lines: mpsc::Receiver<String>,
    /// Every line read so far, for failure messages.
    seen: Vec<String>,
}

impl Sim {
    fn start(dir: &TempDir, args: &[&str]) -> Sim {
        let mut child = Command::new(env!("CARGO_BIN_EXE_roller"))
            .arg("sim")
            .args(args)
            .current_dir(dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("cannot run roller");
        let stdout = child.stdout.take().unwrap();
        let (send, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if send.send(line).is_err() {
                    return;
                }
            }
        });
        Sim {
            child,
            lines,
            seen: Vec::new(),
        }
    }

    /// The lines up to READY (excluded), within `PATIENCE`.
    fn until_ready(&mut self) -> Vec<String> {
        let deadline = Instant::now() + PATIENCE;
        let mut lines = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) if line == "READY" => return lines,
                Ok(line) => {
                    self.seen.push(line.clone());
                    lines.push(line);
                }
                Err(_) => panic!("no READY within {PATIENCE:?}; got {:?}", self.seen),
            }
        }
    }

    /// The rest of stdout, once the child has closed it.
    fn rest(&mut self) -> Vec<String> {
        let mut rest = Vec::new();
        while let Ok(line) = self.lines.recv_timeout(PATIENCE) {
            rest.push(line);
        }
        rest
    }

    fn signal(&self, name: &str) {
        let status = Command::new("kill")
            .args([format!("-{name}"), self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success(), "kill -{name} failed");
    }

    /// Bounded polling for the exit.
    fn wait(&mut self) -> ExitStatus {
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < deadline, "roller sim did not stop");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Sim {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The value of `KEY=value` among `lines`.
fn value<'a>(lines: &'a [String], key: &str) -> &'a str {
    lines
        .iter()
        .find_map(|line| line.strip_prefix(&format!("{key}=")))
        .unwrap_or_else(|| panic!("no {key}= line in {lines:?}"))
}

/// A plain HTTP/1.0 GET (the answer ends when the server closes).
fn get(url: &str) -> (u16, String) {
    let rest = url.strip_prefix("http://").expect("an http:// URL");
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let mut stream = TcpStream::connect(authority).unwrap();
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    write!(stream, "GET {path} HTTP/1.0\r\nHost: {authority}\r\n\r\n").unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").expect("an HTTP answer");
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("no status in {head:?}"));
    (status, body.to_string())
}

fn loopback_urls(list: &str) -> Vec<String> {
    let urls: Vec<String> = list.split(',').map(str::to_string).collect();
    for url in &urls {
        assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    }
    urls
}

#[test]
fn sim_prints_its_endpoints_and_ready_serves_its_report_and_stops_cleanly_on_sigterm() {
    let dir = TempDir::new().unwrap();
    let mut sim = Sim::start(
        &dir,
        &[
            "--scenario",
            "demo",
            "--time-scale",
            "100",
            "--write-env",
            "sim.env.toml",
            "--report",
            "report.json",
        ],
    );
    let lines = sim.until_ready();
    let aws = value(&lines, "AWS_ENDPOINT_URL").to_string();
    assert_eq!(loopback_urls(&aws).len(), 1);
    let mesos = loopback_urls(value(&lines, "MESOS"));
    let marathon = loopback_urls(value(&lines, "MARATHON"));
    assert_eq!(mesos.len(), 3, "{lines:?}");
    assert_eq!(marathon.len(), 3, "{lines:?}");
    let control = value(&lines, "SIM").to_string();
    assert_eq!(control, format!("{aws}/sim"));

    let env: toml::Table = std::fs::read_to_string(dir.path().join("sim.env.toml"))
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(env["asg"].as_str(), Some("mesos-agents-demo"));
    assert_eq!(env["region"].as_str(), Some("us-east-1"));
    assert_eq!(env["aws_endpoint_url"].as_str(), Some(aws.as_str()));
    let strings = |key: &str| -> Vec<String> {
        env[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(strings("mesos"), mesos);
    assert_eq!(strings("marathon"), marathon);
    assert_eq!(env["match"].as_str(), Some("ip"));
    assert_eq!(env["time_scale"].as_float(), Some(100.0));

    let (status, body) = get(&format!("{control}/report"));
    assert_eq!(status, 200, "{body}");
    let report: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(report["final_state"]["desired_capacity"], 12, "{report}");
    assert_eq!(report["apps_with_outage"], 0, "{report}");
    let (status, body) = get(&format!("{control}/time"));
    assert_eq!(status, 200, "{body}");
    let time: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(time["time_scale"], 100.0);

    sim.signal("TERM");
    assert_eq!(sim.wait().code(), Some(0));
    let rest = sim.rest();
    assert!(rest.iter().any(|l| l.starts_with("simulated ")), "{rest:?}");
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("report.json")).unwrap())
            .unwrap();
    assert!(report["simulated_ms"].as_u64().unwrap() > 0, "{report}");
    assert_eq!(report["final_state"]["instances_live"], 12, "{report}");
    // Stopped means no longer listening.
    assert!(TcpStream::connect(aws.trim_start_matches("http://")).is_err());
}

#[test]
fn sim_stops_cleanly_on_sigint_too() {
    let dir = TempDir::new().unwrap();
    let mut sim = Sim::start(&dir, &["--scenario", "hazards", "--seed", "7"]);
    let lines = sim.until_ready();
    assert!(
        lines[0].starts_with("# roller sim: scenario hazards ("),
        "{lines:?}"
    );
    sim.signal("INT");
    assert_eq!(sim.wait().code(), Some(0));
}

#[test]
fn an_unknown_scenario_is_refused_naming_it_and_the_built_in_ones() {
    Test::new()
        .args(["sim", "--scenario", "no-such-scenario"])
        .status(2)
        .stderr_contains("unknown scenario 'no-such-scenario'")
        .stderr_contains("demo, msr-55, hazards, big")
        .run();
}

#[test]
fn a_malformed_scenario_file_is_refused_naming_the_field() {
    Test::new()
        .file(
            "typo.toml",
            "[group]\nname = \"g\"\nmin_size = 1\nmax_size = 2\ndesired_capacity = 1\ndesired_capcity = 2\n",
        )
        .args(["sim", "--scenario", "typo.toml"])
        .status(2)
        .stderr_contains("scenario typo.toml")
        .stderr_contains("desired_capcity")
        .run();
}

#[test]
fn an_invalid_scenario_file_is_refused_naming_the_field() {
    Test::new()
        .file(
            "big-desire.toml",
            "[group]\nname = \"g\"\nmin_size = 1\nmax_size = 2\ndesired_capacity = 5\n",
        )
        .args(["sim", "--scenario", "big-desire.toml"])
        .status(2)
        .stderr_contains("group.desired_capacity")
        .run();
}

#[test]
fn a_time_scale_that_is_not_positive_is_a_usage_error() {
    Test::new()
        .args(["sim", "--scenario", "demo", "--time-scale", "0"])
        .status(2)
        .stderr_contains("--time-scale")
        .stderr_contains("must be a positive number")
        .run();
}
