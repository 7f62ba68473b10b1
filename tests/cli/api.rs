//! The plan API of a live run (`roller run --listen`, `roller demo
//! --listen`) and its client (`roller plan … --url`), through the real
//! binary against the simulator, every server on loopback: an interrupt
//! through the API holds the run (exit 3) and is logged with its caller;
//! the token gates every request; a non-loopback address without one is
//! refused before anything happens; 5xx answers count as errors of their
//! system in /metrics; the demo serves /v1/plans and /metrics while it
//! rolls.

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use roller::roll::record::checkpoint::{Checkpoint, EventKind};

use super::cluster::{Cluster, assert_clean_end, text};

/// A running `roller` with its stdout and stderr read line by line.
struct Live {
    child: Child,
    stdout: mpsc::Receiver<String>,
    stderr: mpsc::Receiver<String>,
}

fn lines_of(stream: impl Read + Send + 'static) -> mpsc::Receiver<String> {
    let (send, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines().map_while(Result::ok) {
            if send.send(line).is_err() {
                break;
            }
        }
    });
    lines
}

impl Live {
    fn spawn(mut command: Command) -> Live {
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = lines_of(child.stdout.take().unwrap());
        let stderr = lines_of(child.stderr.take().unwrap());
        Live {
            child,
            stdout,
            stderr,
        }
    }

    /// The API's root URL, from the line the binary prints once it has
    /// bound (`roller: plan API on http://IP:PORT (…)`).
    fn api_url(&self) -> String {
        while let Ok(line) = self.stderr.recv_timeout(Duration::from_secs(60)) {
            if let Some(rest) = line.strip_prefix("roller: plan API on ") {
                let url = rest.split_whitespace().next().unwrap().to_string();
                assert!(url.starts_with("http://127.0.0.1:"), "{line}");
                return url;
            }
        }
        panic!("no plan API line on stderr");
    }

    /// Waits for a log line (stderr) containing `needle`.
    fn wait_for(&self, needle: &str) {
        while let Ok(line) = self.stderr.recv_timeout(Duration::from_secs(60)) {
            if line.contains(needle) {
                return;
            }
        }
        panic!("no line with {needle:?} in the log");
    }

    /// Waits for the exit; returns its code and the rest of stdout and
    /// stderr.
    fn finish(mut self) -> (Option<i32>, String, String) {
        let status = self.child.wait().unwrap();
        let rest = |lines: &mpsc::Receiver<String>| lines.iter().collect::<Vec<_>>().join("\n");
        (status.code(), rest(&self.stdout), rest(&self.stderr))
    }
}

/// One request on the cluster's runtime: status and body.
fn fetch(
    cluster: &Cluster,
    method: reqwest::Method,
    url: &str,
    token: Option<&str>,
) -> (u16, String) {
    cluster.runtime.block_on(async {
        let mut request = reqwest::Client::new().request(method, url);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        (status, response.text().await.unwrap())
    })
}

#[test]
fn an_interrupt_through_the_api_holds_the_live_run_which_logs_its_caller_and_exits_3() {
    let cluster = Cluster::start("demo", "");
    let originals: Vec<String> = cluster
        .group()
        .instances
        .iter()
        .map(|i| i.id.clone())
        .collect();
    let run = Live::spawn(cluster.run_command(&["--target", "12", "--listen", "127.0.0.1:0"]));
    let url = run.api_url();
    // The plan exists and runs: the scale-up waits for the new agents.
    run.wait_for("scale-up/wait-registered STARTED");
    let (status, body) = fetch(
        &cluster,
        reqwest::Method::GET,
        &format!("{url}/v1/plans"),
        None,
    );
    assert_eq!((status, body.as_str()), (200, "[\"roll\"]"));
    let (status, body) = fetch(
        &cluster,
        reqwest::Method::GET,
        &format!("{url}/v1/plans/roll"),
        None,
    );
    assert_eq!(status, 202, "{body}");
    let plan: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(plan["name"], "roll-mesos-agents-demo");
    assert_eq!(plan["status"], "IN_PROGRESS");
    // This process has talked to AWS, Mesos and Marathon (preflight and
    // the first steps), and to no pager (none is configured).
    let (status, metrics) = fetch(
        &cluster,
        reqwest::Method::GET,
        &format!("{url}/metrics"),
        None,
    );
    assert_eq!(status, 200);
    let sample = |series: &str| -> f64 {
        metrics
            .lines()
            .find_map(|line| line.strip_prefix(&format!("{series} ")))
            .unwrap_or_else(|| panic!("no {series} in:\n{metrics}"))
            .parse()
            .unwrap()
    };
    for system in ["aws", "mesos", "marathon"] {
        let calls = sample(&format!("roller_api_calls_total{{system=\"{system}\"}}"));
        assert!(calls > 0.0, "{system}: {calls}");
    }
    for system in ["pagerduty", "webhook"] {
        let calls = sample(&format!("roller_api_calls_total{{system=\"{system}\"}}"));
        assert_eq!(calls, 0.0, "{system}");
    }
    assert_eq!(
        sample("roller_wait_timeout_seconds{kind=\"registered\"}"),
        3600.0
    );

    // `finish` is PENDING until the very end: interrupting it changes the
    // plan whenever it arrives, and holds the run once all else is done.
    let interrupt = cluster
        .roller(&["plan", "interrupt", "--url", &url, "--phase", "finish"])
        .env("USER", "oncall-bob")
        .output()
        .unwrap();
    assert_eq!(interrupt.status.code(), Some(0), "{}", text(&interrupt));
    let said = String::from_utf8_lossy(&interrupt.stdout);
    assert!(
        said.contains("interrupt phase 'finish': accepted (Received cmd: interrupt)"),
        "{said}"
    );
    // Asked again before the run applied it: already done, nothing queued.
    let again = cluster
        .roller(&["plan", "interrupt", "--url", &url, "--phase", "finish"])
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));
    assert!(String::from_utf8_lossy(&again.stdout).starts_with("already done"));
    // The caller's mistakes exit 2 with the server's word.
    for (args, expected) in [
        (vec!["--phase", "nope"], "Phase nope not found"),
        (vec!["--step", "unlock"], "Missing phase"),
    ] {
        let mut all = vec!["plan", "force-complete", "--url", url.as_str()];
        all.extend(args);
        let wrong = cluster.roller(&all).output().unwrap();
        assert_eq!(wrong.status.code(), Some(2), "{}", text(&wrong));
        assert!(
            String::from_utf8_lossy(&wrong.stderr).contains(expected),
            "{}",
            text(&wrong)
        );
    }

    let (code, _, stderr) = run.finish();
    assert_eq!(code, Some(3), "{stderr}");
    let file = cluster.checkpoint();
    let release = format!(
        "roller plan continue --file {} --phase finish",
        file.display()
    );
    assert!(stderr.contains(&release), "{stderr}");
    let held = Checkpoint::load(&file).unwrap().unwrap();
    let operations: Vec<_> = held
        .events
        .iter()
        .filter(|e| e.kind == EventKind::Operator)
        .collect();
    assert_eq!(operations.len(), 1, "{operations:?}");
    let user = operations[0].user.as_deref().unwrap();
    assert!(
        user.starts_with("api 127.0.0.1:") && user.ends_with("(says oncall-bob)"),
        "{user}"
    );
    assert!(
        operations[0]
            .message
            .starts_with("interrupt phase 'finish'")
    );

    // The API is gone with the run: the client says so, exit 1.
    let gone = cluster
        .roller(&["plan", "show", "--url", &url])
        .output()
        .unwrap();
    assert_eq!(gone.status.code(), Some(1), "{}", text(&gone));
    assert!(
        String::from_utf8_lossy(&gone.stderr).contains("cannot reach the plan API"),
        "{}",
        text(&gone)
    );

    // Released as printed, the roll ends cleanly.
    let go = cluster
        .roller(&[
            "plan",
            "continue",
            "--file",
            file.to_str().unwrap(),
            "--phase",
            "finish",
        ])
        .output()
        .unwrap();
    assert_eq!(go.status.code(), Some(0), "{}", text(&go));
    let resumed = cluster.run(&[]);
    assert_eq!(resumed.status.code(), Some(0), "{}", text(&resumed));
    assert_clean_end(&cluster, &originals, 12);
}

#[test]
fn with_a_token_every_call_needs_it_and_without_one_a_non_loopback_listen_is_refused() {
    let cluster = Cluster::start("demo", "");
    let token = "tok-3f9a1c";

    // Reachable from other hosts and no token: refused, nothing done.
    let open = cluster.run(&["--target", "12", "--listen", "0.0.0.0:0"]);
    assert_eq!(open.status.code(), Some(2), "{}", text(&open));
    let said = String::from_utf8_lossy(&open.stderr);
    assert!(
        said.contains("ROLLER_API_TOKEN") && said.contains("ROLLER_API_TOKEN_FILE"),
        "{said}"
    );
    assert!(!cluster.checkpoint().exists(), "refused before anything");
    assert_eq!(cluster.group().tag("roller:run-id"), None);

    let token_file = cluster.dir.path().join("api-token");
    std::fs::write(&token_file, format!("{token}\n")).unwrap();
    let mut command = cluster.run_command(&["--target", "12", "--listen", "127.0.0.1:0"]);
    command.env("ROLLER_API_TOKEN_FILE", &token_file);
    let run = Live::spawn(command);
    let url = run.api_url();
    run.wait_for("scale-up/wait-registered STARTED");
    let plans = format!("{url}/v1/plans/roll");
    for wrong in [None, Some("not-the-token")] {
        let (status, body) = fetch(&cluster, reqwest::Method::GET, &plans, wrong);
        assert_eq!(status, 401, "{wrong:?}: {body}");
        assert!(!body.contains(token));
    }
    let (status, _) = fetch(&cluster, reqwest::Method::GET, &plans, Some(token));
    assert_eq!(status, 202);
    let (status, _) = fetch(
        &cluster,
        reqwest::Method::GET,
        &format!("{url}/metrics"),
        Some(token),
    );
    assert_eq!(status, 200);

    // The client: without the token, exit 2 naming the variables; with
    // it, the tree `--file` would print.
    let refused = cluster
        .roller(&["plan", "show", "--url", &url])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("ROLLER_API_TOKEN"));
    let shown = cluster
        .roller(&["plan", "show", "--url", &url])
        .env("ROLLER_API_TOKEN", token)
        .output()
        .unwrap();
    assert_eq!(shown.status.code(), Some(0), "{}", text(&shown));
    assert!(
        String::from_utf8_lossy(&shown.stdout)
            .starts_with("roll-mesos-agents-demo (dependency strategy) ("),
        "{}",
        text(&shown)
    );

    let (code, stdout, stderr) = run.finish();
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert!(!stdout.contains(token) && !stderr.contains(token));
}

#[test]
fn the_demo_serves_its_plans_and_metrics_while_it_rolls() {
    let mut command = Command::new(env!("CARGO_BIN_EXE_roller"));
    command
        .args(["demo", "--listen", "127.0.0.1:0"])
        .env("NO_PROXY", "127.0.0.1,localhost")
        .env("no_proxy", "127.0.0.1,localhost");
    let demo = Live::spawn(command);
    // The API is up before the simulated cluster's settling second: the
    // demo cannot be over before these answer.
    let url = demo.api_url();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let get = |path: &str| {
        runtime.block_on(async {
            let response = reqwest::get(format!("{url}{path}")).await.unwrap();
            (response.status().as_u16(), response.text().await.unwrap())
        })
    };
    assert_eq!(get("/v1/plans"), (200, "[\"roll\"]".to_string()));
    let (status, metrics) = get("/metrics");
    assert_eq!(status, 200);
    assert!(metrics.contains("# TYPE roller_steps gauge\n"), "{metrics}");
    assert!(metrics.contains("roller_steps{status=\"PENDING\"} "));
    assert!(metrics.contains("roller_api_calls_total{system=\"aws\"} "));
    let (code, stdout, stderr) = demo.finish();
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("outages: 0 apps"), "{stdout}");
}

#[test]
fn requests_answered_with_5xx_count_as_errors_of_their_system_in_the_metrics() {
    // A few failed calls in a row must not make a retry wait run out.
    let cluster = Cluster::start(
        "demo",
        "[timeouts]\nscale_up = \"3h\"\nderegister = \"3h\"\nhealthy = \"3h\"\ntask_move = \"3h\"\nretry = \"3h\"\n",
    );
    let run = Live::spawn(cluster.run_command(&["--target", "12", "--listen", "127.0.0.1:0"]));
    let url = run.api_url();
    run.wait_for("scale-up/wait-registered STARTED");
    let control = format!(
        "{}/faults",
        cluster.sim.as_ref().unwrap().endpoints().control()
    );
    let set_faults = |body: &str| {
        let status = cluster.runtime.block_on(async {
            reqwest::Client::new()
                .post(&control)
                .body(body.to_string())
                .send()
                .await
                .unwrap()
                .status()
        });
        assert_eq!(status, 200, "{body}");
    };
    // Each system's error count; `None` once the run (and its API) ended.
    let errors = || -> Option<Vec<f64>> {
        let metrics = cluster.runtime.block_on(async {
            let response = reqwest::get(format!("{url}/metrics")).await.ok()?;
            response.text().await.ok()
        })?;
        let counts = ["aws", "mesos", "marathon"]
            .iter()
            .map(|system| {
                let series = format!("roller_api_errors_total{{system=\"{system}\"}} ");
                metrics
                    .lines()
                    .find_map(|line| line.strip_prefix(&series))
                    .unwrap()
                    .parse()
                    .unwrap()
            })
            .collect();
        Some(counts)
    };
    assert_eq!(
        errors(),
        Some(vec![0.0, 0.0, 0.0]),
        "a healthy cluster answers"
    );
    set_faults(
        r#"{"api": {"aws": {"error_rate": 0.5}, "mesos": {"error_rate": 0.5}, "marathon": {"error_rate": 0.5}}}"#,
    );
    // The roll keeps calling all three every tick (and retries): each
    // soon meets a 5xx. Bounded by the roll's own end.
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    let mut seen = errors();
    while seen.as_ref().is_some_and(|counts| counts.contains(&0.0))
        && std::time::Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(20));
        seen = errors();
    }
    assert!(
        seen.as_ref().is_some_and(|counts| !counts.contains(&0.0)),
        "aws, mesos and marathon each had an error counted before the roll ended: {seen:?}"
    );
    set_faults(r#"{"api": {}}"#);
    let (code, stdout, stderr) = run.finish();
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
}
