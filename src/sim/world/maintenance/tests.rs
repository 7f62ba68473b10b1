//! The maintenance primitives on the world alone: machine ids compared as
//! Mesos compares them, and what the master remembers of a machine.

use super::*;
use crate::sim::scenario::Scenario;

fn id(hostname: Option<&str>, ip: Option<&str>) -> MachineId {
    MachineId {
        hostname: hostname.map(String::from),
        ip: ip.map(String::from),
    }
}

fn demo() -> World {
    World::new(
        &Scenario::builtin("demo")
            .expect("demo is embedded")
            .expect("demo parses"),
    )
}

#[test]
fn machine_ids_compare_as_mesos_compares_them() {
    let agent = id(Some("ip-10-0-1-7.ec2.internal"), Some("10.0.1.7"));
    assert!(agent.same_machine(&id(Some("IP-10-0-1-7.EC2.Internal"), Some("10.0.1.7"))));
    assert!(!agent.same_machine(&id(Some("ip-10-0-1-7.ec2.internal"), Some("10.0.1.8"))));
    // A field left out is not a field given, even empty.
    assert!(!agent.same_machine(&id(Some("ip-10-0-1-7.ec2.internal"), None)));
    assert!(!agent.same_machine(&id(None, Some("10.0.1.7"))));
    assert!(!id(None, Some("10.0.1.7")).same_machine(&id(Some(""), Some("10.0.1.7"))));
    assert_eq!(
        agent.json(),
        r#"{"hostname":"ip-10-0-1-7.ec2.internal","ip":"10.0.1.7"}"#
    );
    assert_eq!(id(None, Some("10.0.1.7")).json(), r#"{"ip":"10.0.1.7"}"#);
}

#[test]
fn a_window_naming_the_hostname_in_another_case_covers_the_agent() {
    let mut w = demo();
    let agent = w.agents()[0].clone();
    let now_ns = i64::try_from(w.epoch.unix_ns(w.now)).expect("fits");
    w.set_maintenance_schedule(vec![MaintenanceWindow {
        machines: vec![id(Some(&agent.hostname.to_uppercase()), Some(&agent.ip))],
        start_unix_ns: now_ns,
        duration_ns: 3_600_000_000_000,
    }])
    .expect("valid");
    assert!(w.in_maintenance(0), "Marathon keeps off it");
    assert!(!w.in_maintenance(1));
}

#[test]
fn a_machine_that_left_the_schedule_stays_known_and_up() {
    let mut w = demo();
    let never_seen = id(Some("spare"), Some("10.9.0.1"));
    w.set_maintenance_schedule(vec![MaintenanceWindow {
        machines: vec![never_seen.clone()],
        start_unix_ns: 0,
        duration_ns: 1,
    }])
    .expect("valid");
    w.set_maintenance_schedule(Vec::new()).expect("valid");
    let err = w
        .machines_down(std::slice::from_ref(&never_seen))
        .expect_err("UP now");
    assert_eq!(err.label(), "machine_not_draining");
    let err = w
        .machines_down(&[id(Some("other"), Some("10.9.0.2"))])
        .expect_err("unknown");
    assert_eq!(err.label(), "machine_not_scheduled");
    assert_eq!(
        err.to_string(),
        r#"Machine '{"hostname":"other","ip":"10.9.0.2"}' is not part of a maintenance schedule"#
    );
}
