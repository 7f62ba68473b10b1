//! The simulator as a set of servers: one world shared by an AWS endpoint
//! (which also serves the `/sim` control routes), three Mesos masters,
//! three Marathons and a DC/OS admin router (the SDK services' plan and
//! pod APIs), each on its own loopback port, until `shutdown`.
//!
//! Every listener is bound before any router is built, so each facade
//! knows its peers' real URLs (a non-leader redirects or proxies to the
//! leader). A ticker brings the world up to the simulated time every
//! `TICK` of real time, so the monitor integrates and events fire even
//! when nobody asks anything.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use tokio::net::TcpListener;
use tokio::sync::broadcast;
use tokio::task::JoinHandle;

use super::control::{self, ControlState};
use super::http;
use super::scenario::Scenario;
use super::shared::{Peers, SharedWorld, SimClock};
use super::world::{Report, World};

/// How often (real time) the world is advanced without a request...
const TICK: Duration = Duration::from_millis(100);

/// ...but never more than once a simulated second: at a low time scale
/// (a test on paused tokio time runs at 1) a 100 ms tick would advance
/// the world ten times a simulated second for nothing.
const MIN_SIMULATED_TICK: Duration = Duration::from_secs(1);

/// How long `shutdown` lets open connections finish before cutting them.
const SHUTDOWN_PATIENCE: Duration = Duration::from_secs(5);

/// Servers per system: one leader and two that redirect or proxy to it,
/// so that a leader change is something the roller really meets.
const PEERS: usize = 3;

/// How to run a scenario.
#[derive(Clone, Debug)]
pub struct SimOptions {
    /// Simulated seconds per real second.
    pub time_scale: f64,
    /// Replaces the scenario's seed (the same seed replays the same world).
    pub seed: Option<u64>,
    /// The address every server binds (port 0: the system picks). Loopback
    /// unless the operator says otherwise: the simulator checks no
    /// credentials.
    pub bind: IpAddr,
}

impl Default for SimOptions {
    fn default() -> SimOptions {
        SimOptions {
            time_scale: 1.0,
            seed: None,
            bind: IpAddr::V4(Ipv4Addr::LOCALHOST),
        }
    }
}

/// Where the simulator answers, as URLs without a trailing slash.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoints {
    /// Auto Scaling and EC2 (`AWS_ENDPOINT_URL`), and the `/sim` routes.
    pub aws_endpoint_url: String,
    /// The three Mesos masters; the first leads at the start.
    pub mesos: Vec<String>,
    /// The three Marathons; the first leads at the start.
    pub marathon: Vec<String>,
    /// The DC/OS admin router: `{dcos_url}/service/<name>/v1/...` reaches
    /// the scheduler of SDK service `<name>`.
    pub dcos_url: String,
}

impl Endpoints {
    /// The control routes' base (`GET {control}/report`).
    pub fn control(&self) -> String {
        format!("{}/sim", self.aws_endpoint_url)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SimServeError {
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
}

impl SimServeError {
    pub(crate) fn label(&self) -> &'static str {
        match self {
            SimServeError::Bind { .. } => "bind_failed",
        }
    }
}

/// A running simulated cluster. Dropping it without `shutdown` stops the
/// servers too (the shutdown channel closes), only without waiting.
pub struct Simulator {
    world: SharedWorld,
    endpoints: Endpoints,
    #[cfg(test)]
    mesos: Arc<Peers>,
    #[cfg(test)]
    marathon: Arc<Peers>,
    /// Sending (or dropping) tells every server and the ticker to stop.
    shutdown: broadcast::Sender<()>,
    tasks: Vec<JoinHandle<()>>,
}

impl Simulator {
    /// Builds the scenario's world and serves it. Must run inside a tokio
    /// runtime; the world's clock starts now.
    pub async fn start(
        scenario: &Scenario,
        options: SimOptions,
    ) -> Result<Simulator, SimServeError> {
        let aws = bind(options.bind).await?;
        let dcos = bind(options.bind).await?;
        let mut mesos_listeners = Vec::with_capacity(PEERS);
        let mut marathon_listeners = Vec::with_capacity(PEERS);
        for _ in 0..PEERS {
            mesos_listeners.push(bind(options.bind).await?);
        }
        for _ in 0..PEERS {
            marathon_listeners.push(bind(options.bind).await?);
        }
        let endpoints = Endpoints {
            aws_endpoint_url: aws.1.clone(),
            mesos: mesos_listeners.iter().map(|(_, url)| url.clone()).collect(),
            marathon: marathon_listeners
                .iter()
                .map(|(_, url)| url.clone())
                .collect(),
            dcos_url: dcos.1.clone(),
        };
        let mesos = Arc::new(Peers::new(endpoints.mesos.clone()));
        let marathon = Arc::new(Peers::new(endpoints.marathon.clone()));

        let mut scenario = scenario.clone();
        if let Some(seed) = options.seed {
            scenario.seed = seed;
        }
        if scenario.timings.epoch_unix_s.is_none() {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0);
            scenario.timings.epoch_unix_s = Some(now);
        }
        let world = World::new(&scenario);
        let scenario = &scenario;
        let world = SharedWorld::new(world, SimClock::new(options.time_scale));
        world.set_api_faults(scenario.api_faults.clone());
        world.set_marathons(marathon.clone());

        let (shutdown, _) = broadcast::channel(1);
        let mut tasks = Vec::with_capacity(2 * PEERS + 3);
        let aws_router = http::aws::router(world.clone()).merge(control::router(ControlState {
            world: world.clone(),
            mesos: mesos.clone(),
            marathon: marathon.clone(),
        }));
        tasks.push(serve(aws.0, aws_router, &shutdown));
        tasks.push(serve(dcos.0, http::dcos::router(world.clone()), &shutdown));
        for (index, (listener, _)) in mesos_listeners.into_iter().enumerate() {
            let router = http::mesos::router(world.clone(), mesos.clone(), index);
            tasks.push(serve(listener, router, &shutdown));
        }
        for (index, (listener, _)) in marathon_listeners.into_iter().enumerate() {
            let router = http::marathon::router(world.clone(), marathon.clone(), index);
            tasks.push(serve(listener, router, &shutdown));
        }
        let every = TICK.max(MIN_SIMULATED_TICK.div_f64(options.time_scale.max(f64::MIN_POSITIVE)));
        tasks.push(tick(world.clone(), every, &shutdown));

        Ok(Simulator {
            world,
            endpoints,
            #[cfg(test)]
            mesos,
            #[cfg(test)]
            marathon,
            shutdown,
            tasks,
        })
    }

    pub fn endpoints(&self) -> &Endpoints {
        &self.endpoints
    }

    pub fn world(&self) -> SharedWorld {
        self.world.clone()
    }

    #[cfg(test)]
    pub(crate) fn mesos_peers(&self) -> Arc<Peers> {
        self.mesos.clone()
    }

    #[cfg(test)]
    pub(crate) fn marathon_peers(&self) -> Arc<Peers> {
        self.marathon.clone()
    }

    /// The monitor's report as of now (simulated).
    pub fn report(&self) -> Report {
        self.world.with(|world| world.report())
    }

    /// Stops accepting, lets open requests finish (for at most
    /// `SHUTDOWN_PATIENCE`), then returns. The world stays readable.
    pub async fn shutdown(mut self) {
        self.world.close_streams();
        let _ = self.shutdown.send(());
        for mut task in std::mem::take(&mut self.tasks) {
            if tokio::time::timeout(SHUTDOWN_PATIENCE, &mut task)
                .await
                .is_err()
            {
                task.abort();
            }
        }
    }
}

/// Dropped without `shutdown`: open event streams end too, or the servers
/// would wait for them forever.
impl Drop for Simulator {
    fn drop(&mut self) {
        self.world.close_streams();
    }
}

async fn bind(ip: IpAddr) -> Result<(TcpListener, String), SimServeError> {
    let addr = SocketAddr::new(ip, 0);
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|source| SimServeError::Bind { addr, source })?;
    let local = listener
        .local_addr()
        .map_err(|source| SimServeError::Bind { addr, source })?;
    // Bound to every interface: loopback is the address that surely reaches it.
    let host = if local.ip().is_unspecified() {
        match local.ip() {
            IpAddr::V4(_) => IpAddr::V4(Ipv4Addr::LOCALHOST),
            IpAddr::V6(_) => IpAddr::V6(std::net::Ipv6Addr::LOCALHOST),
        }
    } else {
        local.ip()
    };
    let url = format!("http://{}", SocketAddr::new(host, local.port()));
    Ok((listener, url))
}

fn serve(
    listener: TcpListener,
    router: Router,
    shutdown: &broadcast::Sender<()>,
) -> JoinHandle<()> {
    let mut stop = shutdown.subscribe();
    tokio::spawn(async move {
        // axum retries failed accepts, so this ends only at shutdown.
        let _ = axum::serve(listener, router)
            .with_graceful_shutdown(async move {
                let _ = stop.recv().await;
            })
            .await;
    })
}

fn tick(world: SharedWorld, every: Duration, shutdown: &broadcast::Sender<()>) -> JoinHandle<()> {
    let mut stop = shutdown.subscribe();
    tokio::spawn(async move {
        let mut interval = tokio::time::interval(every);
        interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = stop.recv() => return,
                _ = interval.tick() => world.with(|_| ()),
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    async fn get(url: &str) -> reqwest::Result<reqwest::Response> {
        reqwest::Client::builder()
            .no_proxy()
            .build()?
            .get(url)
            .send()
            .await
    }

    #[tokio::test]
    async fn eight_servers_listen_on_distinct_loopback_ports_until_shutdown() {
        let scenario = Scenario::load("demo").unwrap();
        let sim = Simulator::start(&scenario, SimOptions::default())
            .await
            .unwrap();
        let endpoints = sim.endpoints().clone();
        assert_eq!(endpoints.mesos.len(), 3);
        assert_eq!(endpoints.marathon.len(), 3);
        let mut all: BTreeSet<String> = endpoints.mesos.iter().cloned().collect();
        all.extend(endpoints.marathon.iter().cloned());
        all.insert(endpoints.aws_endpoint_url.clone());
        all.insert(endpoints.dcos_url.clone());
        assert_eq!(all.len(), 8, "{endpoints:?}");
        for url in &all {
            assert!(url.starts_with("http://127.0.0.1:"), "{url}");
        }
        assert_eq!(sim.mesos_peers().urls(), endpoints.mesos.as_slice());
        assert_eq!(sim.marathon_peers().urls(), endpoints.marathon.as_slice());

        let answer = get(&format!("{}/report", endpoints.control()))
            .await
            .unwrap();
        assert_eq!(answer.status(), 200);
        let report: serde_json::Value = answer.json().await.unwrap();
        assert_eq!(report["final_state"]["desired_capacity"], 12);

        sim.shutdown().await;
        for url in &all {
            assert!(get(url).await.is_err(), "{url} still answers");
        }
    }

    #[tokio::test]
    async fn a_scenarios_api_faults_are_in_force_from_the_start() {
        let mut scenario = Scenario::load("demo").unwrap();
        scenario.api_faults.marathon.error_rate = 1.0;
        let sim = Simulator::start(&scenario, SimOptions::default())
            .await
            .unwrap();
        let answer = get(&format!("{}/v2/apps", sim.endpoints().marathon[0]))
            .await
            .unwrap();
        assert_eq!(answer.status(), 503);
        let faults: serde_json::Value = get(&format!("{}/faults", sim.endpoints().control()))
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(faults["api"]["marathon"]["error_rate"], 1.0);
        sim.shutdown().await;
    }
}
