//! `roller sim`: serve a scenario's simulated cluster on loopback, print
//! its endpoints (and, with `--write-env`, an environment file for the
//! roller pointing at it), say `READY`, serve until SIGINT or SIGTERM, then
//! print the monitor's report (and write it with `--report`).

use std::io::Write;
use std::path::Path;

use serde::Serialize;

use super::SimArgs;
use super::error::CliError;
use super::signals::StopSignals;
use crate::atomic_file;
use crate::sim::scenario::builtin_names;
use crate::sim::{Endpoints, Scenario, ScenarioError, SimOptions, Simulator};

/// Neither file holds a secret.
const FILE_MODE: u32 = 0o644;

pub(super) const HELP: &str = "\
Prints, one per line, then READY:
  AWS_ENDPOINT_URL=http://127.0.0.1:PORT   Auto Scaling + EC2 (any credentials)
  MESOS=URL,URL,URL                        three masters, the first leads
  MARATHON=URL,URL,URL                     three Marathons, the first leads
  SIM=http://127.0.0.1:PORT/sim            GET report, time, faults; POST faults

Serves until SIGINT or SIGTERM, then prints the monitor's report and exits 0.
Every time in the report is simulated. Binds 127.0.0.1 unless --bind says
otherwise: the simulator checks no credentials.

Exit codes:
  0    stopped by SIGINT/SIGTERM
  1    failed: cannot listen, or cannot write --write-env/--report
  2    refused: unknown scenario, malformed scenario file, bad flag";

/// `--time-scale`: a positive, finite number of simulated seconds per
/// real second.
pub(super) fn parse_time_scale(text: &str) -> Result<f64, String> {
    let scale: f64 = text
        .parse()
        .map_err(|_| format!("'{text}' is not a number"))?;
    if scale.is_finite() && scale > 0.0 {
        Ok(scale)
    } else {
        Err(format!("'{text}' must be a positive number"))
    }
}

pub(super) fn run(args: &SimArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let scenario = load(&args.scenario)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(CliError::Runtime)?;
    runtime.block_on(serve(args, &scenario, out))
}

/// A built-in scenario by name, else a file; a name that is neither is
/// refused with the list of built-in ones.
fn load(name_or_path: &str) -> Result<Scenario, CliError> {
    match Scenario::load(name_or_path) {
        Err(ScenarioError::Read { source, .. })
            if source.kind() == std::io::ErrorKind::NotFound =>
        {
            Err(CliError::UnknownScenario {
                name: name_or_path.to_string(),
                builtin: builtin_names().join(", "),
            })
        }
        other => Ok(other?),
    }
}

async fn serve(args: &SimArgs, scenario: &Scenario, out: &mut dyn Write) -> Result<(), CliError> {
    // Listen for the signals before saying READY: a signal right after it
    // must stop the simulator cleanly, not kill the process.
    let mut stop = StopSignals::install().map_err(CliError::Signal)?;
    let options = SimOptions {
        time_scale: args.time_scale,
        seed: args.seed,
        bind: args.bind,
    };
    let sim = Simulator::start(scenario, options).await?;
    let endpoints = sim.endpoints().clone();
    writeln!(
        out,
        "# roller sim: scenario {} ({}), {} simulated s per real s",
        args.scenario,
        if scenario.description.is_empty() {
            "no description"
        } else {
            &scenario.description
        },
        args.time_scale
    )?;
    out.write_all(endpoint_lines(&endpoints, !scenario.services.is_empty()).as_bytes())?;
    if let Some(path) = &args.write_env {
        let text = env_file(args, scenario, &endpoints);
        atomic_file::replace(path, text.as_bytes(), FILE_MODE).map_err(|source| {
            CliError::WriteEnv {
                path: path.clone(),
                source,
            }
        })?;
    }
    writeln!(out, "READY")?;
    out.flush()?;

    stop.wait().await;
    let report = sim.report();
    sim.shutdown().await;
    if let Some(path) = &args.report {
        write_report(path, &report)?;
    }
    out.write_all(report.summary().as_bytes())?;
    Ok(())
}

/// The endpoints, one `KEY=value` line each; `DCOS` (the admin router
/// in front of the SDK services) only when the scenario has services.
fn endpoint_lines(endpoints: &Endpoints, services: bool) -> String {
    let dcos = if services {
        format!("DCOS={}\n", endpoints.dcos_url)
    } else {
        String::new()
    };
    format!(
        "AWS_ENDPOINT_URL={}\nMESOS={}\nMARATHON={}\n{dcos}SIM={}\n",
        endpoints.aws_endpoint_url,
        endpoints.mesos.join(","),
        endpoints.marathon.join(","),
        endpoints.control()
    )
}

/// The environment file `roller run` reads (see docs/reference.md, "The
/// environment file").
#[derive(Serialize)]
struct EnvFile<'a> {
    /// The group of a one-group scenario; a cluster's are `group`.
    #[serde(skip_serializing_if = "Option::is_none")]
    asg: Option<&'a str>,
    region: String,
    aws_endpoint_url: &'a str,
    mesos: &'a [String],
    marathon: &'a [String],
    /// The admin router in front of the scenario's DC/OS SDK services
    /// (`<dcos_url>/service/<name>/v1/...`), when it has any.
    #[serde(skip_serializing_if = "Option::is_none")]
    dcos_url: Option<&'a str>,
    /// How EC2 instances are matched to Mesos agents: the simulated agents'
    /// hostnames are their instances' private IPs.
    #[serde(rename = "match")]
    match_by: &'static str,
    /// Divides every roller wait, poll interval and timeout, so roller and
    /// simulator agree on simulated time.
    time_scale: f64,
    /// The scenario's `[roller]` settings.
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    complete_lifecycle_hooks: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    standby: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    protected: Option<&'a str>,
    /// A cluster's groups (`[[group]]`), each to its size in the
    /// scenario: `roller run --env` rolls them all in one plan.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    group: Vec<GroupTable<'a>>,
}

#[derive(Serialize)]
struct GroupTable<'a> {
    name: &'a str,
    target: u32,
}

fn env_file(args: &SimArgs, scenario: &Scenario, endpoints: &Endpoints) -> String {
    let cluster = !scenario.other_groups.is_empty();
    let env = EnvFile {
        asg: (!cluster).then_some(scenario.group.name.as_str()),
        group: if cluster {
            scenario
                .groups()
                .map(|g| GroupTable {
                    name: &g.name,
                    target: g.desired_capacity,
                })
                .collect()
        } else {
            Vec::new()
        },
        region: region(&scenario.group.availability_zones),
        aws_endpoint_url: &endpoints.aws_endpoint_url,
        mesos: &endpoints.mesos,
        marathon: &endpoints.marathon,
        dcos_url: (!scenario.services.is_empty()).then_some(endpoints.dcos_url.as_str()),
        match_by: "ip",
        time_scale: args.time_scale,
        complete_lifecycle_hooks: &scenario.roller.complete_lifecycle_hooks,
        standby: scenario.roller.standby.as_deref(),
        protected: scenario.roller.protected.as_deref(),
    };
    let body = toml::to_string(&env).unwrap_or_default();
    format!(
        "# The roller's environment for the simulated cluster of `roller sim --scenario {}`,\n\
         # valid while that simulator runs.\n\
         # Credentials are dummies: the simulator checks no signature, so any\n\
         # AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY will do (e.g. both \"simulated\"),\n\
         # and its Mesos masters, Marathons and admin router ask for none.\n{body}",
        args.scenario
    )
}

/// The region of the scenario's AZs (`us-east-1a` -> `us-east-1`).
fn region(zones: &[String]) -> String {
    zones
        .first()
        .map(|zone| zone.trim_end_matches(|c: char| c.is_ascii_lowercase()))
        .filter(|region| !region.is_empty() && region.ends_with(|c: char| c.is_ascii_digit()))
        .unwrap_or("us-east-1")
        .to_string()
}

fn write_report(path: &Path, report: &crate::sim::Report) -> Result<(), CliError> {
    let mut json = serde_json::to_vec_pretty(report).unwrap_or_default();
    json.push(b'\n');
    atomic_file::replace(path, &json, FILE_MODE).map_err(|source| CliError::WriteReport {
        path: path.to_path_buf(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_region_is_the_azs_without_their_letter() {
        assert_eq!(region(&["eu-west-1b".to_string()]), "eu-west-1");
        assert_eq!(region(&["us-east-1a".to_string()]), "us-east-1");
        assert_eq!(region(&["odd".to_string()]), "us-east-1");
        assert_eq!(region(&[]), "us-east-1");
    }

    #[test]
    fn a_time_scale_must_be_a_positive_number() {
        assert_eq!(parse_time_scale("60"), Ok(60.0));
        assert!(parse_time_scale("0").is_err());
        assert!(parse_time_scale("-3").is_err());
        assert!(parse_time_scale("inf").is_err());
        assert!(parse_time_scale("fast").is_err());
    }

    use crate::roll::record::env::GroupSpec;

    /// `--write-env` and `roller run --env` must agree on every key name:
    /// the file is read back through the roller's own parser.
    #[test]
    fn the_environment_file_it_writes_is_one_roller_run_accepts() {
        use crate::roll::ports::auto_scaling::AgentMatch;
        use crate::roll::record::env::Environment;

        let args = SimArgs {
            scenario: "demo".to_string(),
            time_scale: 60.0,
            seed: None,
            write_env: None,
            report: None,
            bind: std::net::IpAddr::from([127, 0, 0, 1]),
        };
        let scenario = Scenario::builtin("demo")
            .expect("demo is built in")
            .expect("demo parses");
        let port = |p: u16| format!("http://127.0.0.1:{p}");
        let endpoints = Endpoints {
            aws_endpoint_url: port(40000),
            mesos: vec![port(40001), port(40002), port(40003)],
            marathon: vec![port(40004), port(40005), port(40006)],
            dcos_url: port(40007),
        };
        let text = env_file(&args, &scenario, &endpoints);

        let env = Environment::resolve(Some((Path::new("sim.env.toml"), &text)), &|_| None, &[])
            .unwrap_or_else(|err| panic!("{err}\n{text}"));
        assert_eq!(env.asg(), scenario.group.name);
        assert_eq!(
            env.region.as_deref(),
            Some(region(&scenario.group.availability_zones).as_str())
        );
        assert_eq!(
            env.aws_endpoint_url.as_deref(),
            Some(endpoints.aws_endpoint_url.as_str())
        );
        assert_eq!(env.mesos, endpoints.mesos);
        assert_eq!(env.marathon, endpoints.marathon);
        assert_eq!(env.dcos_url, None, "demo has no SDK service");
        assert_eq!(env.agent_match, AgentMatch::PrivateIp);
        assert_eq!(env.time_scale, 60.0);
        assert_eq!(env.groups, vec![GroupSpec::named(&scenario.group.name)]);
    }

    /// A cluster scenario's file lists every group as a `[[group]]` table
    /// with its size as its target: `roller run --env` rolls the whole
    /// cluster in one plan, with no `--target`.
    #[test]
    fn a_cluster_scenarios_environment_lists_every_group_with_its_size() {
        use crate::roll::record::env::Environment;

        let args = SimArgs {
            scenario: "demo-cluster".to_string(),
            time_scale: 60.0,
            seed: None,
            write_env: None,
            report: None,
            bind: std::net::IpAddr::from([127, 0, 0, 1]),
        };
        let scenario = Scenario::builtin("demo-cluster")
            .expect("built in")
            .expect("parses");
        let endpoints = Endpoints {
            aws_endpoint_url: "http://127.0.0.1:40000".to_string(),
            mesos: vec!["http://127.0.0.1:40001".to_string()],
            marathon: vec!["http://127.0.0.1:40002".to_string()],
            dcos_url: "http://127.0.0.1:40003".to_string(),
        };
        let text = env_file(&args, &scenario, &endpoints);
        assert!(!text.contains("\nasg ="), "{text}");
        let env = Environment::resolve(Some((Path::new("sim.env.toml"), &text)), &|_| None, &[])
            .unwrap_or_else(|err| panic!("{err}\n{text}"));
        let want: Vec<GroupSpec> = scenario
            .groups()
            .map(|g| GroupSpec {
                asg: g.name.clone(),
                target: Some(g.desired_capacity),
                select: None,
                complete_lifecycle_hooks: Vec::new(),
            })
            .collect();
        assert_eq!(env.groups, want);
        assert_eq!(
            env.groups.iter().map(|g| g.target).collect::<Vec<_>>(),
            [Some(12), Some(3)]
        );
        assert_eq!(env.mesos, endpoints.mesos);
        // demo-cluster runs hello-world: its pods are replaced through the
        // admin router.
        assert_eq!(env.dcos_url.as_deref(), Some(endpoints.dcos_url.as_str()));
        assert!(endpoint_lines(&endpoints, true).contains("\nDCOS=http://127.0.0.1:40003\n"));
        assert!(!endpoint_lines(&endpoints, false).contains("DCOS="));
    }
}
