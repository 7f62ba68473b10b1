//! The simulator's warm pools: their size, what they fill from, the
//! warm starts of a scale-out, reuse on scale-in, a warm instance's
//! termination and refill, deletion, and AWS's refusal on a mixed
//! instances group.

use super::*;
use crate::sim::scenario::Scenario;

/// Three instances of template version 1 (versions up to 2 exist), MaxSize
/// 6, exact timings (boot 90 s, shutdown 30 s), and the pool given as a
/// `[group.warm_pool]` table.
fn world(pool: &str) -> World {
    let text = format!(
        r#"
    [group]
    name = "agents"
    min_size = 1
    max_size = 6
    desired_capacity = 3
    launch_template = {{ version = "1", latest_version = 2 }}
    {pool}
"#
    );
    World::new(&Scenario::from_toml(&text, "test").expect("valid scenario"))
}

const POOL: &str = "[group.warm_pool]\nmin_size = 1";

/// The pool's instances: (state, template version), by launch.
fn pool(w: &World) -> Vec<(&'static str, String)> {
    w.warm_pool("agents")
        .expect("group")
        .expect("a pool")
        .instances
        .into_iter()
        .map(|i| (i.lifecycle_state, i.launch_template.version))
        .collect()
}

fn group(w: &World) -> GroupView {
    w.describe_groups(&[]).remove(0)
}

fn secs(s: u64) -> SimTime {
    SimTime::from_secs(s)
}

#[test]
fn the_pool_holds_max_minus_desired_from_the_template_and_is_not_the_groups() {
    let w = world(POOL);
    assert_eq!(pool(&w), vec![("Warmed:Stopped", "1".to_string()); 3]);
    let g = group(&w);
    assert_eq!(g.instances.len(), 3, "warm instances are not listed");
    assert_eq!(w.agents().len(), 3, "a stopped instance runs no agent");
    let view = w.warm_pool("agents").unwrap().unwrap();
    assert_eq!(
        (
            view.min_size,
            view.max_group_prepared_capacity,
            view.pool_state
        ),
        (1, None, "Stopped")
    );
    let prepared = world("[group.warm_pool]\nmax_group_prepared_capacity = 4\nmin_size = 0");
    assert_eq!(
        pool(&prepared).len(),
        1,
        "MaxGroupPreparedCapacity − desired"
    );
    let floor = world("[group.warm_pool]\nmax_group_prepared_capacity = 3\nmin_size = 2");
    assert_eq!(pool(&floor).len(), 2, "never below MinSize");
    assert_eq!(world("").warm_pool("agents").unwrap(), None);
}

#[test]
fn a_scale_out_takes_warm_instances_first_and_they_keep_their_template() {
    let mut w = world(POOL);
    w.set_launch_template_version("2").expect("version 2");
    let warm: Vec<String> = w
        .warm_pool("agents")
        .unwrap()
        .unwrap()
        .instances
        .into_iter()
        .map(|i| i.instance_id)
        .collect();
    w.set_desired_capacity("agents", 5).expect("scaled out");
    let g = group(&w);
    let arrived: Vec<(&str, &str)> = g
        .instances
        .iter()
        .filter(|i| warm.contains(&i.instance_id))
        .map(|i| (i.lifecycle_state, i.launch_template.version.as_str()))
        .collect();
    assert_eq!(
        arrived,
        vec![("Pending", "1"); 2],
        "two warm starts, each keeping the template it was launched from"
    );
    // A warm start is quicker than a boot (90 s).
    w.advance_to(secs(60));
    assert!(
        group(&w)
            .instances
            .iter()
            .filter(|i| warm.contains(&i.instance_id))
            .all(|i| i.lifecycle_state == "InService")
    );
    // The pool's size: 6 − 5 = 1 (MinSize 1).
    assert_eq!(pool(&w).len(), 1);
}

#[test]
fn a_terminated_warm_instance_leaves_desired_alone_and_the_pool_refills_from_the_current_template()
{
    let mut w = world(POOL);
    w.set_launch_template_version("2").expect("version 2");
    let old = w.warm_pool("agents").unwrap().unwrap().instances[0]
        .instance_id
        .clone();
    w.terminate_instance(&old, false).expect("terminated");
    assert_eq!(group(&w).desired_capacity, 3);
    let again = w.terminate_instance(&old, false).expect("answered");
    assert!(again.description.contains(&old), "the same activity");
    assert_eq!(
        pool(&w),
        vec![
            ("Warmed:Terminating", "1".to_string()),
            ("Warmed:Stopped", "1".to_string()),
            ("Warmed:Stopped", "1".to_string()),
            ("Warmed:Pending", "2".to_string()),
        ]
    );
    w.advance_to(secs(90));
    assert_eq!(
        pool(&w),
        vec![
            ("Warmed:Stopped", "1".to_string()),
            ("Warmed:Stopped", "1".to_string()),
            ("Warmed:Stopped", "2".to_string()),
        ]
    );
    assert_eq!(group(&w).instances.len(), 3);
}

#[test]
fn a_scale_in_returns_instances_to_a_pool_that_reuses_them_and_terminates_otherwise() {
    let mut w = world("[group.warm_pool]\nreuse_on_scale_in = true");
    let before = group(&w).instances.len();
    w.set_desired_capacity("agents", 2).expect("scaled in");
    assert_eq!(group(&w).instances.len(), before - 1);
    assert_eq!(pool(&w).len(), 4, "returned to the pool");
    w.advance_to(secs(30));
    assert_eq!(pool(&w), vec![("Warmed:Stopped", "1".to_string()); 4]);
    // Its agent stopped with it: the master drops it once its pings time out.
    w.advance_to(secs(600));
    assert_eq!(w.agents().len(), 2, "its agent stopped with it");

    let mut plain = world(POOL);
    plain.set_desired_capacity("agents", 2).expect("scaled in");
    let g = group(&plain);
    assert_eq!(
        g.instances
            .iter()
            .filter(|i| i.lifecycle_state == "Terminating")
            .count(),
        1
    );
    assert_eq!(pool(&plain).len(), 4, "the pool grows by a launch");
}

#[test]
fn deleting_the_pool_terminates_its_instances_and_the_pool_goes_with_the_last() {
    let mut w = world(POOL);
    w.delete_warm_pool("agents", false).expect("deleted");
    let view = w.warm_pool("agents").unwrap().expect("still there");
    assert_eq!(view.status, Some("PendingDelete"));
    w.advance_to(secs(30));
    assert_eq!(w.warm_pool("agents").unwrap(), None);
    let again = w.delete_warm_pool("agents", false).expect_err("no pool");
    assert_eq!(again.label(), "validation");
    let mut forced = world(POOL);
    forced.delete_warm_pool("agents", true).expect("deleted");
    assert_eq!(forced.warm_pool("agents").unwrap(), None);
}

#[test]
fn a_mixed_instances_group_gets_no_warm_pool_as_aws_documents() {
    let text = r#"
    [group]
    name = "agents"
    min_size = 1
    max_size = 6
    desired_capacity = 3
    [group.mixed_instances]
    overrides = [{ instance_type = "m5.xlarge" }, { instance_type = "m5a.xlarge" }]
"#;
    let mut w = World::new(&Scenario::from_toml(text, "test").expect("valid scenario"));
    let refused = w
        .put_warm_pool("agents", &crate::sim::scenario::WarmPoolSpec::default())
        .expect_err("refused");
    assert_eq!(refused.label(), "validation");
    assert!(
        refused.to_string().contains("mixed instances policy"),
        "{refused}"
    );
}
