//! Whether the tasks on the old agents have somewhere to go: Marathon
//! places a task only on an agent offering resources of a role the app
//! accepts (`acceptedResourceRoles`; DC/OS's default is `*`, the
//! unreserved resources, and its public agents offer only `slave_public`).
//! An app whose tasks are on old agents and that no other agent can take
//! would lose them for good once its old agents go: the roll pauses
//! before its first move, naming the app and why. (Placement constraints
//! stay Marathon's to honour, as before.)

use std::collections::{BTreeSet, HashSet};

use crate::roll::ports::marathon::App;
use crate::roll::ports::mesos::Agent;

/// The roles an app's tasks may use, `*` for unreserved resources.
pub(crate) fn accepted_roles(app: &App) -> Vec<String> {
    match &app.accepted_resource_roles {
        Some(roles) => roles.clone(),
        None => vec!["*".to_string()],
    }
}

/// Whether `agent` offers resources of a role `app` accepts.
pub(crate) fn accepts(app: &App, agent: &Agent) -> bool {
    accepted_roles(app).iter().any(|role| match role.as_str() {
        "*" => agent.unreserved,
        role => agent.reserved_roles.contains(role),
    })
}

/// The agents a task moved off the `old` ones may go to: registered,
/// active, not draining, not old.
fn takers<'a>(agents: &'a [Agent], old: &'a HashSet<String>) -> impl Iterator<Item = &'a Agent> {
    agents
        .iter()
        .filter(|a| !old.contains(&a.id.0) && a.active && a.drain.is_none())
}

/// An app with tasks on the old agents and no other agent to take them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Stranded {
    pub(crate) app: String,
    /// How many of its tasks are on old agents.
    pub(crate) tasks: usize,
    pub(crate) accepts: Vec<String>,
}

/// The apps (`allowed` left out: the operator let them go) whose tasks on
/// `old` agents no other registered, active, undrained agent can take.
pub(crate) fn stranded(
    apps: &[App],
    old: &HashSet<String>,
    agents: &[Agent],
    allowed: &[String],
) -> Vec<Stranded> {
    let targets: Vec<&Agent> = takers(agents, old).collect();
    apps.iter()
        .filter(|app| !allowed.contains(&app.id))
        .filter_map(|app| {
            let tasks = app
                .tasks
                .iter()
                .filter(|t| t.agent_id.as_ref().is_some_and(|a| old.contains(a)))
                .count();
            let takers = targets.iter().any(|agent| accepts(app, agent));
            (tasks > 0 && !takers).then(|| Stranded {
                app: app.id.clone(),
                tasks,
                accepts: accepted_roles(app),
            })
        })
        .collect()
}

/// The pause's sentence: each stranded app, what it accepts, what the
/// other agents offer, and what an operator can do.
pub(crate) fn stranded_sentence(
    stranded: &[Stranded],
    old: &HashSet<String>,
    agents: &[Agent],
) -> String {
    let offered: BTreeSet<String> = takers(agents, old)
        .flat_map(|a| {
            let unreserved = a.unreserved.then(|| "*".to_string());
            a.reserved_roles.iter().cloned().chain(unreserved)
        })
        .collect();
    let apps: Vec<String> = stranded
        .iter()
        .map(|s| {
            format!(
                "{} ({} task(s) on old agents; accepts roles {})",
                s.app,
                s.tasks,
                s.accepts.join(", ")
            )
        })
        .collect();
    let offered = if offered.is_empty() {
        "no agent at all".to_string()
    } else {
        format!(
            "only roles {}",
            offered.into_iter().collect::<Vec<_>>().join(", ")
        )
    };
    format!(
        "no agent outside the old ones can take the tasks of {}: the other agents offer {offered}. \
         Nothing was moved. Give the new agents those roles (a DC/OS public agent offers \
         slave_public), or let the app go with --allow-unhealthy APP on the resume",
        apps.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::roll::decide::test_apps::{app, task};
    use crate::roll::ports::mesos::AgentId;

    fn agent(id: &str, reserved: &[&str], unreserved: bool) -> Agent {
        Agent {
            id: AgentId(id.to_string()),
            hostname: id.to_string(),
            port: None,
            ip: None,
            active: true,
            deactivated: false,
            registered_at: None,
            reregistered_at: None,
            attributes: Default::default(),
            resources: Default::default(),
            used_resources: Default::default(),
            version: None,
            drain: None,
            reserved_roles: reserved.iter().map(|r| r.to_string()).collect(),
            unreserved,
        }
    }

    fn public(mut app: App) -> App {
        app.accepted_resource_roles = Some(vec!["slave_public".to_string()]);
        app
    }

    fn old() -> HashSet<String> {
        ["OLD-PUB", "OLD-PRIV"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    }

    #[test]
    fn default_apps_go_to_unreserved_agents_public_apps_to_slave_public_ones() {
        let private = agent("P", &[], true);
        let public_agent = agent("Q", &["slave_public"], false);
        let edge = public(app("/edge", 1, vec![]));
        let web = app("/web", 1, vec![]);
        assert!(accepts(&web, &private) && !accepts(&web, &public_agent));
        assert!(accepts(&edge, &public_agent) && !accepts(&edge, &private));
        let mut both = web.clone();
        both.accepted_resource_roles = Some(vec!["*".into(), "slave_public".into()]);
        assert!(accepts(&both, &private) && accepts(&both, &public_agent));
    }

    #[test]
    fn a_public_app_with_no_new_public_agent_is_stranded_and_named() {
        let agents = [
            agent("OLD-PUB", &["slave_public"], false),
            agent("OLD-PRIV", &[], true),
            agent("NEW-PRIV", &[], true),
        ];
        let apps = [
            public(app("/edge", 1, vec![task("e1", "OLD-PUB", true)])),
            app("/web", 1, vec![task("w1", "OLD-PRIV", true)]),
        ];
        let found = stranded(&apps, &old(), &agents, &[]);
        assert_eq!(
            found,
            [Stranded {
                app: "/edge".into(),
                tasks: 1,
                accepts: vec!["slave_public".into()]
            }]
        );
        let text = stranded_sentence(&found, &old(), &agents);
        assert!(
            text.contains("/edge") && text.contains("only roles *"),
            "{text}"
        );
        // Allowed to go, it is not stranded.
        assert!(stranded(&apps, &old(), &agents, &["/edge".to_string()]).is_empty());
    }

    #[test]
    fn a_new_public_agent_takes_the_public_app_but_not_while_it_drains() {
        let mut new_public = agent("NEW-PUB", &["slave_public"], false);
        let apps = [public(app("/edge", 1, vec![task("e1", "OLD-PUB", true)]))];
        let agents = [
            agent("OLD-PUB", &["slave_public"], false),
            new_public.clone(),
        ];
        assert!(stranded(&apps, &old(), &agents, &[]).is_empty());
        new_public.active = false;
        let agents = [agent("OLD-PUB", &["slave_public"], false), new_public];
        assert_eq!(stranded(&apps, &old(), &agents, &[]).len(), 1);
    }

    #[test]
    fn an_app_with_nothing_on_old_agents_is_never_stranded() {
        let apps = [public(app("/edge", 1, vec![task("e1", "ELSEWHERE", true)]))];
        let agents = [agent("NEW-PRIV", &[], true)];
        assert!(stranded(&apps, &old(), &agents, &[]).is_empty());
    }
}
