//! Tests of the AWS adapter that need no moto: a silent endpoint, and a
//! tiny loopback server speaking the Auto Scaling Query protocol for what
//! moto cannot show (paged scaling activities, throttled and lost answers).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use aws_sdk_autoscaling::config::Credentials;
use axum::extract::{Form, State};
use axum::http::StatusCode;
use axum::routing::post;

use super::{AwsAutoScaling, AwsSettings, AwsTimeouts};
use crate::roll::ports::auto_scaling::{AutoScaling, Termination};

const NS: &str = "http://autoscaling.amazonaws.com/doc/2011-01-01/";

/// An adapter pointed at `url` with fixed dummy credentials, so these tests
/// never depend on the caller's AWS setup.
async fn adapter(
    url: &str,
    timeouts: AwsTimeouts,
    attempts: u32,
    page: Option<u32>,
) -> AwsAutoScaling {
    let settings = AwsSettings {
        region: Some("us-east-1".to_string()),
        endpoint_url: Some(url.to_string()),
        timeouts,
        max_attempts: attempts,
        page_size: page,
        ..AwsSettings::default()
    };
    let sdk = settings
        .loader()
        .credentials_provider(Credentials::new("AKIDTEST", "secret", None, None, "test"))
        .load()
        .await;
    AwsAutoScaling::new(&sdk, settings.page_size)
}

fn quick() -> AwsTimeouts {
    AwsTimeouts {
        connect: Duration::from_millis(300),
        read: Duration::from_millis(300),
        attempt: Duration::from_millis(400),
        operation: Duration::from_millis(1500),
    }
}

type Script = Arc<dyn Fn(&HashMap<String, String>) -> (StatusCode, String) + Send + Sync>;
/// Every request form the server received, in order.
type Log = Arc<Mutex<Vec<HashMap<String, String>>>>;

/// A loopback Query-protocol server: every request's form goes to the log,
/// the script answers it. Dropping the handle stops the server.
struct Scripted {
    url: String,
    log: Log,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Scripted {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Scripted {
    async fn start(script: Script) -> Scripted {
        let log: Log = Arc::default();
        let state = (script, log.clone());
        let app = axum::Router::new()
            .route(
                "/",
                post(
                    |State((script, log)): State<(Script, Log)>,
                     Form(form): Form<HashMap<String, String>>| async move {
                        let answer = script(&form);
                        log.lock().expect("log lock").push(form);
                        (answer.0, [("content-type", "text/xml")], answer.1)
                    },
                ),
            )
            .with_state(state);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Scripted { url, log, task }
    }

    fn actions(&self) -> Vec<String> {
        self.log
            .lock()
            .expect("log lock")
            .iter()
            .map(|f| f.get("Action").cloned().unwrap_or_default())
            .collect()
    }
}

fn ok(action: &str, result: &str) -> (StatusCode, String) {
    (
        StatusCode::OK,
        format!(
            "<{action}Response xmlns=\"{NS}\"><{action}Result>{result}</{action}Result>\
             <ResponseMetadata><RequestId>r-1</RequestId></ResponseMetadata></{action}Response>"
        ),
    )
}

fn error(status: StatusCode, code: &str, message: &str) -> (StatusCode, String) {
    (
        status,
        format!(
            "<ErrorResponse xmlns=\"{NS}\"><Error><Type>Sender</Type><Code>{code}</Code>\
             <Message>{message}</Message></Error><RequestId>r-2</RequestId></ErrorResponse>"
        ),
    )
}

fn group_xml(instances: &[&str]) -> String {
    let members: String = instances
        .iter()
        .map(|id| {
            format!(
                "<member><InstanceId>{id}</InstanceId><AvailabilityZone>us-east-1a</AvailabilityZone>\
                 <LifecycleState>InService</LifecycleState><HealthStatus>Healthy</HealthStatus>\
                 <LaunchTemplate><LaunchTemplateId>lt-1</LaunchTemplateId><LaunchTemplateName>agents</LaunchTemplateName>\
                 <Version>3</Version></LaunchTemplate><ProtectedFromScaleIn>false</ProtectedFromScaleIn></member>"
            )
        })
        .collect();
    format!(
        "<AutoScalingGroups><member><AutoScalingGroupName>g</AutoScalingGroupName>\
         <MinSize>1</MinSize><MaxSize>5</MaxSize><DesiredCapacity>{}</DesiredCapacity>\
         <DefaultCooldown>300</DefaultCooldown><HealthCheckType>EC2</HealthCheckType>\
         <CreatedTime>2024-01-01T00:00:00Z</CreatedTime>\
         <AvailabilityZones><member>us-east-1a</member></AvailabilityZones>\
         <Instances>{members}</Instances></member></AutoScalingGroups>",
        instances.len()
    )
}

fn activity_xml(id: &str, status: &str) -> String {
    format!(
        "<member><ActivityId>{id}</ActivityId><AutoScalingGroupName>g</AutoScalingGroupName>\
         <Description>Launching a new EC2 instance</Description><Cause>At 2024 a user request</Cause>\
         <StartTime>2024-01-01T00:00:00Z</StartTime><StatusCode>{status}</StatusCode>\
         <StatusMessage>{status} message</StatusMessage><Progress>100</Progress></member>"
    )
}

/// A loopback server that accepts every connection, answers `start`
/// (when given, after reading the request) and then holds the socket
/// silent; its URL, and the task to abort when done.
async fn holding_server(start: Option<&'static [u8]>) -> (String, tokio::task::JoinHandle<()>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    let holder = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((mut socket, _)) = listener.accept().await {
            if let Some(start) = start {
                let mut request = [0u8; 4096];
                let _ = socket.read(&mut request).await;
                let _ = socket.write_all(start).await;
            }
            held.push(socket);
        }
    });
    (url, holder)
}

/// Describes a group through `aws`, which must fail: the error and how
/// long it took.
async fn failed_describe(aws: &AwsAutoScaling) -> (crate::aws::AwsError, Duration) {
    let started = Instant::now();
    let err = aws
        .describe_group("g")
        .await
        .expect_err("a server that never finishes an answer cannot succeed");
    (err, started.elapsed())
}

#[tokio::test]
async fn a_silent_endpoint_fails_in_bounded_time_with_a_timeout_error() {
    // Accepts connections and never answers: without timeouts the SDK
    // would wait forever.
    let (url, holder) = holding_server(None).await;
    let aws = adapter(&url, quick(), 2, None).await;
    let (err, elapsed) = failed_describe(&aws).await;
    holder.abort();
    assert_eq!(err.label(), "timeout", "{err}");
    assert!(err.to_string().contains("timed out"), "{err}");
    assert!(elapsed < Duration::from_secs(3), "took {elapsed:?}");
}

#[tokio::test]
async fn a_body_that_stalls_halfway_ends_at_the_attempt_timeout_with_the_sdks_stall_watch_off() {
    // Headers and the first bytes of the body, then silence: the clients
    // leave the SDK's stalled-stream protection off (its 20 s grace is
    // longer than an attempt), so the attempt timeout must be what ends
    // the read. The read timeout is set far beyond it to show that.
    let (url, holder) = holding_server(Some(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/xml\r\nContent-Length: 4000\r\n\r\n<DescribeAutoScalingGroupsResponse>",
    ))
    .await;
    let timeouts = AwsTimeouts {
        connect: Duration::from_millis(300),
        read: Duration::from_secs(30),
        attempt: Duration::from_millis(400),
        operation: Duration::from_millis(1500),
    };
    let aws = adapter(&url, timeouts, 2, None).await;
    assert_eq!(
        aws.asg
            .config()
            .stalled_stream_protection()
            .map(|p| p.is_enabled()),
        Some(false),
        "the Auto Scaling client must set the SDK's stall watch off, not leave it to the default"
    );
    let (err, elapsed) = failed_describe(&aws).await;
    holder.abort();
    assert_eq!(err.label(), "timeout", "{err}");
    assert!(elapsed < Duration::from_secs(3), "took {elapsed:?}");
    assert!(
        AwsTimeouts::default().attempt
            < aws_smithy_runtime_api::client::stalled_stream_protection::DEFAULT_GRACE_PERIOD,
        "the default attempt no longer ends a stall before the SDK's watch would"
    );
}

#[tokio::test]
async fn a_refused_connection_is_unavailable_not_a_hang() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    drop(listener);
    let aws = adapter(&url, quick(), 2, None).await;
    let started = Instant::now();
    let err = aws.describe_group("g").await.expect_err("nobody listens");
    assert!(
        matches!(err.label(), "unavailable" | "timeout"),
        "{}: {err}",
        err.label()
    );
    assert!(started.elapsed() < Duration::from_secs(3));
}

#[tokio::test]
async fn scaling_activities_are_read_across_pages_until_the_limit() {
    let server = Scripted::start(Arc::new(|form| {
        match form.get("NextToken").map(String::as_str) {
            None => ok(
                "DescribeScalingActivities",
                &format!(
                    "<Activities>{}{}</Activities><NextToken>page-2</NextToken>",
                    activity_xml("a-1", "Failed"),
                    activity_xml("a-2", "Successful")
                ),
            ),
            Some("page-2") => ok(
                "DescribeScalingActivities",
                &format!(
                    "<Activities>{}{}</Activities><NextToken>page-3</NextToken>",
                    activity_xml("a-3", "InProgress"),
                    activity_xml("a-4", "Successful")
                ),
            ),
            Some(_) => ok(
                "DescribeScalingActivities",
                &format!(
                    "<Activities>{}</Activities>",
                    activity_xml("a-5", "Cancelled")
                ),
            ),
        }
    }))
    .await;
    let aws = adapter(&server.url, quick(), 1, Some(2)).await;

    let all = aws.scaling_activities("g", 100).await.expect("activities");
    let ids: Vec<&str> = all.iter().map(|a| a.id.as_str()).collect();
    assert_eq!(ids, ["a-1", "a-2", "a-3", "a-4", "a-5"]);
    assert!(all[0].is_failed());
    assert_eq!(all[0].status_message.as_deref(), Some("Failed message"));
    assert!(all[0].start_time.is_some());
    let pages = server.log.lock().expect("log").clone();
    assert_eq!(pages.len(), 3);
    assert_eq!(pages[0].get("MaxRecords").map(String::as_str), Some("2"));
    assert_eq!(
        pages[2].get("NextToken").map(String::as_str),
        Some("page-3")
    );

    let first_three = aws.scaling_activities("g", 3).await.expect("activities");
    assert_eq!(first_three.len(), 3);
    assert_eq!(
        pages.len() + 2,
        server.actions().len(),
        "stops after the page holding the 3rd"
    );
}

#[tokio::test]
async fn a_next_token_that_repeats_is_a_bad_response_not_a_loop() {
    let server = Scripted::start(Arc::new(|_| {
        ok(
            "DescribeScalingActivities",
            &format!(
                "<Activities>{}</Activities><NextToken>same</NextToken>",
                activity_xml("a-1", "Successful")
            ),
        )
    }))
    .await;
    let aws = adapter(&server.url, quick(), 1, Some(1)).await;
    let err = aws.scaling_activities("g", 100).await.expect_err("loop");
    assert_eq!(err.label(), "bad_response");
}

#[tokio::test]
async fn a_throttled_terminate_is_sent_again_because_aws_did_not_act_on_it() {
    let terminates = Arc::new(Mutex::new(0));
    let seen = terminates.clone();
    let server = Scripted::start(Arc::new(move |form| {
        match form.get("Action").map(String::as_str) {
            Some("DescribeAutoScalingGroups") => {
                ok("DescribeAutoScalingGroups", &group_xml(&["i-1", "i-2"]))
            }
            Some("TerminateInstanceInAutoScalingGroup") => {
                let mut n = seen.lock().expect("count");
                *n += 1;
                assert_eq!(
                    form.get("ShouldDecrementDesiredCapacity")
                        .map(String::as_str),
                    Some("true")
                );
                if *n == 1 {
                    error(StatusCode::BAD_REQUEST, "Throttling", "Rate exceeded")
                } else {
                    ok(
                        "TerminateInstanceInAutoScalingGroup",
                        &format!(
                            "<Activity>{}</Activity>",
                            activity_xml("t-1", "InProgress")
                                .replace("<member>", "")
                                .replace("</member>", "")
                        ),
                    )
                }
            }
            _ => error(StatusCode::BAD_REQUEST, "InvalidAction", "unexpected"),
        }
    }))
    .await;
    let aws = adapter(&server.url, quick(), 3, None).await;
    let outcome = aws.terminate_instance("g", "i-1").await.expect("terminate");
    match outcome {
        Termination::Started(activity) => assert_eq!(activity.id, "t-1"),
        other => panic!("expected Started, got {other:?}"),
    }
    assert_eq!(*terminates.lock().expect("count"), 2);
}

#[tokio::test]
async fn a_terminate_whose_answer_is_lost_is_not_resent_and_the_group_is_asked_again() {
    // The server fails the terminate with a 500 (as if the answer were
    // lost): the instance is still listed, so the error stands, and the
    // terminate went out exactly once despite 3 allowed SDK attempts.
    let server = Scripted::start(Arc::new(|form| {
        match form.get("Action").map(String::as_str) {
            Some("DescribeAutoScalingGroups") => {
                ok("DescribeAutoScalingGroups", &group_xml(&["i-1", "i-2"]))
            }
            _ => (
                StatusCode::INTERNAL_SERVER_ERROR,
                "<html>boom</html>".to_string(),
            ),
        }
    }))
    .await;
    let aws = adapter(&server.url, quick(), 3, None).await;
    let err = aws.terminate_instance("g", "i-1").await.expect_err("500");
    assert_eq!(err.label(), "unavailable", "{err}");
    let actions = server.actions();
    assert_eq!(
        actions,
        [
            "DescribeAutoScalingGroups",
            "TerminateInstanceInAutoScalingGroup",
            "DescribeAutoScalingGroups"
        ]
    );
}

#[tokio::test]
async fn a_terminate_that_fails_after_the_instance_left_is_already_gone() {
    let describes = Arc::new(Mutex::new(0));
    let seen = describes.clone();
    let server = Scripted::start(Arc::new(move |form| {
        match form.get("Action").map(String::as_str) {
            Some("DescribeAutoScalingGroups") => {
                let mut n = seen.lock().expect("count");
                *n += 1;
                // Listed before the terminate, gone after it.
                let ids: &[&str] = if *n == 1 { &["i-1", "i-2"] } else { &["i-2"] };
                ok("DescribeAutoScalingGroups", &group_xml(ids))
            }
            _ => error(
                StatusCode::SERVICE_UNAVAILABLE,
                "ServiceUnavailable",
                "try later",
            ),
        }
    }))
    .await;
    let aws = adapter(&server.url, quick(), 1, None).await;
    let outcome = aws.terminate_instance("g", "i-1").await.expect("terminate");
    assert_eq!(outcome, Termination::AlreadyGone);
}

#[tokio::test]
async fn an_empty_group_list_from_aws_is_group_not_found_naming_the_group() {
    let server = Scripted::start(Arc::new(|_| {
        ok(
            "DescribeAutoScalingGroups",
            "<AutoScalingGroups></AutoScalingGroups>",
        )
    }))
    .await;
    let aws = adapter(&server.url, quick(), 1, None).await;
    let err = aws
        .describe_group("agents-blue")
        .await
        .expect_err("unknown");
    assert_eq!(err.label(), "group_not_found");
    assert!(err.to_string().contains("'agents-blue'"), "{err}");
}

#[tokio::test]
async fn a_group_parses_with_its_instances_launch_template_and_sizes() {
    let server = Scripted::start(Arc::new(|_| {
        ok("DescribeAutoScalingGroups", &group_xml(&["i-1"]))
    }))
    .await;
    let aws = adapter(&server.url, quick(), 1, None).await;
    let g = aws.describe_group("g").await.expect("group");
    assert_eq!((g.min_size, g.max_size, g.desired_capacity), (1, 5, 1));
    let i = g.instance("i-1").expect("i-1");
    assert_eq!(
        i.launch_source,
        Some(crate::roll::ports::auto_scaling::LaunchSource::Template {
            id: Some("lt-1".to_string()),
            name: Some("agents".to_string()),
            version: Some("3".to_string()),
        })
    );
    assert_eq!(i.health_status, "Healthy");
}

/// The reference's least-privilege IAM policy (docs/reference.md, "AWS
/// permissions") lists exactly the actions the adapter calls: every SDK
/// operation in `client.rs` (`self.asg.op()`, `self.ec2.op()`), its
/// lifecycle hooks' and its alarms' (`self.cloudwatch.op()`) is in the
/// policy, and the policy holds nothing else.
#[test]
fn the_documented_iam_policy_lists_exactly_the_actions_the_adapter_calls() {
    fn camel(snake: &str) -> String {
        snake
            .split('_')
            .map(|word| {
                let mut chars = word.chars();
                chars
                    .next()
                    .map(|c| c.to_ascii_uppercase().to_string() + chars.as_str())
                    .unwrap_or_default()
            })
            .collect()
    }
    // The SDK operations `code` calls on `client` (e.g. `self.asg.`), as
    // `service:Operation`.
    let calls = |code: &str, client: &str, service: &str| {
        let code: String = code.chars().filter(|c| !c.is_whitespace()).collect();
        let mut called = std::collections::BTreeSet::new();
        for (at, _) in code.match_indices(client) {
            let rest = &code[at + client.len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                .collect();
            if rest[name.len()..].starts_with("()") && !name.is_empty() {
                called.insert(format!("{service}:{}", camel(&name)));
            }
        }
        called
    };
    let client = include_str!("client.rs");
    let mut called = calls(client, "self.asg.", "autoscaling");
    called.extend(calls(client, "self.asg_once.", "autoscaling"));
    called.extend(calls(client, "self.ec2.", "ec2"));
    called.extend(calls(
        include_str!("lifecycle_hooks.rs"),
        "self.asg.",
        "autoscaling",
    ));
    called.extend(calls(
        include_str!("warm_pool.rs"),
        "self.asg.",
        "autoscaling",
    ));
    called.extend(calls(
        include_str!("alarms.rs"),
        "self.cloudwatch.",
        "cloudwatch",
    ));
    assert!(called.len() >= 10, "the scan found too little: {called:?}");
    let listed = documented_iam_policy();
    assert_eq!(
        listed, called,
        "docs/reference.md policy vs the adapter's calls"
    );

    // The S3 checkpoint's statement: the calls of its adapter, tests left
    // out (they create buckets).
    let s3 = include_str!("s3_checkpoint.rs");
    let s3_called = calls(s3.split("#[cfg(test)]").next().unwrap(), ".client.", "s3");
    assert!(
        s3_called.len() >= 3,
        "the scan found too little: {s3_called:?}"
    );
    let section = REFERENCE.split("## AWS permissions").nth(1).unwrap();
    let s3_listed: std::collections::BTreeSet<String> = section
        .split("\n## ")
        .next()
        .unwrap()
        .split('"')
        .filter(|s| s.starts_with("s3:"))
        .map(str::to_string)
        .collect();
    assert_eq!(
        s3_listed, s3_called,
        "docs/reference.md S3 statement vs the S3 adapter's calls"
    );
}

/// The reference, whose "AWS permissions" section holds the policy.
const REFERENCE: &str = include_str!("../../docs/reference.md");

/// The actions of the reference's IAM policy (`autoscaling:…`, `ec2:…`,
/// `cloudwatch:…`):
/// the section's first JSON block (the later ones are what AWS checks
/// beyond the calls, such as a launch template's use).
pub(crate) fn documented_iam_policy() -> std::collections::BTreeSet<String> {
    let section = REFERENCE
        .split("## AWS permissions")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .expect("docs/reference.md has an `AWS permissions` section");
    let policy = section
        .split("```json")
        .nth(1)
        .and_then(|s| s.split("```").next())
        .expect("the section opens with the policy's JSON block");
    policy
        .split('"')
        .filter(|s| {
            s.starts_with("autoscaling:") || s.starts_with("ec2:") || s.starts_with("cloudwatch:")
        })
        .map(str::to_string)
        .collect()
}
