//! A scenario group's warm pool (`[group.warm_pool]`), as PutWarmPool
//! takes one: how many instances it keeps at least (`min_size`), the most
//! the group and its pool may hold together (`max_group_prepared_capacity`,
//! unset: the group's MaxSize), the state its instances wait in, and
//! whether a scale-in returns instances to it.

use serde::Deserialize;

/// `PutWarmPool`'s parameters. AWS's defaults: MinSize 0, PoolState
/// Stopped, no reuse on scale-in, MaxGroupPreparedCapacity unset (the
/// group's MaxSize).
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub(crate) struct WarmPoolSpec {
    #[serde(default)]
    pub(crate) min_size: u32,
    #[serde(default)]
    pub(crate) max_group_prepared_capacity: Option<u32>,
    #[serde(default = "stopped")]
    pub(crate) pool_state: String,
    #[serde(default)]
    pub(crate) reuse_on_scale_in: bool,
}

impl Default for WarmPoolSpec {
    fn default() -> WarmPoolSpec {
        WarmPoolSpec {
            min_size: 0,
            max_group_prepared_capacity: None,
            pool_state: stopped(),
            reuse_on_scale_in: false,
        }
    }
}

fn stopped() -> String {
    "Stopped".to_string()
}

/// The pool states PutWarmPool accepts.
pub(crate) const POOL_STATES: &[&str] = &["Stopped", "Running", "Hibernated"];

impl WarmPoolSpec {
    /// What AWS refuses in a PutWarmPool, in its words (without the
    /// error code): a pool state other than Stopped, Running or
    /// Hibernated.
    pub(crate) fn check(&self) -> Result<(), String> {
        if !POOL_STATES.contains(&self.pool_state.as_str()) {
            return Err(format!(
                "1 validation error detected: Value '{}' at 'poolState' failed to satisfy constraint: Member must satisfy enum value set: [Stopped, Running, Hibernated]",
                self.pool_state
            ));
        }
        Ok(())
    }
}
