//! `roller health`: one look at Marathon (apps with tasks, counts and
//! deployments, plus `/v2/deployments`), judged by `crate::roll::decide::health`,
//! reported as a table or as JSON, and mapped to exit 0 (healthy),
//! 1 (unhealthy) or 2 (no verdict).

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

use super::HealthArgs;
use super::error::CliError;
use super::output::write_json;
use crate::http::{HttpAuth, HttpSettings};
use crate::marathon::MarathonClient;
use crate::mesos::{MesosClient, MesosSettings};
use crate::roll::decide::health::{self, AppHealth, ClusterHealth};
use crate::roll::ports::marathon::Marathon;
use crate::roll::ports::mesos::{Agent, MesosMaster};

pub(super) const HELP: &str = "\
Exit codes:
  0    every app is healthy
  1    some app is unhealthy (each is listed with its reason)
  2    no verdict: Marathon unreachable or unparsable, or bad input

An app is healthy when no deployment touches it and as many tasks are
healthy as it wants instances (running tasks, for an app without health
checks); a suspended app (0 instances) is healthy.

Credentials come from the environment, never from arguments:
  ROLLER_MARATHON_TOKEN or ROLLER_MARATHON_TOKEN_FILE      DC/OS token
  ROLLER_MARATHON_USER with ROLLER_MARATHON_PASSWORD(_FILE) basic auth
  (and ROLLER_MESOS_* likewise for --mesos)

--json prints, whatever the exit code:
  {\"verdict\": \"healthy\" | \"unhealthy\" | \"unknown\",
   \"apps\": [{\"id\", \"healthy\", \"reason\", \"instances\", \"tasksRunning\",
             \"tasksHealthy\", \"healthyPerAgent\": {agentId: n}}],
   \"error\": null | \"...\"}
and with --mesos also
  \"agents\": [{\"id\", \"hostname\", \"active\", \"draining\", \"healthyTasks\"}]";

/// Seconds, not minutes: each attempt is bounded, retries back off for a
/// few seconds, and the whole look is cut off after this.
const PATIENCE: Duration = Duration::from_secs(20);

fn http_settings(args: &HealthArgs, auth: HttpAuth) -> HttpSettings {
    HttpSettings {
        request_timeout: Duration::from_secs(5),
        connect_timeout: Duration::from_secs(2),
        ca_bundle: args.ca_bundle.clone(),
        auth,
        shared: None,
    }
}

/// What one look found: Marathon's verdict, and Mesos' agents if asked.
struct Look {
    health: ClusterHealth,
    agents: Option<Vec<Agent>>,
}

pub(super) fn run(args: &HealthArgs, out: &mut dyn Write) -> Result<(), CliError> {
    match look(args) {
        Ok(Look { health, agents }) => {
            if args.json {
                write_json(out, &report(Some(&health), agents.as_deref(), None))?;
            } else {
                out.write_all(table(&health).as_bytes())?;
                if let Some(agents) = &agents {
                    out.write_all(agent_table(&health, agents).as_bytes())?;
                }
            }
            let unhealthy = health.unhealthy().count();
            if unhealthy == 0 {
                Ok(())
            } else {
                Err(CliError::Unhealthy {
                    unhealthy,
                    total: health.apps.len(),
                })
            }
        }
        Err(reason) => {
            if args.json {
                write_json(out, &report(None, None, Some(&reason)))?;
            }
            Err(CliError::NoVerdict(reason))
        }
    }
}

/// Reads Marathon once and judges it; the error is the reason there is no
/// verdict.
fn look(args: &HealthArgs) -> Result<Look, String> {
    let auth = HttpAuth::from_env("MARATHON").map_err(|err| err.to_string())?;
    let client = MarathonClient::new(&args.marathon, &http_settings(args, auth))
        .map_err(|err| err.to_string())?;
    let mesos = if args.mesos.is_empty() {
        None
    } else {
        let auth = HttpAuth::from_env("MESOS").map_err(|err| err.to_string())?;
        let settings = MesosSettings {
            http: http_settings(args, auth),
            ..MesosSettings::new(args.mesos.clone())
        };
        Some(MesosClient::new(settings).map_err(|err| err.to_string())?)
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|err| format!("cannot start the async runtime: {err}"))?;
    runtime.block_on(async {
        let marathon = async {
            tokio::try_join!(client.apps(), client.deployments())
                .map_err(|err| format!("Marathon: {err}"))
        };
        let agents = async {
            match &mesos {
                None => Ok(None),
                Some(mesos) => mesos
                    .agents()
                    .await
                    .map(|agents| Some(agents.registered))
                    .map_err(|err| format!("Mesos: {err}")),
            }
        };
        match tokio::time::timeout(PATIENCE, async { tokio::try_join!(marathon, agents) }).await {
            Ok(Ok(((mut apps, deployments), agents))) => {
                // With Mesos given, judge as the roll does: a task Marathon
                // still lists on an agent Mesos no longer has is missing.
                if let Some(agents) = &agents {
                    let active = agents
                        .iter()
                        .filter(|a| a.active)
                        .map(|a| a.id.0.clone())
                        .collect();
                    health::drop_tasks_on_lost_agents(
                        Arc::make_mut(&mut apps).as_mut_slice(),
                        &active,
                    );
                }
                Ok(Look {
                    health: health::judge(&apps, &deployments, health::Settle::NONE),
                    agents,
                })
            }
            Ok(Err(err)) => Err(err),
            Err(_) => Err(format!(
                "Marathon{} did not answer within {PATIENCE:?}",
                if mesos.is_some() { " or Mesos" } else { "" }
            )),
        }
    })
}

#[derive(Serialize)]
struct Report<'a> {
    verdict: &'static str,
    apps: Vec<AppReport<'a>>,
    error: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    agents: Option<Vec<AgentReport<'a>>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct AgentReport<'a> {
    id: &'a str,
    hostname: &'a str,
    active: bool,
    draining: bool,
    healthy_tasks: u32,
}

/// Healthy tasks per agent id, over every app.
fn healthy_tasks_per_agent(health: &ClusterHealth) -> BTreeMap<&str, u32> {
    let mut per_agent = BTreeMap::new();
    for app in &health.apps {
        for (agent, n) in &app.healthy_per_agent {
            *per_agent.entry(agent.as_str()).or_insert(0) += n;
        }
    }
    per_agent
}

fn agent_reports<'a>(health: &ClusterHealth, agents: &'a [Agent]) -> Vec<AgentReport<'a>> {
    let per_agent = healthy_tasks_per_agent(health);
    agents
        .iter()
        .map(|agent| AgentReport {
            id: &agent.id.0,
            hostname: &agent.hostname,
            active: agent.active,
            draining: agent.drain.is_some(),
            healthy_tasks: per_agent.get(agent.id.0.as_str()).copied().unwrap_or(0),
        })
        .collect()
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct AppReport<'a> {
    id: &'a str,
    healthy: bool,
    reason: Option<String>,
    instances: u32,
    tasks_running: u32,
    tasks_healthy: u32,
    healthy_per_agent: &'a BTreeMap<String, u32>,
}

fn report<'a>(
    health: Option<&'a ClusterHealth>,
    agents: Option<&'a [Agent]>,
    error: Option<&'a str>,
) -> Report<'a> {
    let verdict = match health {
        None => "unknown",
        Some(health) if health.is_healthy() => "healthy",
        Some(_) => "unhealthy",
    };
    let apps = health
        .map(|health| health.apps.iter().map(app_report).collect())
        .unwrap_or_default();
    Report {
        verdict,
        apps,
        error,
        agents: health.zip(agents).map(|(h, a)| agent_reports(h, a)),
    }
}

fn app_report(app: &AppHealth) -> AppReport<'_> {
    AppReport {
        id: &app.id,
        healthy: app.is_healthy(),
        reason: app.reason(),
        instances: app.instances,
        tasks_running: app.tasks_running,
        tasks_healthy: app.tasks_healthy,
        healthy_per_agent: &app.healthy_per_agent,
    }
}

/// One line per app, then the verdict.
fn table(health: &ClusterHealth) -> String {
    let width = health
        .apps
        .iter()
        .map(|app| app.id.chars().count())
        .chain([3])
        .max()
        .unwrap_or(3);
    let mut text = format!(
        "{:<width$}  {:<9}  {:>9}  {:>7}  {:>7}  REASON\n",
        "APP", "VERDICT", "INSTANCES", "RUNNING", "HEALTHY"
    );
    for app in &health.apps {
        let line = format!(
            "{:<width$}  {:<9}  {:>9}  {:>7}  {:>7}  {}",
            app.id,
            if app.is_healthy() {
                "healthy"
            } else {
                "unhealthy"
            },
            app.instances,
            app.tasks_running,
            app.tasks_healthy,
            app.reason().unwrap_or_default(),
        );
        text.push_str(line.trim_end());
        text.push('\n');
    }
    let total = health.apps.len();
    let unhealthy = health.unhealthy().count();
    if unhealthy == 0 {
        text.push_str(&format!("verdict: healthy ({total} apps)\n"));
    } else {
        text.push_str(&format!(
            "verdict: unhealthy ({unhealthy} of {total} apps)\n"
        ));
    }
    text
}

/// One line per agent Mesos knows, with the healthy tasks it holds.
fn agent_table(health: &ClusterHealth, agents: &[Agent]) -> String {
    let reports = agent_reports(health, agents);
    let width = reports
        .iter()
        .map(|agent| agent.hostname.chars().count())
        .chain([5])
        .max()
        .unwrap_or(5);
    let mut text = format!(
        "\n{:<width$}  {:<8}  {:>13}  ID\n",
        "AGENT", "STATE", "HEALTHY TASKS"
    );
    for agent in &reports {
        let state = match (agent.active, agent.draining) {
            (_, true) => "draining",
            (true, false) => "active",
            (false, false) => "inactive",
        };
        text.push_str(&format!(
            "{:<width$}  {:<8}  {:>13}  {}\n",
            agent.hostname, state, agent.healthy_tasks, agent.id
        ));
    }
    text.push_str(&format!("agents: {} registered\n", reports.len()));
    text
}
