//! roller's real clients (AWS SDK, Mesos and Marathon over HTTP) wired to
//! a simulated cluster served in this process on loopback: what `roller
//! demo` rolls, and what the in-process roll tests drive. Built once here
//! so that the demo and every test talk to the simulator the same way.
//!
//! The AWS client gets dummy credentials, region and endpoint in code: no
//! `AWS_*` variable can point it at a real account.

use std::path::PathBuf;
use std::time::Duration;

use crate::aws::AwsAutoScaling;
use crate::dcos::ServicesClient;
use crate::http::{HttpAuth, HttpSettings};
use crate::marathon::MarathonClient;
use crate::mesos::{MesosClient, MesosSettings};
use crate::pager::Sinks;
use crate::retry::Backoff;
use crate::roll::ports::PortSet;
use crate::roll::ports::auto_scaling::{AgentMatch, ScalingProcess};
use crate::roll::record::env::{Environment, PagerSettings, Timeouts};
use crate::sim::{Scenario, SimOptions, SimServeError, Simulator};

/// The simulated cluster and the clients that reach it.
pub(crate) struct SimulatedCluster {
    pub(crate) sim: Simulator,
    /// The environment a roll of it runs in (checkpoints in the folder
    /// given to `start`).
    pub(crate) env: Environment,
    pub(crate) aws: AwsAutoScaling,
    pub(crate) mesos: MesosClient,
    pub(crate) marathon: MarathonClient,
    /// No sink: pages go nowhere (and are never said to have gone out).
    pub(crate) pager: Sinks,
    /// The SDK services behind the simulator's admin router.
    pub(crate) services: ServicesClient,
}

#[derive(Debug, thiserror::Error)]
pub enum SimulatedError {
    #[error("{0}")]
    Simulator(#[from] SimServeError),
    #[error("cannot build a client: {0}")]
    Client(String),
}

impl SimulatedError {
    pub(crate) fn label(&self) -> &'static str {
        match self {
            SimulatedError::Simulator(err) => err.label(),
            SimulatedError::Client(_) => "client",
        }
    }
}

impl SimulatedCluster {
    /// Serves `scenario` at `time_scale` and builds the clients. Loopback
    /// answers at once, so the clients' timeouts and backoff are short.
    pub(crate) async fn start(
        scenario: &Scenario,
        time_scale: f64,
        checkpoint_dir: PathBuf,
    ) -> Result<SimulatedCluster, SimulatedError> {
        let sim = Simulator::start(
            scenario,
            SimOptions {
                time_scale,
                ..SimOptions::default()
            },
        )
        .await?;
        let endpoints = sim.endpoints().clone();
        let mut group = crate::roll::record::env::GroupSpec::named(&scenario.group.name);
        group.complete_lifecycle_hooks = scenario.roller.complete_lifecycle_hooks.clone();
        // Checked against the same names when the scenario was read.
        let roller = &scenario.roller;
        let env = Environment {
            groups: vec![group],
            region: Some("us-east-1".to_string()),
            profile: None,
            aws_endpoint_url: Some(endpoints.aws_endpoint_url.clone()),
            mesos: endpoints.mesos.clone(),
            marathon: endpoints.marathon.clone(),
            dcos_url: Some(endpoints.dcos_url.clone()),
            services: Vec::new(),
            agent_match: AgentMatch::PrivateIp,
            time_scale,
            poll_interval: Duration::from_secs(5),
            settle_time: crate::roll::record::env::DEFAULT_SETTLE_TIME,
            bake: None,
            failure_limit: None,
            max_surge: None,
            standby: roller
                .standby
                .as_deref()
                .and_then(|v| v.parse().ok())
                .unwrap_or_default(),
            protected: roller
                .protected
                .as_deref()
                .and_then(|v| v.parse().ok())
                .unwrap_or_default(),
            other_tasks: crate::roll::record::env::OtherTasksPolicy::Drain,
            max_grace_period: crate::roll::record::env::DEFAULT_MAX_GRACE_PERIOD,
            alarms: None,
            timeouts: Timeouts::DEFAULT,
            pager: PagerSettings::default(),
            checkpoint_dir,
            checkpoint_store: None,
            checkpoint_endpoint_url: None,
            ca_bundle: None,
            suspend_processes: vec![
                ScalingProcess::AZRebalance,
                ScalingProcess::AlarmNotification,
                ScalingProcess::ScheduledActions,
            ],
        };
        let http = HttpSettings {
            request_timeout: Duration::from_secs(5),
            connect_timeout: Duration::from_secs(2),
            ca_bundle: None,
            auth: HttpAuth::None,
            shared: None,
        };
        let quick = Backoff {
            initial: Duration::from_millis(20),
            max: Duration::from_millis(200),
            attempts: 4,
        };
        let aws = crate::aws::simulated_client(&endpoints.aws_endpoint_url, "us-east-1").await;
        let mesos = MesosClient::new(MesosSettings {
            http: http.clone(),
            backoff: quick,
            ..MesosSettings::new(env.mesos.clone())
        })
        .map_err(|e| SimulatedError::Client(e.to_string()))?;
        let marathon = MarathonClient::new(&env.marathon, &http)
            .map_err(|e| SimulatedError::Client(e.to_string()))?
            .with_backoff(quick)
            .with_event_stream();
        let services = ServicesClient::new(env.dcos_url.as_deref(), &[], &http)
            .map_err(|e| SimulatedError::Client(e.to_string()))?;
        Ok(SimulatedCluster {
            sim,
            env,
            aws,
            mesos,
            marathon,
            pager: Sinks::default(),
            services,
        })
    }

    pub(crate) fn ports(
        &self,
    ) -> PortSet<'_, AwsAutoScaling, MesosClient, MarathonClient, Sinks, ServicesClient> {
        PortSet {
            aws: &self.aws,
            mesos: &self.mesos,
            marathon: &self.marathon,
            pager: &self.pager,
            services: &self.services,
        }
    }
}
