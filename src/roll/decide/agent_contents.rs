//! What runs on an agent (pure): from the master's frameworks and their
//! tasks, Marathon's tasks told from a DC/OS SDK service's pods and from
//! any other framework's tasks (a Metronome job run, a Spark driver).
//! Marathon's tasks move with the drain; the others do not, and saying
//! which framework holds an agent is what lets an operator act on it.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use crate::roll::ports::marathon::App;
use crate::roll::ports::mesos::Framework;

/// The label DC/OS puts on the Marathon app of every DC/OS SDK
/// scheduler (its plan API's version, `v1`).
pub(crate) const SDK_API_LABEL: &str = "DCOS_COMMONS_API_VERSION";
/// The label naming the service of a DC/OS package's scheduler.
pub(crate) const SERVICE_NAME_LABEL: &str = "DCOS_SERVICE_NAME";

/// The tasks on one agent, by kind.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct AgentContents {
    /// Marathon's tasks.
    pub(crate) marathon: usize,
    /// Tasks of DC/OS SDK services' pods, by service name.
    pub(crate) services: BTreeMap<String, usize>,
    /// Tasks of any other framework, by framework name.
    pub(crate) others: BTreeMap<String, usize>,
}

impl AgentContents {
    /// Tasks that are not Marathon's.
    pub(crate) fn not_marathon(&self) -> usize {
        self.services.values().sum::<usize>() + self.others.values().sum::<usize>()
    }

    /// `3 Marathon task(s), 2 task(s) of service kafka, 1 task(s) of
    /// framework metronome`; `nothing` when empty.
    pub(crate) fn describe(&self) -> String {
        let mut parts = Vec::new();
        if self.marathon > 0 {
            parts.push(format!("{} Marathon task(s)", self.marathon));
        }
        for (name, n) in &self.services {
            parts.push(format!("{n} task(s) of SDK service {name}"));
        }
        for (name, n) in &self.others {
            parts.push(format!("{n} task(s) of framework {name}"));
        }
        if parts.is_empty() {
            "nothing".to_string()
        } else {
            parts.join(", ")
        }
    }
}

/// The DC/OS SDK services Marathon runs the schedulers of: each app with
/// the SDK's label, by its `DCOS_SERVICE_NAME` (else its id without the
/// leading slash).
pub(crate) fn sdk_services(apps: &[App]) -> BTreeSet<String> {
    apps.iter()
        .filter(|a| a.labels.contains_key(SDK_API_LABEL))
        .map(|a| {
            a.labels
                .get(SERVICE_NAME_LABEL)
                .cloned()
                .unwrap_or_else(|| a.id.trim_start_matches('/').to_string())
        })
        .collect()
}

/// Every agent's tasks, by kind. Marathon's framework is the one whose
/// tasks Marathon lists (`marathon_tasks`), else the one named
/// `marathon`; a framework named as one of `services` holds that
/// service's pods; any other is another framework.
pub(crate) fn by_agent(
    frameworks: &[Framework],
    marathon_tasks: &HashSet<&str>,
    services: &BTreeSet<String>,
) -> BTreeMap<String, AgentContents> {
    let listed_by_marathon = |f: &Framework| {
        f.tasks
            .iter()
            .any(|t| marathon_tasks.contains(t.id.as_str()))
    };
    let mut marathon: HashSet<&str> = frameworks
        .iter()
        .filter(|f| listed_by_marathon(f))
        .map(|f| f.id.as_str())
        .collect();
    if marathon.is_empty() {
        marathon = frameworks
            .iter()
            .filter(|f| f.name == "marathon")
            .map(|f| f.id.as_str())
            .collect();
    }
    let mut agents: BTreeMap<String, AgentContents> = BTreeMap::new();
    for framework in frameworks {
        for task in &framework.tasks {
            let here = agents.entry(task.agent_id.clone()).or_default();
            if marathon.contains(framework.id.as_str()) {
                here.marathon += 1;
            } else if services.contains(&framework.name) {
                *here.services.entry(framework.name.clone()).or_default() += 1;
            } else {
                *here.others.entry(framework.name.clone()).or_default() += 1;
            }
        }
    }
    agents
}

/// What the `old` agents hold besides Marathon's tasks, summed per
/// service and framework with how many agents: `None` when nothing.
pub(crate) fn not_marathon_on(
    agents: &BTreeMap<String, AgentContents>,
    old: &HashSet<String>,
) -> Option<String> {
    let mut kinds: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for (_, here) in agents.iter().filter(|(a, _)| old.contains(*a)) {
        let named = here
            .services
            .iter()
            .map(|(name, n)| (format!("SDK service {name}"), *n))
            .chain(
                here.others
                    .iter()
                    .map(|(name, n)| (format!("framework {name}"), *n)),
            );
        for (kind, n) in named {
            let entry = kinds.entry(kind).or_default();
            entry.0 += n;
            entry.1 += 1;
        }
    }
    (!kinds.is_empty()).then(|| {
        kinds
            .iter()
            .map(|(kind, (tasks, on))| format!("{tasks} task(s) of {kind} on {on} agent(s)"))
            .collect::<Vec<_>>()
            .join(", ")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::roll::ports::mesos::FrameworkTask;

    fn framework(id: &str, name: &str, tasks: &[(&str, &str)]) -> Framework {
        Framework {
            id: id.to_string(),
            name: name.to_string(),
            active: true,
            tasks: tasks
                .iter()
                .map(|(task, agent)| FrameworkTask {
                    id: task.to_string(),
                    agent_id: agent.to_string(),
                    state: "TASK_RUNNING".to_string(),
                    ..FrameworkTask::default()
                })
                .collect(),
        }
    }

    #[test]
    fn each_agents_tasks_are_told_apart_by_framework() {
        let frameworks = [
            // Marathon registered under another name (a second Marathon):
            // its tasks are the ones Marathon lists.
            framework("fw-0", "marathon-user", &[("web.1", "S1"), ("web.2", "S2")]),
            framework("fw-1", "kafka", &[("kafka-0-broker", "S1")]),
            framework("fw-2", "metronome", &[("ct:1:0:backup:", "S1")]),
            framework("fw-3", "spark", &[]),
        ];
        let marathon: HashSet<&str> = ["web.1", "web.2"].into();
        let services = BTreeSet::from(["kafka".to_string()]);
        let agents = by_agent(&frameworks, &marathon, &services);
        let s1 = &agents["S1"];
        assert_eq!(s1.marathon, 1);
        assert_eq!(s1.services, BTreeMap::from([("kafka".to_string(), 1)]));
        assert_eq!(s1.others, BTreeMap::from([("metronome".to_string(), 1)]));
        assert_eq!(s1.not_marathon(), 2);
        assert_eq!(
            s1.describe(),
            "1 Marathon task(s), 1 task(s) of SDK service kafka, 1 task(s) of framework metronome"
        );
        assert_eq!(agents["S2"].not_marathon(), 0);
        assert!(!agents.contains_key("S3"));
        let old: HashSet<String> = ["S1".to_string(), "S2".to_string()].into();
        assert_eq!(
            not_marathon_on(&agents, &old).as_deref(),
            Some(
                "1 task(s) of SDK service kafka on 1 agent(s), 1 task(s) of framework metronome on 1 agent(s)"
            )
        );
        let only_s2: HashSet<String> = ["S2".to_string()].into();
        assert_eq!(not_marathon_on(&agents, &only_s2), None);
        // Marathon listing no task: its framework is known by its name.
        let frameworks = [framework("fw-9", "marathon", &[("x", "S4")])];
        let agents = by_agent(&frameworks, &HashSet::new(), &BTreeSet::new());
        assert_eq!(agents["S4"].marathon, 1);
    }

    #[test]
    fn sdk_services_are_found_by_the_labels_dcos_puts_on_their_schedulers() {
        let mut kafka = App {
            id: "/kafka".to_string(),
            ..App::default()
        };
        kafka.labels.insert(SDK_API_LABEL.into(), "v1".into());
        kafka
            .labels
            .insert(SERVICE_NAME_LABEL.into(), "kafka".into());
        let mut unnamed = App {
            id: "/data/hdfs".to_string(),
            ..App::default()
        };
        unnamed.labels.insert(SDK_API_LABEL.into(), "v1".into());
        let mut plain = App {
            id: "/web".to_string(),
            ..App::default()
        };
        plain.labels.insert(SERVICE_NAME_LABEL.into(), "web".into());
        assert_eq!(
            sdk_services(&[kafka, unnamed, plain]),
            BTreeSet::from(["data/hdfs".to_string(), "kafka".to_string()])
        );
    }
}
