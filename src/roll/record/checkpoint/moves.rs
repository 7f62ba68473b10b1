//! What the roll moved, as the checkpoint records it before moving it: the
//! drain's waves (the tasks each kills) and app surges (an app scaled up
//! so a task can move without taking it below its floor).

use serde::{Deserialize, Serialize};

/// One drain wave: which tasks it kills (with `scale=false`; Marathon
/// relaunches each on a new agent) and which apps it moves, recorded
/// before anything is sent, so a resume resends only kills of tasks still
/// listed and waits for the same apps.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WaveRecord {
    /// The wave's step id (`wave-1`).
    pub(crate) step: String,
    pub(crate) kills: Vec<String>,
    /// Apps this wave moves tasks of (killed or surged): the wave ends
    /// when each is back to all its instances healthy.
    pub(crate) apps: Vec<String>,
    /// The kills were accepted by Marathon.
    #[serde(default)]
    pub(crate) sent: bool,
}

/// A surge: `app` scaled from `instances` to `instances + 1` so that the
/// task on `instance`'s agent can be killed with `scale=true` once the
/// extra task is healthy. Recorded before the scale-up is sent.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Surge {
    pub(crate) app: String,
    pub(crate) instances: u32,
    /// Who surged it: the instance being replaced (serial, canary) or the
    /// drain wave's step id.
    pub(crate) instance: String,
    /// The one task on the agent this surge replaces (killed with
    /// `scale=true`, which takes back exactly the one instance added).
    pub(crate) task: String,
    /// A drain surge may replace more of the app's old tasks at once: the
    /// app is scaled up by one per task (`task` and these), and each is
    /// killed with `scale=true` once the new ones keep the app at its
    /// floor.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) extra_tasks: Vec<String>,
    pub(crate) state: SurgeState,
    /// Marathon accepted the kill of the old tasks: it is never sent again
    /// (a second `scale=true` kill of a task still being killed could take
    /// the app below its count).
    #[serde(default)]
    pub(crate) kill_sent: bool,
}

impl Surge {
    /// Every old task this surge replaces.
    pub(crate) fn tasks(&self) -> impl Iterator<Item = &String> {
        std::iter::once(&self.task).chain(&self.extra_tasks)
    }

    /// The instance count while surged.
    pub(crate) fn surged_instances(&self) -> u32 {
        let k = u32::try_from(1 + self.extra_tasks.len()).unwrap_or(u32::MAX);
        self.instances.saturating_add(k)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum SurgeState {
    /// The scale-up is (about to be) sent.
    ScalingUp,
    /// The old task's kill with `scale=true` is (about to be) sent.
    Killing,
    Done,
}
