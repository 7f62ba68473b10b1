use proptest::prelude::*;

use super::*;
use crate::aws::fuzz::{describe_both, instances_read};
use crate::roll::ports::auto_scaling::LaunchSource;

const HEAD: &str = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
    <DescribeAutoScalingGroupsResponse xmlns=\"http://autoscaling.amazonaws.com/doc/2011-01-01/\">\
    <DescribeAutoScalingGroupsResult><AutoScalingGroups>";
const TAIL: &str = "</AutoScalingGroups></DescribeAutoScalingGroupsResult>\
    <ResponseMetadata><RequestId>r-1</RequestId></ResponseMetadata>\
    </DescribeAutoScalingGroupsResponse>";

/// An answer of one group, `fuzz-asg` (the name the fuzz adapter asks
/// for), with `instances` as its `<Instances>` element's content.
fn answer(instances: &str) -> String {
    format!(
        "{HEAD}<member><AutoScalingGroupName>fuzz-asg</AutoScalingGroupName>\
         <MinSize>1</MinSize><MaxSize>9</MaxSize><DesiredCapacity>2</DesiredCapacity>\
         <AvailabilityZones><member>us-east-1a</member></AvailabilityZones>\
         <Instances>{instances}</Instances>\
         <LaunchTemplate><LaunchTemplateId>lt-1</LaunchTemplateId><Version>4</Version></LaunchTemplate>\
         </member>{TAIL}"
    )
}

const TWO: &str = "<member><InstanceId>i-1</InstanceId><AvailabilityZone>us-east-1a</AvailabilityZone>\
    <LifecycleState>InService</LifecycleState><HealthStatus>Healthy</HealthStatus>\
    <LaunchTemplate><LaunchTemplateId>lt-1</LaunchTemplateId><LaunchTemplateName>agents</LaunchTemplateName>\
    <Version>3</Version></LaunchTemplate><ProtectedFromScaleIn>true</ProtectedFromScaleIn>\
    <InstanceType>m5.large</InstanceType><WeightedCapacity>2</WeightedCapacity></member>\
    <member><InstanceId>i-2</InstanceId><AvailabilityZone>us-east-1b</AvailabilityZone>\
    <LifecycleState>Terminating:Wait</LifecycleState><HealthStatus>Unhealthy</HealthStatus>\
    <LaunchConfigurationName>old</LaunchConfigurationName></member>";

#[test]
fn reads_each_instance_and_cuts_the_list_out_of_the_answer() {
    let body = answer(TWO);
    let split = split(body.as_bytes()).expect("the plain case is read here");
    assert_eq!(split.groups.len(), 1);
    let [first, second] = &split.groups[0][..] else {
        panic!("two instances, got {:?}", split.groups[0]);
    };
    assert_eq!(first.id, "i-1");
    assert_eq!(first.availability_zone, "us-east-1a");
    assert_eq!(first.lifecycle_state, LifecycleState::InService);
    assert_eq!(first.health_status, "Healthy");
    assert!(first.protected_from_scale_in);
    assert_eq!(first.instance_type.as_deref(), Some("m5.large"));
    assert_eq!(
        first.launch_source,
        Some(LaunchSource::Template {
            id: Some("lt-1".to_string()),
            name: Some("agents".to_string()),
            version: Some("3".to_string()),
        })
    );
    assert_eq!(second.id, "i-2");
    assert_eq!(
        second.lifecycle_state,
        LifecycleState::parse("Terminating:Wait")
    );
    assert!(!second.protected_from_scale_in);
    assert_eq!(second.instance_type, None);
    assert_eq!(
        second.launch_source,
        Some(LaunchSource::Configuration {
            name: "old".to_string()
        })
    );
    // The rest of the group is left as it was, for the SDK.
    assert_eq!(
        String::from_utf8(split.body).unwrap(),
        answer("").replace("<Instances></Instances>", "")
    );
}

#[test]
fn the_adapter_reads_the_same_group_as_the_sdk() {
    for body in [
        answer(TWO),
        answer(""),
        answer("<member><InstanceId/></member>"),
    ] {
        let (here, by_sdk) = describe_both(body.as_bytes());
        assert!(here.contains("fuzz-asg"), "{here}");
        assert_eq!(here, by_sdk);
    }
    let (here, _) = describe_both(answer(TWO).as_bytes());
    assert!(here.contains("i-2") && here.contains("m5.large"), "{here}");
}

#[test]
fn the_describe_call_reads_the_instances_itself_unless_told_not_to() {
    let body = answer(TWO);
    assert_eq!(instances_read(body.as_bytes(), true), (Some(2), 0));
    assert_eq!(instances_read(body.as_bytes(), false), (None, 2));
    // Not the plain case: the SDK reads them, whatever the setting.
    let odd = answer(
        "<member><InstanceId>i-&amp;1</InstanceId><LifecycleState>Pending</LifecycleState></member>",
    );
    assert_eq!(instances_read(odd.as_bytes(), true), (None, 1));
}

/// A body in chunks, as an answer comes off the socket.
struct Chunks(std::collections::VecDeque<Bytes>);

impl Body for Chunks {
    type Data = Bytes;
    type Error = aws_smithy_types::body::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        Poll::Ready(self.get_mut().0.pop_front().map(|c| Ok(Frame::data(c))))
    }
}

#[test]
fn an_answer_read_in_chunks_is_split_once_it_has_all_come() {
    let body = answer(TWO);
    let chunks = body
        .as_bytes()
        .chunks(97)
        .map(Bytes::copy_from_slice)
        .collect();
    let reader = InstancesRead::default();
    let mut splitting = Splitting {
        body: SdkBody::from_body_1_x(Chunks(chunks)),
        read: Vec::new(),
        ended: false,
        reader: reader.clone(),
    };
    let waker = std::task::Waker::noop();
    let mut cx = Context::from_waker(waker);
    let mut frames = Vec::new();
    while let Poll::Ready(Some(frame)) = Pin::new(&mut splitting).poll_frame(&mut cx) {
        frames.push(frame.unwrap().into_data().unwrap());
    }
    let expected = split(body.as_bytes()).unwrap();
    assert_eq!(
        frames,
        vec![Bytes::from(expected.body)],
        "one frame, the rest of the answer"
    );
    assert_eq!(reader.take(), Some(expected.groups));
}

#[test]
fn anything_but_the_plain_case_is_left_whole_for_the_sdk() {
    let odd = [
        // An entity, CDATA or a comment in an instance's value.
        answer("<member><InstanceId>i-&amp;1</InstanceId></member>"),
        answer("<member><InstanceId><![CDATA[i-1]]></InstanceId></member>"),
        answer("<member><InstanceId>i-1<!-- x --></InstanceId></member>"),
        // A child element in a value, a namespace prefix.
        answer("<member><InstanceId><b>i-1</b></InstanceId></member>"),
        answer("<member><a:InstanceId>i-1</a:InstanceId></member>"),
        // A boolean the SDK refuses; an instance without an id.
        answer(
            "<member><InstanceId>i-1</InstanceId><ProtectedFromScaleIn>yes</ProtectedFromScaleIn></member>",
        ),
        answer("<member><LifecycleState>InService</LifecycleState></member>"),
        answer("<member><InstanceId>i-1</InstanceId></member>"),
        // Tags that do not nest; `<Instances>` twice, or off the path.
        answer("<member><InstanceId>i-1</HealthStatus></member>"),
        answer("<member><InstanceId>i-1</InstanceId></member></Instances><Instances>"),
        answer("<member><Other><Instances/></Other></member>"),
    ];
    for body in &odd {
        assert_eq!(split(body.as_bytes()), None, "{body}");
        let (here, by_sdk) = describe_both(body.as_bytes());
        assert_eq!(here, by_sdk, "{body}");
    }
    assert_eq!(split(b"<Other/>"), None);
    assert_eq!(split(&answer(TWO).as_bytes()[..200]), None);
}

#[test]
fn unknown_elements_are_skipped_as_the_sdk_skips_them() {
    let body = answer(
        "<member><Future><InstanceId>i-9</InstanceId></Future><InstanceId>i-1</InstanceId>\
         <LifecycleState>Pending</LifecycleState><AvailabilityZoneId>use1-az1</AvailabilityZoneId></member><NotAMember><InstanceId>i-8</InstanceId></NotAMember>",
    );
    let split = split(body.as_bytes()).expect("read here");
    let ids: Vec<&str> = split.groups[0].iter().map(|i| i.id.as_str()).collect();
    assert_eq!(ids, ["i-1"]);
    let (here, by_sdk) = describe_both(body.as_bytes());
    assert_eq!(here, by_sdk);
}

#[test]
fn each_group_of_a_page_gets_its_own_instances() {
    let body = format!(
        "{HEAD}<member><AutoScalingGroupName>a</AutoScalingGroupName>\
         <Instances><member><InstanceId>i-a</InstanceId><LifecycleState>InService</LifecycleState></member></Instances></member>\
         <member><AutoScalingGroupName>b</AutoScalingGroupName></member>\
         <member><AutoScalingGroupName>c</AutoScalingGroupName><Instances/></member>\
         <member><Instances><member><InstanceId>i-d1</InstanceId><LifecycleState>InService</LifecycleState></member>\
         <member><InstanceId>i-d2</InstanceId><LifecycleState>Pending</LifecycleState></member></Instances></member>{TAIL}"
    );
    let split = split(body.as_bytes()).expect("read here");
    let ids: Vec<Vec<&str>> = split
        .groups
        .iter()
        .map(|g| g.iter().map(|i| i.id.as_str()).collect())
        .collect();
    assert_eq!(ids, vec![vec!["i-a"], vec![], vec![], vec!["i-d1", "i-d2"]]);
    assert!(!String::from_utf8(split.body).unwrap().contains("Instances"));
}

#[test]
fn instances_read_for_another_count_of_groups_are_refused() {
    use crate::aws::client::read_groups;
    let two = Some(vec![Vec::new(), Vec::new()]);
    assert!(read_groups("DescribeAutoScalingGroups", "g", two.clone(), 2).is_ok());
    let err = read_groups("DescribeAutoScalingGroups", "g", two, 1).unwrap_err();
    assert!(
        err.to_string()
            .contains("1 group(s) decoded but instances read for 2"),
        "{err}"
    );
    assert_eq!(
        read_groups("DescribeAutoScalingGroups", "g", None, 3).ok(),
        Some(None)
    );
}

/// One instance's elements, each maybe missing, in any order, spaced out
/// or not, among unknown ones; and whether it is the plain case (an id
/// and a lifecycle state).
fn instance_xml() -> impl Strategy<Value = (String, bool)> {
    let value = prop_oneof![
        Just(String::new()),
        "[a-zA-Z0-9:._$ -]{1,12}",
        Just("  i-1 \n".to_string()),
    ];
    let element = |name: &'static str| {
        prop::option::of(value.clone()).prop_map(move |v| match v {
            None => String::new(),
            Some(v) if v.is_empty() => format!("<{name}/>"),
            Some(v) => format!("<{name}>{v}</{name}>"),
        })
    };
    let template = prop::option::of((
        element("LaunchTemplateId"),
        element("LaunchTemplateName"),
        element("Version"),
    ))
    .prop_map(|t| match t {
        None => String::new(),
        Some((a, b, c)) => format!("<LaunchTemplate>{a}{b}{c}</LaunchTemplate>"),
    });
    let protected = prop_oneof![
        Just(String::new()),
        Just("<ProtectedFromScaleIn>true</ProtectedFromScaleIn>".to_string()),
        Just("<ProtectedFromScaleIn>false</ProtectedFromScaleIn>".to_string()),
    ];
    (
        prop::option::weighted(0.95, "i-[0-9a-f]{1,17}"),
        prop::option::weighted(
            0.95,
            prop::sample::select(vec![
                "InService",
                "Pending",
                "Terminating:Wait",
                "Standby",
                "",
            ]),
        ),
        prop::collection::vec(
            prop_oneof![
                element("AvailabilityZone"),
                element("HealthStatus"),
                element("LaunchConfigurationName"),
                element("InstanceType"),
                element("WeightedCapacity"),
                template,
                protected,
            ],
            0..8,
        ),
        prop::sample::select(vec!["", "\n  ", " "]),
    )
        .prop_map(|(id, state, mut rest, space)| {
            let plain = id.is_some() && state.is_some();
            if let Some(id) = id {
                rest.insert(rest.len() / 2, format!("<InstanceId>{id}</InstanceId>"));
            }
            if let Some(state) = state {
                rest.insert(
                    rest.len() / 3,
                    format!("<LifecycleState>{state}</LifecycleState>"),
                );
            }
            (
                format!("<member>{space}{}{space}</member>", rest.join(space)),
                plain,
            )
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Whatever the instances, the adapter reads the group as the SDK does
    /// (and reads the plain case itself).
    #[test]
    fn a_generated_group_reads_as_the_sdk_reads_it(
        instances in prop::collection::vec(instance_xml(), 0..6),
        space in prop::sample::select(vec!["", "\n    "]),
    ) {
        let plain = instances.iter().all(|(_, plain)| *plain);
        let xml: Vec<&str> = instances.iter().map(|(xml, _)| xml.as_str()).collect();
        let body = answer(&xml.join(space));
        prop_assert_eq!(split(body.as_bytes()).is_some(), plain);
        let (here, by_sdk) = describe_both(body.as_bytes());
        prop_assert_eq!(here, by_sdk);
    }
}
