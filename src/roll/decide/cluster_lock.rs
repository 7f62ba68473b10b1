//! One roll per cluster: whether this run may go on, given the other
//! runs that hold a group of the same cluster (found by their
//! `roller:run-id` tag on a group whose instances are agents of this
//! roll's Mesos masters).
//!
//! A run claims its groups in two writes: its run id with the lock state
//! `pending`, then, once it has looked again and found no other run, the
//! state `held`. Tags are not compare-and-set, so two runs starting at
//! once may each see the other's `pending`: the smaller run id goes on
//! and the other backs off (removing its own tags), and a run never goes
//! on while another's `pending` with a smaller id, or any `held`, is
//! there. A run that found no other at its second look holds the lock:
//! any run writing later sees it at its own second look.

use std::fmt;

/// The lock's state on a group (tag `roller:lock`). A group with a run id
/// and no state tag was tagged by a roller before the state existed: it
/// counts as held.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LockState {
    /// Written, not yet confirmed by a second look.
    Pending,
    /// Confirmed: the run owns its groups until it unlocks.
    Held,
}

impl LockState {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            LockState::Pending => "pending",
            LockState::Held => "held",
        }
    }

    /// The state a tag value says (absent or unknown: held, the safe
    /// reading).
    pub(crate) fn parse(value: Option<&str>) -> LockState {
        match value {
            Some("pending") => LockState::Pending,
            _ => LockState::Held,
        }
    }
}

/// Another run holding (or claiming) a group of this cluster.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct OtherRun {
    pub(crate) run_id: String,
    pub(crate) group: String,
    pub(crate) state: LockState,
    /// How many of the group's instances are agents of this cluster.
    pub(crate) agents: usize,
}

impl fmt::Display for OtherRun {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "run {} holds ASG {} ({} of its instances are agents of this cluster; lock {})",
            self.run_id,
            self.group,
            self.agents,
            self.state.as_str()
        )
    }
}

/// What this run does about the other runs it found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// No other run: go on.
    Clear,
    /// Another run started at the same moment and will back off (its id
    /// is larger): look again next tick.
    Wait(OtherRun),
    /// Another run holds the cluster, or wins the tie: stop, changing
    /// nothing (a pending tag of this run's is removed first).
    Refuse(OtherRun),
}

/// The verdict over `others` (this run's own groups and id already left
/// out) for the run `ours`.
pub(crate) fn judge(ours: &str, others: &[OtherRun]) -> Verdict {
    if let Some(held) = others.iter().find(|o| o.state == LockState::Held) {
        return Verdict::Refuse(held.clone());
    }
    let mut pending: Vec<&OtherRun> = others.iter().collect();
    pending.sort_by(|a, b| a.run_id.cmp(&b.run_id));
    match pending.first() {
        None => Verdict::Clear,
        Some(first) if first.run_id.as_str() < ours => Verdict::Refuse((*first).clone()),
        Some(first) => Verdict::Wait((*first).clone()),
    }
}

/// The refusal's sentence: who holds the cluster, and how to look at it
/// or give it up.
pub(crate) fn refusal(other: &OtherRun) -> String {
    format!(
        "one roll per cluster at a time: {other}. Nothing was changed. Let that roll finish \
         (`roller status` where it runs, with its checkpoint), or, if it is dead and a human has \
         checked, give it up with `roller abandon --run-id {} --env <its environment file>` \
         (its checkpoint is {}.json), then rerun",
        other.run_id, other.group
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(id: &str, state: LockState) -> OtherRun {
        OtherRun {
            run_id: id.to_string(),
            group: format!("asg-{id}"),
            state,
            agents: 3,
        }
    }

    #[test]
    fn nobody_else_is_clear() {
        assert_eq!(judge("m", &[]), Verdict::Clear);
    }

    #[test]
    fn a_held_lock_refuses_whatever_the_ids() {
        for id in ["a", "z"] {
            let other = run(id, LockState::Held);
            assert_eq!(
                judge("m", std::slice::from_ref(&other)),
                Verdict::Refuse(other)
            );
        }
    }

    #[test]
    fn two_pending_runs_let_the_smaller_id_go_on_and_the_other_back_off() {
        let smaller = run("a", LockState::Pending);
        let larger = run("z", LockState::Pending);
        assert_eq!(
            judge("m", std::slice::from_ref(&larger)),
            Verdict::Wait(larger.clone())
        );
        assert_eq!(
            judge("m", &[larger, smaller.clone()]),
            Verdict::Refuse(smaller)
        );
    }

    #[test]
    fn a_held_lock_beats_a_pending_one_with_a_larger_id() {
        let held = run("z", LockState::Held);
        let verdict = judge("m", &[run("y", LockState::Pending), held.clone()]);
        assert_eq!(verdict, Verdict::Refuse(held));
    }

    #[test]
    fn a_tag_without_a_state_reads_held() {
        assert_eq!(LockState::parse(None), LockState::Held);
        assert_eq!(LockState::parse(Some("pending")), LockState::Pending);
        assert_eq!(LockState::parse(Some("held")), LockState::Held);
        assert_eq!(LockState::parse(Some("???")), LockState::Held);
    }

    #[test]
    fn the_refusal_names_the_run_the_group_and_how_to_abandon_it() {
        let text = refusal(&run("r-1", LockState::Held));
        for part in [
            "r-1",
            "asg-r-1",
            "roller abandon --run-id r-1",
            "Nothing was changed",
        ] {
            assert!(text.contains(part), "{part} not in: {text}");
        }
    }
}
