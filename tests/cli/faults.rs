//! Faults switched on from outside while the real binary rolls, through
//! the simulator's `POST /sim/faults` (as an operator of a game day
//! would): 5xx answers on all three systems, AWS throttling, and a Mesos
//! and a Marathon leader change, then cleared. The roll must end clean,
//! with no termination sent twice. (The in-process fault tests,
//! `src/roll/tests/faults.rs`, cover each fault alone on paused time.)

use std::time::{Duration, Instant};

use super::cluster::{Cluster, assert_clean_end, wait_for_line};

const TIMEOUTS: &str = "[timeouts]\nscale_up = \"3h\"\nderegister = \"3h\"\nhealthy = \"3h\"\ntask_move = \"3h\"\nretry = \"3h\"\n";

/// `POST /sim/faults` with `body`; the answer's status.
fn set_faults(cluster: &Cluster, body: &str) -> u16 {
    let url = format!(
        "{}/faults",
        cluster.sim.as_ref().unwrap().endpoints().control()
    );
    cluster.runtime.block_on(async {
        reqwest::Client::new()
            .post(url)
            .body(body.to_string())
            .send()
            .await
            .expect("the simulator's control endpoint answers")
            .status()
            .as_u16()
    })
}

#[test]
fn faults_switched_on_through_sim_faults_mid_roll_end_in_a_clean_roll() {
    for strategy in ["drain", "serial"] {
        // Every wait gets three simulated hours (36 real seconds at 300×):
        // the SDK's retry backoff is real time, so a few failed AWS calls
        // in a row span simulated minutes, and a loaded machine must not
        // turn them into a pause.
        let cluster = Cluster::start("demo", TIMEOUTS);
        let originals = cluster.live();
        let (mut child, lines) = cluster.spawn(&["--target", "12", "--strategy", strategy]);
        // Once the new agents are asked for: errors, throttling, and new
        // leaders for Mesos and Marathon.
        assert!(
            wait_for_line(&lines, "scale-up"),
            "{strategy}: the roll never reached its scale-up"
        );
        let faulty = r#"{
            "api": {
                "aws": {"error_rate": 0.2},
                "mesos": {"error_rate": 0.2},
                "marathon": {"error_rate": 0.2},
                "aws_throttle_rate": 0.2
            },
            "mesos_leader": 1,
            "marathon_leader": 2
        }"#;
        assert_eq!(set_faults(&cluster, faulty), 200, "{strategy}");
        // Let the roll work under them for a while (real seconds; the
        // roll's own waits are simulated), then a second leader change.
        let until = Instant::now() + Duration::from_secs(3);
        while Instant::now() < until && child.try_wait().unwrap().is_none() {
            std::thread::sleep(Duration::from_millis(100));
        }
        assert_eq!(
            set_faults(&cluster, r#"{"mesos_leader": 0, "marathon_leader": 0}"#),
            200
        );
        let until = Instant::now() + Duration::from_secs(3);
        while Instant::now() < until && child.try_wait().unwrap().is_none() {
            std::thread::sleep(Duration::from_millis(100));
        }
        assert_eq!(set_faults(&cluster, r#"{"api": {}}"#), 200);
        let status = child.wait().unwrap();
        // What the run printed, from the threads that read it.
        let said: Vec<String> = lines.iter().collect();
        assert_eq!(status.code(), Some(0), "{strategy}: {}", said.join("\n"));
        assert_clean_end(&cluster, &originals, 12);
        let report = cluster.report();
        assert!(
            report.repeated_terminations.is_empty(),
            "{strategy}: {:?}",
            report.repeated_terminations
        );
        assert!(
            report.terminations_of_gone.is_empty(),
            "{strategy}: {:?}",
            report.terminations_of_gone
        );
        // The faults were felt: each system answered injected errors.
        for system in ["aws:", "mesos:", "marathon:"] {
            assert!(
                report.injected_faults.keys().any(|k| k.starts_with(system)),
                "{strategy}: no {system} fault injected: {:?}",
                report.injected_faults
            );
        }
        assert!(
            report.injected_faults.contains_key("aws:Throttling"),
            "{strategy}: {:?}",
            report.injected_faults
        );
    }
}
