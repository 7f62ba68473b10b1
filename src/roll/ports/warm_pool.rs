//! A group's warm pool as the roll sees it: the instances waiting beside
//! the group (`Warmed:Stopped`, `Warmed:Running`, …), each with the launch
//! source it was launched from, which a scale-out brings into the group
//! as they are. Plain domain types: the AWS adapter maps DescribeWarmPool
//! onto them.

use super::launch_source::{LaunchSource, LifecycleState, is_outdated};

/// One group's warm pool, as DescribeWarmPool reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WarmPool {
    /// `Stopped`, `Running` or `Hibernated`, as AWS spells it.
    pub(crate) pool_state: String,
    pub(crate) min_size: u32,
    /// Unset: the group's MaxSize.
    pub(crate) max_group_prepared_capacity: Option<u32>,
    /// `PendingDelete` while the pool is being deleted.
    pub(crate) status: Option<String>,
    pub(crate) instances: Vec<WarmInstance>,
}

/// One instance waiting in a warm pool.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WarmInstance {
    pub(crate) id: String,
    /// `Warmed:Stopped` and the like, kept verbatim (`Other`).
    pub(crate) lifecycle_state: LifecycleState,
    /// What it was launched from: what it brings into the group.
    pub(crate) launch_source: Option<LaunchSource>,
    pub(crate) instance_type: Option<String>,
}

impl WarmInstance {
    /// Whether it was launched from another source than the one the
    /// group would launch it from now (on a mixed instances policy, its
    /// type's override's template).
    pub(crate) fn is_outdated(&self, group_source: Option<&LaunchSource>) -> bool {
        is_outdated(
            self.launch_source.as_ref(),
            self.instance_type.as_deref(),
            group_source,
        )
    }

    /// On its way out of the pool (`Warmed:Terminating…`, terminated):
    /// terminating it again changes nothing.
    pub(crate) fn is_leaving(&self) -> bool {
        self.lifecycle_state.is_leaving()
            || self.lifecycle_state.as_aws().starts_with("Warmed:Terminat")
    }
}

impl WarmPool {
    /// Its instances launched from another source than `group_source`
    /// and not already leaving.
    pub(crate) fn outdated<'a>(
        &'a self,
        group_source: Option<&'a LaunchSource>,
    ) -> impl Iterator<Item = &'a WarmInstance> + 'a {
        self.instances
            .iter()
            .filter(move |i| !i.is_leaving() && i.is_outdated(group_source))
    }

    /// Its instances launched from another source than `group_source`,
    /// leaving or not: the pool is clean once there are none.
    pub(crate) fn any_outdated(&self, group_source: Option<&LaunchSource>) -> usize {
        self.instances
            .iter()
            .filter(|i| i.is_outdated(group_source))
            .count()
    }

    /// Its instances on their way in (`Warmed:Pending…`): launched, not
    /// yet waiting in the pool state.
    pub(crate) fn filling(&self) -> usize {
        self.instances
            .iter()
            .filter(|i| i.lifecycle_state.as_aws().starts_with("Warmed:Pending"))
            .count()
    }
}
