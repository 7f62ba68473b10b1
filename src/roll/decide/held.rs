//! Which of a group's instances the roll takes, which it leaves out, and
//! which it must first bring in: those in Standby (`standby`) and those
//! protected from scale-in (`protected`), with Instance Refresh's
//! meanings; any other state than InService (Pending, a lifecycle hook's
//! wait) is refused unless `--skip-not-in-service` leaves it out.

use crate::roll::ports::auto_scaling::{GroupInstance, LifecycleState};
use crate::roll::record::held::{HeldInstance, ProtectedPolicy, StandbyPolicy};

/// How `sort` reads the group's instances.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Policies {
    pub(crate) standby: StandbyPolicy,
    pub(crate) protected: ProtectedPolicy,
    pub(crate) skip_not_in_service: bool,
}

/// A group's instances, sorted.
#[derive(Debug, Default)]
pub(crate) struct Sorted<'g> {
    /// The instances the roll may select and replace (InService ones,
    /// and the held ones it brings in).
    pub(crate) taken: Vec<&'g GroupInstance>,
    /// Of `taken`, those the `held-instances` step must bring in first.
    pub(crate) held: Vec<HeldInstance>,
    /// Left out of the roll, each with why: they stay on the old image.
    pub(crate) left_out: Vec<(&'g GroupInstance, &'static str)>,
    /// Left out as protected from scale-in (`protected = "ignore"`): in
    /// the group's capacity, unlike `left_out`, so kept as originals.
    pub(crate) kept: Vec<&'g GroupInstance>,
    /// In a state the roll refuses to start with (no flag given for it).
    pub(crate) refused: Vec<&'g GroupInstance>,
}

impl Sorted<'_> {
    /// How many of the taken instances are out of the group's capacity
    /// now (in Standby) and join it when brought in: the desired capacity
    /// grows by as many (`ExitStandby` increments it).
    pub(crate) fn joining(&self) -> u32 {
        u32::try_from(self.held.iter().filter(|h| h.standby).count()).unwrap_or(u32::MAX)
    }

    /// The notes `--dry-run` and the run print: what the policies do to
    /// this group's instances.
    pub(crate) fn notes(&self, policies: Policies, wait: &str) -> Vec<String> {
        let ids = |list: &mut dyn Iterator<Item = &str>| list.collect::<Vec<_>>().join(", ");
        let mut notes = Vec::new();
        let standby = ids(&mut self
            .held
            .iter()
            .filter(|h| h.standby)
            .map(|h| h.id.as_str()));
        if !standby.is_empty() {
            notes.push(match policies.standby {
                StandbyPolicy::Terminate => format!(
                    "in Standby, taken out of it and replaced (standby = terminate): {standby}"
                ),
                _ => format!(
                    "in Standby: the roll waits up to {wait} for an operator to put them back in service, then replaces them (standby = wait; --standby terminate takes them out itself, --standby ignore leaves them): {standby}"
                ),
            });
        }
        let protected = ids(&mut self
            .held
            .iter()
            .filter(|h| h.protected)
            .map(|h| h.id.as_str()));
        if !protected.is_empty() {
            notes.push(format!(
                "scale-in protected: the roll waits up to {wait} for an operator to lift the protection, then replaces them (protected = wait): {protected}"
            ));
        }
        let replaced = ids(&mut self
            .taken
            .iter()
            .filter(|i| i.protected_from_scale_in && !self.is_held(&i.id))
            .map(|i| i.id.as_str()));
        if !replaced.is_empty() {
            notes.push(format!(
                "scale-in protected, drained and replaced all the same (protected = replace): {replaced}"
            ));
        }
        let kept = ids(&mut self.kept.iter().map(|i| i.id.as_str()));
        if !kept.is_empty() {
            notes.push(format!(
                "scale-in protected, left on the old image (protected = ignore): {kept}"
            ));
        }
        if !self.left_out.is_empty() {
            let list: Vec<String> = self
                .left_out
                .iter()
                .map(|(i, why)| format!("{} ({}, {why})", i.id, i.lifecycle_state.as_aws()))
                .collect();
            notes.push(format!(
                "left out of the roll (not InService), on the old image: {}",
                list.join(", ")
            ));
        }
        notes
    }

    fn is_held(&self, id: &str) -> bool {
        self.held.iter().any(|h| h.id == id)
    }
}

/// Sorts `instances` (the group's, as AWS describes them) by `policies`.
pub(crate) fn sort(instances: &[GroupInstance], policies: Policies) -> Sorted<'_> {
    let mut sorted = Sorted::default();
    for instance in instances {
        match instance.lifecycle_state {
            LifecycleState::InService if instance.protected_from_scale_in => {
                match policies.protected {
                    ProtectedPolicy::Replace => sorted.taken.push(instance),
                    ProtectedPolicy::Ignore => sorted.kept.push(instance),
                    ProtectedPolicy::Wait => {
                        sorted.taken.push(instance);
                        sorted.held.push(HeldInstance {
                            id: instance.id.clone(),
                            standby: false,
                            protected: true,
                        });
                    }
                }
            }
            LifecycleState::InService => sorted.taken.push(instance),
            LifecycleState::Standby => match policies.standby {
                StandbyPolicy::Ignore => sorted.left_out.push((instance, "standby = ignore")),
                StandbyPolicy::Wait | StandbyPolicy::Terminate => {
                    // Protected under `ignore` once back in service: it is
                    // left in Standby rather than brought in to be kept.
                    if instance.protected_from_scale_in
                        && policies.protected == ProtectedPolicy::Ignore
                    {
                        sorted
                            .left_out
                            .push((instance, "scale-in protected, protected = ignore"));
                        continue;
                    }
                    sorted.taken.push(instance);
                    sorted.held.push(HeldInstance {
                        id: instance.id.clone(),
                        standby: true,
                        protected: instance.protected_from_scale_in
                            && policies.protected == ProtectedPolicy::Wait,
                    });
                }
            },
            _ if policies.skip_not_in_service => sorted
                .left_out
                .push((instance, "not InService, --skip-not-in-service")),
            _ => sorted.refused.push(instance),
        }
    }
    sorted
}

#[cfg(test)]
mod tests {
    use super::*;

    fn instance(id: &str, state: LifecycleState, protected: bool) -> GroupInstance {
        GroupInstance {
            id: id.to_string(),
            availability_zone: "us-east-1a".to_string(),
            lifecycle_state: state,
            health_status: "Healthy".to_string(),
            launch_source: None,
            protected_from_scale_in: protected,
            instance_type: None,
        }
    }

    fn group() -> Vec<GroupInstance> {
        vec![
            instance("i-plain", LifecycleState::InService, false),
            instance("i-standby", LifecycleState::Standby, false),
            instance("i-protected", LifecycleState::InService, true),
            instance("i-pending", LifecycleState::Pending, false),
        ]
    }

    fn ids<'a>(list: impl IntoIterator<Item = &'a GroupInstance>) -> Vec<&'a str> {
        list.into_iter().map(|i| i.id.as_str()).collect()
    }

    fn policies(standby: StandbyPolicy, protected: ProtectedPolicy) -> Policies {
        Policies {
            standby,
            protected,
            skip_not_in_service: false,
        }
    }

    #[test]
    fn the_defaults_wait_for_standby_and_replace_protected_instances() {
        let group = group();
        let sorted = sort(
            &group,
            policies(StandbyPolicy::Wait, ProtectedPolicy::Replace),
        );
        assert_eq!(
            ids(sorted.taken.iter().copied()),
            ["i-plain", "i-standby", "i-protected"]
        );
        assert_eq!(
            sorted.held,
            [HeldInstance {
                id: "i-standby".to_string(),
                standby: true,
                protected: false
            }]
        );
        assert_eq!(sorted.joining(), 1);
        assert_eq!(ids(sorted.refused.iter().copied()), ["i-pending"]);
        let notes = sorted
            .notes(
                policies(StandbyPolicy::Wait, ProtectedPolicy::Replace),
                "1h",
            )
            .join("\n");
        assert!(
            notes.contains("up to 1h") && notes.contains("i-standby"),
            "{notes}"
        );
        assert!(
            notes.contains("protected = replace): i-protected"),
            "{notes}"
        );
    }

    #[test]
    fn ignore_leaves_them_out_and_terminate_brings_standby_in() {
        let group = group();
        let mut ignore = policies(StandbyPolicy::Ignore, ProtectedPolicy::Ignore);
        ignore.skip_not_in_service = true;
        let sorted = sort(&group, ignore);
        assert_eq!(ids(sorted.taken.iter().copied()), ["i-plain"]);
        assert!(sorted.held.is_empty() && sorted.refused.is_empty());
        assert_eq!(ids(sorted.kept.iter().copied()), ["i-protected"]);
        assert_eq!(
            ids(sorted.left_out.iter().map(|(i, _)| *i)),
            ["i-standby", "i-pending"]
        );
        assert_eq!(sorted.joining(), 0);

        let sorted = sort(
            &group,
            policies(StandbyPolicy::Terminate, ProtectedPolicy::Wait),
        );
        assert_eq!(
            ids(sorted.taken.iter().copied()),
            ["i-plain", "i-standby", "i-protected"]
        );
        let held: Vec<(&str, bool, bool)> = sorted
            .held
            .iter()
            .map(|h| (h.id.as_str(), h.standby, h.protected))
            .collect();
        assert_eq!(
            held,
            [("i-standby", true, false), ("i-protected", false, true)]
        );
        let notes = sorted
            .notes(
                policies(StandbyPolicy::Terminate, ProtectedPolicy::Wait),
                "1h",
            )
            .join("\n");
        assert!(notes.contains("standby = terminate): i-standby"), "{notes}");
        assert!(notes.contains("protected = wait): i-protected"), "{notes}");
    }
}
