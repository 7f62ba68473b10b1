//! `roller demo`: its flags checked (a built-in scenario, a time scale
//! that is a finite number above zero) and turned into the demo's
//! settings, and its help. Each end of the demo gets the exit code `roller
//! run` gives the same outcome (`error.rs`).

use std::io::Write;

use super::DemoArgs;
use super::error::CliError;
use crate::demo::{DemoError, DemoSettings};

pub(super) const HELP: &str = "\
Scenarios (--scenario; `roller sim --scenario NAME` serves the same cluster for
a `roller run` of your own). Each roll is the one `roller run` would make, with
its default flags, and ends as that one would:
  demo-cluster  the default: a cluster of two groups, demo's 12 private agents
                (with a DC/OS SDK service, hello-world: its scheduler and 2
                pods) and 3 public agents (slave_public) running the edge load
                balancer, rolled by one plan (every group locked, then each
                group's agents replaced in turn, then every group finished):
                exit 0, public tasks only ever on public agents, the pods
                replaced through the service's API one at a time
  demo          12 agents over 3 AZs, 10 apps (health checks, none, UNIQUE, a
                single instance): every agent replaced without an outage (exit
                0), in a few seconds
  msr-55        55 agents over 3 AZs, 200 apps with a realistic mix, the size of
                the Mesos Slave Roller write-up's cluster: completes (exit 0) in
                a few seconds more
  hazards       6 agents: an app on one agent, a single-instance app, and an app
                whose relaunched tasks never get healthy: the failure watch sees
                its health check fail on a new agent and the roll rolls back
                (exit 5)
  big           1,000 agents, 1,000 apps, 10,000 tasks, the scale test: too much
                for 300x in a debug build (`cargo run`), where a wait runs out
                and the roll pauses (exit 3); at --time-scale 20 it completes in
                some eight minutes
  huge          2,000 agents, 5,000 apps, 17,600 tasks, the scale goal: for
                a bench-profile build (`scripts/bench-roll huge`); in a debug
                build use a low --time-scale, as for big
  bad-image     6 agents; the group is first pointed at its newest launch
                template version, a bad image: the failure watch sees the new
                agents' tasks fail and the roll rolls back (exit 5)
  bad-image-mixed  bad-image on a mixed instances policy (3 instance
                types, 2 on-demand then half Spot): rolled back (exit 5) to the
                very policy the group had, never a plain template
  production    6 agents on a mixed instances policy with Spot, a termination
                hook roller completes, a log shipper's it waits for (5 min), a
                launch hook, one instance in Standby (taken out and replaced)
                and one protected from scale-in (replaced): exit 0
  cluster       msr-55's private group plus a group of 5 public agents
                (slave_public) running the edge load balancer: both rolled by
                one plan (exit 0)
  dcos          msr-55 plus two DC/OS SDK services (hello-world, 3 pods;
                kafka, 5 brokers) whose schedulers are single-instance apps
                (Marathon refuses them a second instance), a leader whose
                upgradeStrategy is 0/0 and a job framework's runs: schedulers
                and leader moved by kill and relaunch, never surged, their gap
                reported; each pod replaced through its service's API, one pod
                of a service at a time (exit 0)

Time scale (--time-scale K, simulated seconds per real second, default 300,
from 0.01 to 10000): the cluster settles for 5 simulated minutes before the
roll, and every wait of the roll runs at the same scale. To watch the live view
at a pace a person can follow, use 10 to 30: `roller demo --time-scale 10` takes
about a minute (the settle 30 s of it), 30 some twenty seconds. At 1 it runs in
real time (some ten minutes). Ctrl-C stops the roll at its next tick and exits
130 (a second Ctrl-C at once).

Exit codes, as `roller run` gives them for the same end:
  0    the plan is COMPLETE and no app had an outage
  1    failed: an app had an outage, or the demo could not run (e.g. a port)
  2    refused: an unknown scenario, a bad --time-scale or --listen
  3    paused (a wait ran out) or held (an operator's interrupt through
       --listen)
  5    rolled back after a failure on the new agents (`bad-image`,
       `bad-image-mixed`, `hazards`)
  130  interrupted (Ctrl-C)
The simulated cluster ends with the demo: there is nothing to resume.";

/// `--scenario`: one of the scenarios built into the binary.
pub(super) fn scenario_names() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(crate::sim::scenario::builtin_names())
}

pub(super) fn run(args: DemoArgs, view: bool, out: &mut dyn Write) -> Result<(), CliError> {
    let settings = DemoSettings {
        scenario: args.scenario,
        time_scale: args.time_scale,
        view,
        api: super::listen::settings(args.listen)?,
    };
    crate::demo::run(settings, out).map_err(|err| match err {
        DemoError::Output(err) => CliError::Output(err),
        DemoError::Api(err) => CliError::Api(err),
        err => CliError::Demo(err),
    })
}
