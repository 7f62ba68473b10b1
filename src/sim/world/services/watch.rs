//! The monitor's figures of a service (ground truth, which a roll is
//! judged by): how many of its pods were away at once at most (not
//! running and ready, from the moment their machine died, before Mesos
//! knows), and the longest one pod was away.

use serde::Serialize;

use super::super::World;

#[derive(Clone, Debug, Default)]
pub(super) struct ServiceWatch {
    pods: u32,
    away_now: u32,
    away_peak: u32,
    /// The longest absence that ended.
    longest_ended_ms: u64,
}

impl ServiceWatch {
    /// Raises the peak to the pods away now (those the start placed
    /// nowhere).
    pub(super) fn count_unplaced(&mut self) {
        self.away_peak = self.away_peak.max(self.away_now);
    }

    pub(super) fn new(pods: u32) -> ServiceWatch {
        ServiceWatch {
            pods,
            // Every pod starts away, until placed.
            away_now: pods,
            ..ServiceWatch::default()
        }
    }
}

/// One service's record.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ServiceReport {
    pub name: String,
    pub pods: u32,
    /// The most pods away (not running and ready) at once, the start's
    /// placement aside.
    pub max_pods_not_running: u32,
    /// Pods away now.
    pub pods_not_running_now: u32,
    /// The longest one pod was away (an absence still going counts up
    /// to now).
    pub longest_pod_away_ms: u64,
    /// `pod replace` calls answered, all pods together.
    pub replaces: u32,
    /// The most `pod replace` calls one pod was sent (a roll that
    /// replaces each pod once: 1).
    pub most_replaces_of_one_pod: u32,
}

impl World {
    /// Pod `p` goes away (`true`) or comes back running and ready.
    pub(super) fn set_away(&mut self, s: usize, p: usize, away: bool) {
        let now = self.now;
        let service = &mut self.services[s];
        let pod = &mut service.pods[p];
        let w = &mut service.watch;
        match (pod.away_since, away) {
            (None, true) => {
                pod.away_since = Some(now);
                w.away_now += 1;
                w.away_peak = w.away_peak.max(w.away_now);
            }
            (Some(since), false) => {
                pod.away_since = None;
                w.away_now = w.away_now.saturating_sub(1);
                w.longest_ended_ms = w.longest_ended_ms.max(now.since(since));
            }
            _ => {}
        }
    }

    /// Every service's record, in scenario order.
    pub(crate) fn service_reports(&self) -> Vec<ServiceReport> {
        let now = self.now;
        self.services
            .iter()
            .map(|service| {
                let open = service
                    .pods
                    .iter()
                    .filter_map(|p| p.away_since)
                    .map(|since| now.since(since))
                    .max()
                    .unwrap_or(0);
                ServiceReport {
                    name: service.name.clone(),
                    pods: service.watch.pods,
                    max_pods_not_running: service.watch.away_peak,
                    pods_not_running_now: service.watch.away_now,
                    longest_pod_away_ms: service.watch.longest_ended_ms.max(open),
                    replaces: service.pods.iter().map(|p| p.replaces).sum(),
                    most_replaces_of_one_pod: service
                        .pods
                        .iter()
                        .map(|p| p.replaces)
                        .max()
                        .unwrap_or(0),
                }
            })
            .collect()
    }
}
