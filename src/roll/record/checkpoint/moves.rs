//! What the roll moved, as the checkpoint records it before moving it: the
//! drain's waves (the tasks each kills) and app surges (an app scaled up
//! so a task can move without taking it below its floor).

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

use super::Checkpoint;
use crate::roll::record::kinds::StepKind;

/// One drain wave: which tasks it kills (with `scale=false`; Marathon
/// relaunches each on a new agent) and which apps it moves, recorded
/// before anything is sent, so a resume resends only kills of tasks still
/// listed and waits for the same apps. Once its step is complete its
/// kills are dropped (`Checkpoint::forget_finished_moves`): no task of it
/// is listed any more, and a checkpoint that kept every wave's would grow
/// with waves × tasks.
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
    /// Dropped once the surge is done, as `extra_tasks` are.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub(crate) task: String,
    /// A drain surge may replace more of the app's old tasks at once: the
    /// app is scaled up by one per task (`task` and these), and each is
    /// killed with `scale=true` once the new ones keep the app at its
    /// floor. Dropped once the surge is done (nothing reads them then).
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

impl WaveRecord {
    /// Its kills dropped: its step is complete, and none of its tasks is
    /// listed any more (the wave waited for that).
    pub(crate) fn forget_kills(&mut self) {
        self.kills = Vec::new();
    }
}

impl Surge {
    /// Its tasks dropped when it is done: only its app is read then (the
    /// failure watch's moved apps). A roll of 5,000 apps kept 5,000 task
    /// ids (300 KB of each checkpoint write) for nothing.
    pub(crate) fn forget_tasks_if_done(&mut self) {
        if self.state == SurgeState::Done {
            self.task = String::new();
            self.extra_tasks = Vec::new();
        }
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

impl Checkpoint {
    /// Drops what no step reads again of the moves that are over: the
    /// kills of every drain wave whose step is complete, the extra tasks
    /// of every surge that is done. What is written then grows with what
    /// is left to do, not with waves × tasks. Safe at any time: a wave
    /// ends only once none of its killed tasks is listed, and a done
    /// surge is only read for its app.
    pub(crate) fn forget_finished_moves(&mut self) {
        let waves_done: HashSet<(usize, &str)> = self
            .plan
            .steps()
            .filter(|(_, s)| s.is_complete())
            .filter_map(|(_, s)| match &s.kind {
                Some(k) if matches!(k.kind, StepKind::DrainWave { .. }) => {
                    Some((k.group.0, s.id.as_str()))
                }
                _ => None,
            })
            .collect();
        for (g, group) in self.groups.iter_mut().enumerate() {
            for wave in &mut group.waves {
                if !wave.kills.is_empty() && waves_done.contains(&(g, wave.step.as_str())) {
                    wave.forget_kills();
                }
            }
            group
                .surges
                .iter_mut()
                .for_each(Surge::forget_tasks_if_done);
        }
    }
}
