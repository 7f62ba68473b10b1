//! Instance refreshes (StartInstanceRefresh, CancelInstanceRefresh,
//! DescribeInstanceRefreshes): one active refresh per group, as AWS
//! allows. A started refresh is `InProgress` until it is cancelled, then
//! `Cancelling` for a while and `Cancelled`.
//!
//! What is not modelled yet: the refresh replacing instances (AWS
//! terminates and launches them in batches, without draining their Mesos
//! agents), its preferences (`MinHealthyPercentage`, checkpoints,
//! skip-matching, standby and protected instances), `Pending`, `Baking`,
//! rollbacks, and the `InstanceRefresh` process pausing it. A refresh here
//! is something another hand started, for the roller to notice.

use super::*;

/// How long a cancelled refresh stays `Cancelling` (AWS lets the
/// replacements in flight finish first).
const CANCELLING_MS: u64 = 30_000;

/// One instance refresh of a group.
#[derive(Clone, Debug)]
pub(super) struct Refresh {
    id: String,
    started: SimTime,
    cancelled: Option<SimTime>,
}

impl Refresh {
    fn status(&self, now: SimTime) -> &'static str {
        match self.cancelled {
            None => "InProgress",
            Some(at) if now.as_millis() < at.as_millis() + CANCELLING_MS => "Cancelling",
            Some(_) => "Cancelled",
        }
    }

    fn is_active(&self, now: SimTime) -> bool {
        matches!(self.status(now), "InProgress" | "Cancelling")
    }
}

/// DescribeInstanceRefreshes' view of one refresh.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct RefreshView {
    pub(crate) instance_refresh_id: String,
    pub(crate) group_name: String,
    pub(crate) status: &'static str,
    pub(crate) start_unix_ms: u64,
    pub(crate) end_unix_ms: Option<u64>,
}

impl World {
    /// StartInstanceRefresh: refused while another is active; answers the
    /// new refresh's id.
    pub(crate) fn start_instance_refresh(&mut self, group: &str) -> Result<String, AwsError> {
        const ACTION: &str = "StartInstanceRefresh";
        let gi = self.check_group(ACTION, group)?;
        let now = self.now;
        if self.groups[gi].refreshes.iter().any(|r| r.is_active(now)) {
            return Err(AwsError::RefreshInProgress { action: ACTION });
        }
        let id = self.rng.uuid();
        self.groups[gi].refreshes.push(Refresh {
            id: id.clone(),
            started: now,
            cancelled: None,
        });
        Ok(id)
    }

    /// CancelInstanceRefresh: the group's refresh in progress goes
    /// `Cancelling`; answers its id. Refused when none is in progress.
    pub(crate) fn cancel_instance_refresh(&mut self, group: &str) -> Result<String, AwsError> {
        const ACTION: &str = "CancelInstanceRefresh";
        let gi = self.check_group(ACTION, group)?;
        let now = self.now;
        let Some(refresh) = self.groups[gi]
            .refreshes
            .iter_mut()
            .find(|r| r.cancelled.is_none())
        else {
            return Err(AwsError::NoActiveRefresh {
                action: ACTION,
                name: group.to_string(),
            });
        };
        refresh.cancelled = Some(now);
        Ok(refresh.id.clone())
    }

    /// DescribeInstanceRefreshes: the group's refreshes, newest first.
    pub(crate) fn instance_refreshes(&self, group: &str) -> Result<Vec<RefreshView>, AwsError> {
        let gi = self.check_group("DescribeInstanceRefreshes", group)?;
        let now = self.now;
        let views = self.groups[gi]
            .refreshes
            .iter()
            .rev()
            .map(|r| {
                let status = r.status(now);
                RefreshView {
                    instance_refresh_id: r.id.clone(),
                    group_name: group.to_string(),
                    status,
                    start_unix_ms: self.unix_ms(r.started),
                    end_unix_ms: (status == "Cancelled").then(|| {
                        let at = r.cancelled.map_or(0, |c| c.as_millis()) + CANCELLING_MS;
                        self.unix_ms(SimTime::from_millis(at))
                    }),
                }
            })
            .collect();
        Ok(views)
    }
}
