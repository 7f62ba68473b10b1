//! `roller run`'s arguments as typed (clap's view): converted once into
//! the environment and the request by `run_command`.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::Args;

use super::TargetArg;
use super::target_arg::parse_target;

#[derive(Debug, Args)]
pub(crate) struct RunArgs {
    /// The environment file (TOML; see examples/roller.env.toml).
    #[arg(long, value_name = "ENV.toml")]
    pub(crate) env: PathBuf,
    /// The number of agents the cluster must have when done (at least 1;
    /// with the K instances replaced, N + K at most 100000). Required for a
    /// new roll; a resume may omit it (a different one is refused). For an
    /// environment with [[group]] tables: NAME=N sets group NAME's target
    /// (over its `target` in the file); repeat it for each group.
    #[arg(long, value_name = "N|NAME=N", value_parser = parse_target)]
    pub(crate) target: Vec<TargetArg>,
    /// Which instances to replace: all, outdated (launch template version
    /// or configuration differs from the ASG's), older-than=AGE (14d, 36h).
    /// Default: all.
    #[arg(long, value_name = "WHICH")]
    pub(crate) select: Option<String>,
    /// Print the plan that would run; change and write nothing.
    #[arg(long)]
    pub(crate) dry_run: bool,
    /// Print on stdout one JSON object a line: each state change as it
    /// happens ({"type": "step"|"event"|"phase"|"plan", "at", …}), then a
    /// last {"type": "result", "outcome", "exit_code", "message", "plan"}.
    /// With --dry-run: {"plan", "notes"}. The log still goes to stderr.
    #[arg(long)]
    pub(crate) json: bool,
    /// The checkpoint file (default: <checkpoint_dir>/<asg>.json).
    #[arg(long, value_name = "PATH")]
    pub(crate) checkpoint: Option<PathBuf>,
    /// How old agents are emptied. drain (default): after scale-up one
    /// Mesos maintenance window covers every old agent, so every task
    /// relaunches on a new agent, moving once; all old agents drain
    /// together in waves that keep each app at its floor, and each agent
    /// is put down and terminated as soon as it is empty. serial: one
    /// agent after another (move its tasks, terminate, wait for Marathon
    /// to be healthy), the original write-up's loop made safe; about ten
    /// times slower.
    #[arg(long, value_name = "drain|serial")]
    pub(crate) strategy: Option<String>,
    /// Drain: at most this many old agents per AZ are being put down at
    /// once: terminations sent whose instance is still in service or
    /// held by a termination lifecycle hook (only empty agents are ever
    /// terminated; EC2 shutting one down past that no longer counts).
    /// Default: a tenth of the old agents of the largest AZ, at least 5.
    #[arg(long, value_name = "N")]
    pub(crate) max_unavailable: Option<u32>,
    /// At most this many instances above each group's size at any time,
    /// pending or in service: N instances, or P% of the group's size
    /// (rounded up). Below the number of instances to replace, the drain
    /// goes in batches: launch N, move the tasks of N old agents onto
    /// them (each task still moves once: every old agent is under
    /// maintenance from the first batch), terminate those, launch the
    /// next N. Default: the group's instance maintenance policy
    /// (MaxHealthyPercentage - 100), else every new instance at once.
    /// Drain only. Env file key `max_surge`.
    #[arg(long, value_name = "N|P%")]
    pub(crate) max_surge: Option<String>,
    /// Serial: replace the first N instances (at least 1) as canaries,
    /// each waiting for `roller plan continue --file <checkpoint> --phase
    /// replace`. Drain: replace N instances alone first, then wait for
    /// `roller plan continue --file <checkpoint> --phase drain`.
    #[arg(long, value_name = "N")]
    pub(crate) canary: Option<u32>,
    /// Raise MaxSize to N + K when it is lower (restored at finish).
    #[arg(long)]
    pub(crate) raise_max: bool,
    /// Resume AZRebalance at finish even when the AZs are uneven (it will
    /// then terminate agents to rebalance, without draining them).
    #[arg(long)]
    pub(crate) resume_az_rebalance: bool,
    /// An app allowed to be unhealthy when the roll starts (repeatable).
    #[arg(long, value_name = "APP")]
    pub(crate) allow_unhealthy: Vec<String>,
    /// How many healthy tasks each app keeps while its tasks move.
    /// capacity (default): ceil(instances x
    /// upgradeStrategy.minimumHealthCapacity), at least one, as Marathon
    /// keeps it during a deployment (its default capacity 1 means a
    /// replacement starts, and is healthy, before the old task is
    /// killed). one: a single healthy task per app, fewer surges, apps
    /// below their own floor meanwhile. Fixed for the roll when it starts.
    #[arg(long, value_name = "capacity|one")]
    pub(crate) min_healthy: Option<String>,
    /// The same as --min-healthy capacity, the default now; still
    /// accepted so that scripts passing it keep working.
    #[arg(long, conflicts_with = "min_healthy")]
    pub(crate) honor_min_health: bool,
    /// What a failure on the new agents leads to. Through every wave,
    /// surge and replacement the roll watches what it placed on new
    /// agents (a task failed, or killed by a failing health check; a
    /// health check failing; a launch delay; a new instance in service
    /// whose Mesos agent has not registered 10 minutes into the scale-up,
    /// or half timeouts.scale_up if shorter, or the group's launches still
    /// failing then). The first such failure of
    /// an app not --allow-unhealthy stops every kill, surge and
    /// termination at once, and then: rollback (default): a `rollback`
    /// phase moves every task back to the old agents within their
    /// floors, terminates the new instances down to the original size,
    /// restores the group (size, MaxSize, processes, tags, launch
    /// template) and pages; the run exits 5. pause: pause and page with
    /// the evidence (exit 3); resume with --acknowledge-failure to go on,
    /// or --on-failure rollback to roll back. A resume may change it.
    #[arg(long, value_name = "rollback|pause")]
    pub(crate) on_failure: Option<String>,
    /// How many distinct apps, or distinct new agents, may fail on the
    /// new image before the roll counts it as bad and --on-failure acts
    /// (as Argo Rollouts' failureLimit). 0 (default): the first failure.
    /// Each failure within the limit is logged and recorded as tolerated,
    /// and counts for the rest of the roll; what counts is the larger of
    /// the apps and the new agents that failed. For large fleets where
    /// one flaky app or host must not roll a good image back. A resume
    /// may change it. Env file key `failure_limit`.
    #[arg(long, value_name = "N")]
    pub(crate) failure_limit: Option<u32>,
    /// A CloudWatch alarm (its name; repeat the flag for more) whose ALARM
    /// state counts as a failure on the new image, with the alarm's reason
    /// as evidence, for what Marathon's task states cannot see (latency,
    /// error rates). Read with DescribeAlarms each tick while the watch
    /// runs: from the first new agent through the bake, every wave and
    /// every termination, so before each of them. An alarm in ALARM acts
    /// as any failure: --on-failure rollback (default) rolls back, also
    /// after the bake while old agents remain; pause pauses and pages. It
    /// is always decisive (--failure-limit does not count it: an alarm is
    /// already an aggregate). The preflight refuses names CloudWatch does
    /// not know, and an alarm already in ALARM (a roll cannot tell it from
    /// its own regression). A resume may change them. Env file key
    /// `alarms`.
    #[arg(long = "alarm", value_name = "NAME")]
    pub(crate) alarms: Vec<String>,
    /// How long the first moves onto the new agents must stay up before
    /// any old agent is terminated or the next drain wave starts (the
    /// drain's first wave moves only a sample: one task each of a tenth
    /// of the apps, apps with health checks first; the serial roll's
    /// first replacement). Default: twice the longest health-check
    /// interval of the apps moved, at least 60s; `0s` turns it off. Env
    /// file key `bake`.
    #[arg(long, value_name = "DURATION")]
    pub(crate) bake: Option<String>,
    /// Resume past the failure the roll paused on (--on-failure pause):
    /// it is acknowledged and logged, and the failure watch leaves its app
    /// alone for the rest of the roll (its other tasks may have failed
    /// the same way before you healed it). The app's health waits still
    /// count it; --allow-unhealthy lets an app be unhealthy.
    #[arg(long)]
    pub(crate) acknowledge_failure: bool,
    /// Leave instances that are not InService (Standby, Pending,
    /// lifecycle-hook waits) out of the roll instead of refusing to start.
    #[arg(long)]
    pub(crate) skip_not_in_service: bool,
    /// What to do with instances in Standby (Instance Refresh's
    /// meanings). wait (default): the roll waits up to
    /// `timeouts.operator` (1h) for you to put them back in service, then
    /// replaces them; past that it pauses and pages. terminate: roller
    /// takes them out of Standby itself and drains and replaces them as any
    /// old agent. ignore: they stay in Standby on the old image, named in
    /// the notes. `--dry-run` shows which. Env file key `standby`.
    #[arg(long, value_name = "wait|terminate|ignore")]
    pub(crate) standby: Option<String>,
    /// What to do with instances protected from scale-in. replace
    /// (default): drained and replaced as any other (protection guards
    /// against the group's own scale-in, which kills without draining;
    /// Instance Refresh calls it Refresh). ignore: left on the old image,
    /// named in the notes. wait: the roll waits up to `timeouts.operator`
    /// (1h) for you to lift the protection, then replaces them; past that
    /// it pauses and pages. `--dry-run` shows which. Env file key
    /// `protected`.
    #[arg(long, value_name = "replace|ignore|wait")]
    pub(crate) protected: Option<String>,
    /// Overrides the env file's `asg`.
    #[arg(long, value_name = "NAME")]
    pub(crate) asg: Option<String>,
    /// Overrides the env file's `region`.
    #[arg(long, value_name = "REGION")]
    pub(crate) region: Option<String>,
    /// Overrides the env file's `mesos` (comma-separated URLs).
    #[arg(long, value_name = "URL[,URL...]")]
    pub(crate) mesos: Option<String>,
    /// Overrides the env file's `marathon` (comma-separated URLs).
    #[arg(long, value_name = "URL[,URL...]")]
    pub(crate) marathon: Option<String>,
    /// Overrides the env file's `checkpoint_dir`.
    #[arg(long, value_name = "DIR")]
    pub(crate) checkpoint_dir: Option<PathBuf>,
    /// Serve the plan API (/v1/plans) and /metrics on IP:PORT while the
    /// roll runs; loopback unless ROLLER_API_TOKEN(_FILE) is set (--help).
    #[arg(long, value_name = "IP:PORT", long_help = LISTEN_HELP)]
    pub(crate) listen: Option<SocketAddr>,
}

const LISTEN_HELP: &str = "\
While the roll runs, serve the DC/OS SDK plan API (GET /v1/plans, GET
/v1/plans/roll, POST /v1/plans/roll/<continue|interrupt|forceComplete|restart|
start|stop>?phase=&step=) and Prometheus metrics (GET /metrics) on IP:PORT,
e.g. 127.0.0.1:8080 (port 0: a free port; the address is printed on stderr).
`roller plan ... --url http://IP:PORT` is its client. Operations are applied by
the run at its next tick, logged with the caller's address, as `roller plan
--file` ones are. Anyone who can reach IP:PORT may call it, so a non-loopback
address is refused unless ROLLER_API_TOKEN or ROLLER_API_TOKEN_FILE sets a
token; with a token, every request must send `Authorization: Bearer <token>`.";
