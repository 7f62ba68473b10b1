//! The preflight's look at the DC/OS SDK services: every service whose
//! pods run on the cluster (its scheduler a Marathon app labelled
//! `DCOS_COMMONS_API_VERSION`, its framework with tasks in Mesos) must
//! answer through its API, since its pods on old agents move only through
//! it (`pod replace`). A service roller cannot reach refuses the roll,
//! naming it and the way out; one that is deploying or recovering is
//! noted (its pods wait for it during the roll).

use crate::roll::decide::agent_contents;
use crate::roll::error::RollError;
use crate::roll::ports::Ports;
use crate::roll::ports::marathon::App;
use crate::roll::ports::mesos::MesosMaster;
use crate::roll::ports::services::Services;

/// Notes for the operator, or the refusal.
/// `apps`: Marathon's, as the preflight listed them.
pub(super) async fn check_services<P: Ports>(
    ports: P,
    apps: &[App],
) -> Result<Vec<String>, RollError> {
    let services = agent_contents::sdk_services(apps);
    if services.is_empty() {
        return Ok(Vec::new());
    }
    let frameworks = match ports.mesos().frameworks().await {
        Ok(frameworks) => frameworks,
        Err(e) => {
            return Ok(vec![format!(
                "DC/OS SDK service(s) {} found, but Mesos' frameworks cannot be read ({e}): \
                 where their pods run is looked at during the roll",
                services.iter().cloned().collect::<Vec<_>>().join(", ")
            )]);
        }
    };
    let mut notes = Vec::new();
    for service in &services {
        let pods = frameworks
            .iter()
            .filter(|f| f.name == *service)
            .map(|f| f.tasks.len())
            .sum::<usize>();
        if pods == 0 {
            continue;
        }
        let api = ports.services();
        let plan = api.plan(service, "deploy").await.map_err(|e| {
            RollError::refused(format!(
                "SDK service {service} runs {pods} task(s), which move only through its API, \
                 and {e}. Give roller a route (dcos_url, or a [[service]] table with its url; \
                 the token in ROLLER_MARATHON_TOKEN), or wait for its scheduler to answer"
            ))
        })?;
        let state = if plan.is_complete() {
            "deployed".to_string()
        } else {
            format!(
                "deploy plan {}: its pods are replaced once it is COMPLETE",
                plan.status
            )
        };
        notes.push(format!(
            "SDK service {service}: {pods} task(s), {state}; pods on old agents are replaced \
             one at a time through its API"
        ));
    }
    Ok(notes)
}
