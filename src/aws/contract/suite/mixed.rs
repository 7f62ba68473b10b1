//! Contract tests of a group with a mixed instances policy, as far as moto,
//! the simulator and AWS agree: the policy a client writes is described
//! back as written (template, overrides, distribution), the adapter changes
//! only its template version, and refuses a write that would put a plain
//! template in the policy's place. What instances such a group launches is
//! not in the contract: moto 5.2 launches them wrong (the simulator's
//! tests cover it, `sim::http::aws::tests`).

use aws_sdk_autoscaling::types as asg;

use super::super::{Backend, GroupSetup};
use super::describe;
use crate::roll::ports::auto_scaling::{AutoScaling, LaunchSource};

const TYPES: &[&str] = &["m5.large", "m5a.large"];

/// Turns the backend's group into one with a mixed instances policy over
/// its own launch template, as an operator (Terraform, the console) would.
async fn with_policy<B: Backend>(b: &B) {
    let mut template = asg::LaunchTemplate::builder().launch_template_specification(
        asg::LaunchTemplateSpecification::builder()
            .launch_template_name(b.launch_template())
            .version("1")
            .build(),
    );
    for t in TYPES {
        template = template.overrides(
            asg::LaunchTemplateOverrides::builder()
                .instance_type(*t)
                .build(),
        );
    }
    b.raw_auto_scaling()
        .update_auto_scaling_group()
        .auto_scaling_group_name(b.group())
        .mixed_instances_policy(
            asg::MixedInstancesPolicy::builder()
                .launch_template(template.build())
                .instances_distribution(
                    asg::InstancesDistribution::builder()
                        .on_demand_base_capacity(1)
                        .on_demand_percentage_above_base_capacity(50)
                        .spot_allocation_strategy("lowest-price")
                        .build(),
                )
                .build(),
        )
        .send()
        .await
        .expect("a mixed instances policy");
}

pub(in crate::aws::contract) async fn a_mixed_instances_policy_reads_back_and_only_its_version_is_written<
    B: Backend,
>() {
    let b = B::provide(GroupSetup::sized(0, 4, 0)).await;
    with_policy(&b).await;
    let Some(LaunchSource::MixedInstances(read)) = describe(&b).await.launch_source else {
        panic!("expected the group's mixed instances policy");
    };
    let types: Vec<&str> = read
        .overrides
        .iter()
        .filter_map(|o| o.instance_type.as_deref())
        .collect();
    assert_eq!(types, TYPES);
    assert_eq!(read.template.name.as_deref(), Some(b.launch_template()));
    assert_eq!(read.template.version.as_deref(), Some("1"));
    assert_eq!(read.distribution.on_demand_base_capacity, Some(1));
    assert_eq!(
        read.distribution.on_demand_percentage_above_base_capacity,
        Some(50)
    );
    assert_eq!(
        read.distribution.spot_allocation_strategy.as_deref(),
        Some("lowest-price")
    );

    let mut wanted = read.clone();
    wanted.template.version = Some("$Latest".to_string());
    b.aws()
        .set_launch_source(b.group(), &LaunchSource::MixedInstances(wanted.clone()))
        .await
        .expect("a version change");
    let Some(LaunchSource::MixedInstances(after)) = describe(&b).await.launch_source else {
        panic!("still a mixed instances policy");
    };
    assert_eq!(after, wanted, "only the version changed");

    let plain = LaunchSource::from(&after.template);
    let err = b
        .aws()
        .set_launch_source(b.group(), &plain)
        .await
        .expect_err("a plain template on a policy's group");
    assert_eq!(err.label(), "refused");
    assert!(err.to_string().contains(b.group()), "{err}");
    assert!(err.to_string().contains("MixedInstancesPolicy"), "{err}");
    let mut reshaped = after.clone();
    reshaped.overrides.pop();
    let err = b
        .aws()
        .set_launch_source(b.group(), &LaunchSource::MixedInstances(reshaped))
        .await
        .expect_err("one override fewer");
    assert_eq!(err.label(), "refused");
    let Some(LaunchSource::MixedInstances(last)) = describe(&b).await.launch_source else {
        panic!("still a mixed instances policy");
    };
    assert_eq!(last, after);
}
