//! The failure limit (pure): how many distinct apps, or distinct new
//! agents, may fail on the new image before the roll counts the image as
//! bad (`--failure-limit`, key `failure_limit`), as Argo Rollouts'
//! `failureLimit` lets an analysis fail that many times before the rollout
//! aborts. The default, 0, keeps roller's rule: the first failure turns
//! the roll around, so a bad image is found as fast as before.
//!
//! On a large fleet one app that crashes now and then, or one new agent
//! on a bad host, would otherwise roll a good image back. Below the limit
//! a failure is tolerated: recorded in the checkpoint and logged, never
//! looked for again, and counted for the rest of the roll. What is
//! counted is the larger of the distinct apps and the distinct new agents
//! among the failures tolerated and found: one flaky app failing on three
//! agents counts three (the agents may be what fails), three apps failing
//! on one agent count three (the image may be what fails them).

use std::collections::HashSet;

use super::failure::Evidence;
use crate::roll::record::checkpoint::FailureRecord;

/// What the failures found this tick come to.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// No new failure.
    Nothing,
    /// Failures within the limit: recorded, logged, and counted from now
    /// on.
    Tolerate(Vec<Evidence>),
    /// The failure that took the count past the limit: the image is bad.
    /// `tolerated` are the failures this tick found within the limit
    /// before it.
    Fail {
        evidence: Evidence,
        tolerated: Vec<Evidence>,
        count: usize,
    },
    /// A failure no limit weighs (a watched alarm in ALARM,
    /// `decide::alarms`): the image is bad.
    Decisive(Evidence),
}

/// The apps and new agents that have failed: the count the limit bounds.
struct Culprits<'a> {
    apps: HashSet<&'a str>,
    agents: HashSet<&'a str>,
}

impl<'a> Culprits<'a> {
    fn of(tolerated: &'a [FailureRecord]) -> Culprits<'a> {
        let mut culprits = Culprits {
            apps: HashSet::new(),
            agents: HashSet::new(),
        };
        for t in tolerated {
            culprits.add(&t.key, t.app.as_deref(), t.agent.as_deref());
        }
        culprits
    }

    fn add(&mut self, key: &'a str, app: Option<&'a str>, agent: Option<&'a str>) {
        // A failure that names neither app nor agent counts on its own.
        if app.is_none() && agent.is_none() {
            self.apps.insert(key);
        }
        self.apps.extend(app);
        self.agents.extend(agent);
    }

    fn count(&self) -> usize {
        self.apps.len().max(self.agents.len())
    }
}

/// Weighs `found` (the watch's fresh signs, in order) against the
/// failures already `tolerated` and the `limit`.
pub(crate) fn judge(found: Vec<Evidence>, tolerated: &[FailureRecord], limit: u32) -> Verdict {
    if found.is_empty() {
        return Verdict::Nothing;
    }
    let limit = usize::try_from(limit).unwrap_or(usize::MAX);
    let mut culprits = Culprits::of(tolerated);
    for (i, evidence) in found.iter().enumerate() {
        culprits.add(
            &evidence.key,
            evidence.app.as_deref(),
            evidence.agent.as_deref(),
        );
        let count = culprits.count();
        if count > limit {
            // The ones before it were within the limit; the ones after
            // it are left for the record of the failure to speak for.
            let mut before = found;
            let evidence = before.swap_remove(i);
            before.truncate(i);
            return Verdict::Fail {
                evidence,
                tolerated: before,
                count,
            };
        }
    }
    Verdict::Tolerate(found)
}

/// How much of the limit the failures tolerated so far use.
pub(crate) fn used(tolerated: &[FailureRecord]) -> usize {
    Culprits::of(tolerated).count()
}

/// How a tolerated failure is logged: what failed, and how much of the
/// limit is used.
pub(crate) fn tolerated_line(evidence: &Evidence, count: usize, limit: u32) -> String {
    format!(
        "failure tolerated ({count} of --failure-limit {limit} used): {}",
        evidence.sentence()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn evidence(key: &str, app: Option<&str>, agent: Option<&str>) -> Evidence {
        Evidence {
            key: key.to_string(),
            app: app.map(str::to_string),
            task: None,
            agent: agent.map(str::to_string),
            instance: None,
            what: "TASK_FAILED".to_string(),
            since: None,
        }
    }

    fn record(e: &Evidence) -> FailureRecord {
        FailureRecord {
            key: e.key.clone(),
            app: e.app.clone(),
            task: None,
            agent: e.agent.clone(),
            instance: None,
            what: e.what.clone(),
            since: None,
            found: "2026-11-28T00:00:00Z".to_string(),
        }
    }

    #[test]
    fn without_a_limit_the_first_failure_is_the_image_s() {
        let a = evidence("task-failure/1", Some("/a"), Some("S-1"));
        let b = evidence("task-failure/2", Some("/b"), Some("S-2"));
        assert_eq!(
            judge(vec![a.clone(), b], &[], 0),
            Verdict::Fail {
                evidence: a,
                tolerated: vec![],
                count: 1
            }
        );
        assert_eq!(judge(vec![], &[], 0), Verdict::Nothing);
    }

    #[test]
    fn failures_within_the_limit_are_tolerated_and_the_one_past_it_fails() {
        let a = evidence("task-failure/1", Some("/a"), Some("S-1"));
        let b = evidence("task-failure/2", Some("/b"), Some("S-2"));
        let c = evidence("task-failure/3", Some("/c"), Some("S-3"));
        assert_eq!(
            judge(vec![a.clone()], &[], 2),
            Verdict::Tolerate(vec![a.clone()])
        );
        // Found in one tick: the first two within the limit, the third past it.
        assert_eq!(
            judge(vec![a.clone(), b.clone(), c.clone()], &[], 2),
            Verdict::Fail {
                evidence: c.clone(),
                tolerated: vec![a.clone(), b.clone()],
                count: 3
            }
        );
        // Found over ticks: what was tolerated counts.
        let before = [record(&a), record(&b)];
        assert_eq!(
            judge(vec![c.clone()], &before, 2),
            Verdict::Fail {
                evidence: c,
                tolerated: vec![],
                count: 3
            }
        );
    }

    #[test]
    fn the_count_is_the_larger_of_distinct_apps_and_distinct_new_agents() {
        // One app failing again on the same agent: still one.
        let first = evidence("failing-checks/t1", Some("/a"), Some("S-1"));
        let again = evidence("task-failure/t1", Some("/a"), Some("S-1"));
        assert_eq!(
            judge(vec![again.clone()], &[record(&first)], 1),
            Verdict::Tolerate(vec![again])
        );
        // One app failing on a second agent: two agents.
        let elsewhere = evidence("task-failure/t2", Some("/a"), Some("S-2"));
        assert!(matches!(
            judge(vec![elsewhere], &[record(&first)], 1),
            Verdict::Fail { count: 2, .. }
        ));
        // Two apps failing on one agent: two apps.
        let other_app = evidence("task-failure/t3", Some("/b"), Some("S-1"));
        assert!(matches!(
            judge(vec![other_app], &[record(&first)], 1),
            Verdict::Fail { count: 2, .. }
        ));
        // A launch delay names an app only.
        let delay = evidence("launch-delay/a", Some("/a"), None);
        assert_eq!(
            judge(vec![delay.clone()], &[record(&first)], 1),
            Verdict::Tolerate(vec![delay])
        );
    }

    #[test]
    fn a_failure_naming_neither_app_nor_agent_still_counts() {
        let bare = evidence("unregistered/i-1", None, None);
        assert!(matches!(
            judge(vec![bare], &[], 0),
            Verdict::Fail { count: 1, .. }
        ));
    }
}
