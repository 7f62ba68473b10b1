//! `[[services]]`: the defaults of a pod type, and each refusal by its
//! field's name (the service's own fields, its scheduler among the apps,
//! room for its pods on distinct unreserved agents).

use crate::sim::scenario::Scenario;

/// Three agents (the default shape) and the scheduler of `hello-world`.
const CLUSTER: &str = r#"
    [group]
    name = "agents"
    min_size = 3
    max_size = 6
    desired_capacity = 3

    [[apps]]
    id = "/hello-world"
    instances = 1
    [apps.labels]
    DCOS_COMMONS_API_VERSION = "v1"
    DCOS_SERVICE_NAME = "hello-world"
"#;

/// `CLUSTER` with one service of one pod type, `service` and `pod` added
/// to their tables.
fn scenario(service: &str, pod: &str) -> String {
    format!(
        "{CLUSTER}\n[[services]]\nname = \"hello-world\"\n{service}\n\n\
         [[services.pods]]\ntype = \"hello\"\ncount = 3\n{pod}\n"
    )
}

fn refused(text: &str) -> String {
    match Scenario::from_toml(text, "test.toml") {
        Ok(_) => panic!("scenario was accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_pod_type_gets_one_server_task_ready_after_30_s_and_the_deploy_is_complete() {
    let s = Scenario::from_toml(&scenario("", ""), "services").expect("valid");
    let service = &s.services[0];
    assert_eq!(service.deploy_s, 0.0);
    assert!(service.deploy_errors.is_empty());
    let pod = &service.pods[0];
    assert_eq!((pod.kind.as_str(), pod.count), ("hello", 3));
    assert_eq!((pod.cpus, pod.mem), (1.0, 1024.0));
    assert_eq!(pod.tasks, ["server"]);
    assert_eq!(pod.readiness_s, 30.0);
}

#[test]
fn a_bad_service_is_refused_by_field_name() {
    let cases = [
        (scenario("retries = 3", ""), "unknown field `retries`"),
        (scenario("", "retries = 3"), "unknown field `retries`"),
        (
            scenario("", "").replace("name = \"hello-world\"\n\n", "name = \"Hello World\"\n\n"),
            "services[0].name: a service name is lowercase letters",
        ),
        (
            scenario("deploy_s = -1", ""),
            "services[0].deploy_s: must be a number at least 0",
        ),
        (
            scenario("deploy_errors = [\"\"]", ""),
            "services[0].deploy_errors: an error is a message",
        ),
        (
            format!("{CLUSTER}\n[[services]]\nname = \"hello-world\"\n"),
            "services[0].pods: a service needs at least one [[services.pods]] table",
        ),
        (
            scenario("", "").replace("count = 3", "count = 0"),
            "services[0].pods[0].count: must be at least 1",
        ),
        (
            scenario("", "mem = 0"),
            "services[0].pods[0].mem: must be a number above 0",
        ),
        (
            scenario("", "readiness_s = -2"),
            "services[0].pods[0].readiness_s: must be a number at least 0",
        ),
        (
            scenario("", "tasks = []"),
            "services[0].pods[0].tasks: a pod runs at least one task",
        ),
        (
            scenario("", "tasks = [\"server\", \"server\"]"),
            "services[0].pods[0].tasks: task server appears more than once",
        ),
        (
            scenario("", "").replace("type = \"hello\"", "type = \"hello_world\""),
            "services[0].pods[0].type: a pod type is lowercase letters",
        ),
        (
            format!(
                "{}\n[[services.pods]]\ntype = \"hello\"\ncount = 1\n",
                scenario("", "")
            ),
            "services[0].pods[1].type: pod type hello appears more than once",
        ),
        (
            format!(
                "{}\n[[services]]\nname = \"hello-world\"\n[[services.pods]]\ntype = \"a\"\ncount = 1\n",
                scenario("", "")
            ),
            "services[1].name: service hello-world appears more than once",
        ),
        (
            scenario("", "").replace("name = \"hello-world\"\n\n", "name = \"kafka\"\n\n"),
            "services[0].name: no app runs the scheduler of service kafka",
        ),
        (
            scenario("", "").replace("DCOS_COMMONS_API_VERSION = \"v1\"\n", ""),
            "services[0].name: no app runs the scheduler of service hello-world",
        ),
        (
            scenario("", "").replace("count = 3", "count = 4"),
            "services[0].pods[0].count: 4 pods of type hello (1 cpus and 1024 MB each) need \
             as many distinct unreserved agents with room for one; the groups have 3",
        ),
        (
            scenario("", "cpus = 1000"),
            "services[0].pods[0].count: 3 pods of type hello (1000 cpus",
        ),
    ];
    for (text, expected) in cases {
        let err = refused(&text);
        assert!(err.contains(expected), "{expected}\n  got: {err}");
    }
}

#[test]
fn a_service_may_not_take_the_name_of_marathon_or_of_a_job_framework() {
    let text = format!(
        "{}\n[[jobs]]\nframework = \"hello-world\"\nid = \"backup\"\nduration_s = 60\n",
        scenario("", "")
    );
    let err = refused(&text);
    assert!(
        err.contains("services[0].name: hello-world is already the name of another framework"),
        "{err}"
    );
}

#[test]
fn pods_that_fit_only_on_agents_reserved_to_a_role_are_refused() {
    let text = r#"
        [[groups]]
        name = "private"
        min_size = 1
        max_size = 2
        desired_capacity = 1

        [[groups]]
        name = "public"
        min_size = 2
        max_size = 4
        desired_capacity = 2
        role = "slave_public"

        [[apps]]
        id = "/kafka"
        instances = 1
        [apps.labels]
        DCOS_COMMONS_API_VERSION = "v1"
        DCOS_SERVICE_NAME = "kafka"

        [[services]]
        name = "kafka"
        [[services.pods]]
        type = "kafka"
        count = 2
    "#;
    let err = refused(text);
    assert!(
        err.contains("services[0].pods[0].count: 2 pods of type kafka") && err.contains("have 1"),
        "{err}"
    );
    Scenario::from_toml(&text.replace("count = 2", "count = 1"), "fits").expect("valid");
}
