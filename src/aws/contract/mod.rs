//! The AWS adapter's contract suite: every protocol test of `AwsAutoScaling`
//! written once (`suite`) and run against two backends, moto (`moto`) and
//! the simulator's AWS facade (`simulator`). Both must accept every call
//! the adapter makes, answer in a shape it parses the same way, and make it
//! map errors to the same `AwsError` labels.
//!
//! Behaviour is not the contract where moto is looser than AWS (it launches
//! instantly, puts a launch batch in one AZ, accepts desired > MaxSize): the
//! simulator follows AWS there, and the tests that show a difference live
//! with their backend, named for it (`aws::moto_tests::moto_difference_*`,
//! `sim::http::aws::tests::simulator_difference_*`).
//!
//! `scripts/with-moto cargo test contract` runs both halves; without
//! `ROLLER_TEST_MOTO_URL` the moto half fails, as the moto tests always have.

use crate::aws::AwsAutoScaling;

/// The AZs a group spans unless a test says otherwise: three, as in the
/// `demo` scenario and most real groups.
pub(crate) const THREE_AZS: &[&str] = &["us-east-1a", "us-east-1b", "us-east-1c"];

/// The group a test wants: its limits, its running instances (`desired`
/// of them, InService), its AZs and its tags (not propagated at launch).
#[derive(Clone, Debug)]
pub(crate) struct GroupSetup {
    pub(crate) min: u32,
    pub(crate) max: u32,
    pub(crate) desired: u32,
    pub(crate) azs: &'static [&'static str],
    pub(crate) tags: &'static [(&'static str, &'static str)],
}

impl GroupSetup {
    pub(crate) fn sized(min: u32, max: u32, desired: u32) -> GroupSetup {
        GroupSetup {
            min,
            max,
            desired,
            azs: THREE_AZS,
            tags: &[],
        }
    }
}

/// Something serving the Auto Scaling and EC2 Query APIs that can hold one
/// test's group. Each test gets a group of its own, so tests may run in
/// parallel on one backend.
pub(crate) trait Backend: Sized {
    /// Sets up the group (and whatever it needs: subnets, a launch
    /// template) and an adapter pointed at the backend.
    async fn provide(group: GroupSetup) -> Self;
    /// The adapter as the roller builds it, with AWS's page sizes.
    fn aws(&self) -> &AwsAutoScaling;
    /// The same adapter with a small page size, so that a few instances
    /// or activities span several pages.
    async fn aws_paging_by(&self, page_size: u32) -> AwsAutoScaling;
    /// The raw SDK client, for what the adapter refuses before sending.
    fn raw_auto_scaling(&self) -> &aws_sdk_autoscaling::Client;
    /// The raw EC2 client, for calls other clients (boto3, the CLI) make.
    fn raw_ec2(&self) -> &aws_sdk_ec2::Client;
    /// The raw CloudWatch client (same endpoint), for the alarms a test
    /// puts and sets, as the operator's tooling would.
    fn raw_cloudwatch(&self) -> &aws_sdk_cloudwatch::Client;
    /// The group's name.
    fn group(&self) -> &str;
    /// The name of the launch template the group launches from.
    fn launch_template(&self) -> &str;
    /// How many requests for `action` the backend has answered, where it
    /// counts them: the simulator does, moto keeps no such count.
    fn calls(&self, action: &str) -> Option<u64>;
}

/// Emits one `#[tokio::test]` per contract test, for the backend type
/// given, in the module that invokes it. The list is the suite's index: a
/// test in `suite` missing here is dead code, which the build refuses.
macro_rules! contract_tests {
    ($backend:ty) => {
        contract_tests!(@each $backend;
            describe_group_reports_sizes_instances_launch_template_tags_and_azs,
            an_unknown_group_is_an_error_naming_it_not_an_empty_success,
            set_desired_capacity_moves_desired_and_the_group_follows,
            desired_outside_the_size_limits_is_refused_before_sending,
            terminate_decrements_desired_and_a_second_terminate_is_already_gone,
            a_terminate_below_min_size_is_refused_before_sending,
            terminate_and_replace_keeps_desired_and_the_group_launches_one_in_its_place,
            terminations_after_a_describe_look_at_their_instance_and_still_stop_at_min_size,
            terminations_sent_at_once_count_each_others_decrements_against_min_size,
            terminations_sent_together_are_checked_fifty_at_a_time,
            a_round_with_an_error_is_the_last_its_other_answers_kept,
            suspend_and_resume_touch_exactly_the_listed_processes,
            size_limits_change_only_when_they_keep_the_desired_capacity,
            tags_round_trip_create_overwrite_and_delete,
            groups_tagged_lists_the_groups_with_the_key_whatever_its_value,
            scaling_activities_of_a_known_group_parse,
            describe_instances_pages_through_the_groups_instances_and_skips_unknown_ids,
            what_other_clients_ask_is_answered_instances_tags_and_instance_filters,
            standby_takes_an_instance_out_of_desired_and_back,
            lifecycle_hooks_put_by_another_client_are_read_with_aws_defaults,
            a_mixed_instances_policy_reads_back_and_only_its_version_is_written,
            protection_reads_back_and_exit_standby_sends_only_standby_instances,
            an_alarm_put_and_set_by_another_client_reads_back_with_its_state_and_reason,
            a_warm_pool_put_by_another_client_is_read_back_and_deleted,
        );
    };
    (@each $backend:ty; $($test:ident),* $(,)?) => {
        $(
            #[tokio::test]
            async fn $test() {
                super::suite::$test::<$backend>().await;
            }
        )*
    };
}

// After the macro: `macro_rules!` is in scope only below its definition.
pub(crate) mod moto;
pub(crate) mod simulator;
mod simulator_hooks;
mod simulator_warm_pool;
mod suite;
mod suite_alarms;
mod suite_held;
mod suite_hooks;
