//! Another refresher at work: an Instance Refresh (started by Terraform's
//! `instance_refresh` block, the console, a script) replaces a group's
//! instances without draining their Mesos agents, and beside a roll it
//! could take down more than either allows. Roller refuses to start while
//! one is active on a group of the roll, and pauses before a termination
//! if one has started since.

use crate::roll::ports::auto_scaling::InstanceRefresh;
use crate::roll::record::checkpoint::utc;

/// When the refresh was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Found {
    /// Before the roll begins: it is refused and nothing is changed.
    Preflight,
    /// Before a termination: the roll pauses and pages.
    BeforeTermination,
}

/// The first active refresh of `asg` among `refreshes`, said for `found`;
/// `None` when none is active.
pub(crate) fn at_work(asg: &str, refreshes: &[InstanceRefresh], found: Found) -> Option<String> {
    let refresh = refreshes.iter().find(|r| r.is_active())?;
    let since = refresh
        .start_time
        .map(|t| format!(", started {}", utc(t)))
        .unwrap_or_default();
    let what = format!(
        "ASG {asg} has an instance refresh {} {}{since}: it replaces instances without draining \
         their Mesos agents, and beside this roll it could take down more than either allows",
        refresh.id, refresh.status
    );
    let then = match found {
        Found::Preflight => {
            "Wait for it to end, or cancel it \
             (`aws autoscaling cancel-instance-refresh --auto-scaling-group-name ASG`), then run roller again"
        }
        Found::BeforeTermination => {
            "Nothing more is terminated; cancel the refresh \
             (`aws autoscaling cancel-instance-refresh --auto-scaling-group-name ASG`) or let it end, \
             then rerun to resume"
        }
    };
    Some(format!("{what}. {}", then.replace("ASG", asg)))
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime};

    use super::*;

    fn refresh(id: &str, status: &str) -> InstanceRefresh {
        InstanceRefresh {
            id: id.to_string(),
            status: status.to_string(),
            start_time: Some(SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000)),
        }
    }

    #[test]
    fn only_a_refresh_aws_has_not_ended_is_at_work() {
        let ended: Vec<InstanceRefresh> = [
            "Successful",
            "Failed",
            "Cancelled",
            "RollbackFailed",
            "RollbackSuccessful",
        ]
        .iter()
        .map(|s| refresh("r-old", s))
        .collect();
        assert_eq!(at_work("agents", &ended, Found::Preflight), None);
        for status in [
            "Pending",
            "InProgress",
            "Cancelling",
            "RollbackInProgress",
            "Baking",
            "Unheard",
        ] {
            let mut all = vec![refresh("r-new", status)];
            all.extend(ended.clone());
            let said = at_work("agents", &all, Found::Preflight).expect(status);
            assert!(
                said.contains(&format!(
                    "instance refresh r-new {status}, started 2027-01-15"
                )),
                "{said}"
            );
        }
    }

    #[test]
    fn the_sentence_says_what_to_do_at_each_moment() {
        let active = [refresh("r-1", "InProgress")];
        let refused = at_work("agents", &active, Found::Preflight).unwrap();
        assert!(
            refused.ends_with("Wait for it to end, or cancel it (`aws autoscaling cancel-instance-refresh --auto-scaling-group-name agents`), then run roller again"),
            "{refused}"
        );
        let paused = at_work("agents", &active, Found::BeforeTermination).unwrap();
        assert!(
            paused.contains("Nothing more is terminated") && paused.ends_with("rerun to resume"),
            "{paused}"
        );
    }
}
