//! A scenario's job runs of a framework other than Marathon (a
//! Metronome-like job scheduler): each starts at a given time on an agent
//! with room, uses its resources, and ends by itself after a while, unless
//! Mesos kills it first (DRAIN_AGENT, its agent lost).

use serde::Deserialize;

/// One run of a job (`[[jobs]]`).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct JobSpec {
    /// The name its framework registered with Mesos (`metronome`).
    #[serde(default = "metronome")]
    pub(crate) framework: String,
    /// The job's id, e.g. `nightly-backup`.
    pub(crate) id: String,
    #[serde(default = "one")]
    pub(crate) cpus: f64,
    /// MB.
    #[serde(default = "default_mem")]
    pub(crate) mem: f64,
    /// When the run starts, in simulated seconds after the world starts
    /// (the cluster settles 5 minutes before a demo's roll).
    #[serde(default)]
    pub(crate) start_s: f64,
    /// How long it runs before it finishes by itself (TASK_FINISHED).
    pub(crate) duration_s: f64,
    /// The kill grace period its task asked for (`KillPolicy`); Mesos'
    /// default is 3 s (`DEFAULT_EXECUTOR_SHUTDOWN_GRACE_PERIOD` gives the
    /// executor 5).
    #[serde(default = "default_grace_s")]
    pub(crate) grace_s: f64,
}

fn metronome() -> String {
    "metronome".to_string()
}

fn one() -> f64 {
    1.0
}

fn default_mem() -> f64 {
    128.0
}

fn default_grace_s() -> f64 {
    3.0
}

impl JobSpec {
    /// Why the run cannot be simulated, naming the field.
    pub(crate) fn invalid(&self) -> Option<(&'static str, String)> {
        if self.framework.trim().is_empty() || self.framework == "marathon" {
            return Some((
                "framework",
                format!(
                    "must name a framework other than Marathon, got {:?}",
                    self.framework
                ),
            ));
        }
        if self.id.trim().is_empty() {
            return Some(("id", "must not be empty".to_string()));
        }
        for (name, value, positive) in [
            ("cpus", self.cpus, true),
            ("mem", self.mem, true),
            ("start_s", self.start_s, false),
            ("duration_s", self.duration_s, true),
            ("grace_s", self.grace_s, false),
        ] {
            let bad = !value.is_finite() || value < 0.0 || (positive && value == 0.0);
            if bad {
                let what = if positive { "above 0" } else { "at least 0" };
                return Some((name, format!("must be a number {what}, got {value}")));
            }
        }
        None
    }
}

impl super::Scenario {
    /// What a job needs of the cluster: each (framework, job id) once,
    /// and a run fitting on some agent a job framework takes (an
    /// unreserved one: it registers with role `*`), else it would wait
    /// for room forever.
    pub(super) fn check_jobs(&self) -> Result<(), (String, String)> {
        let mut seen = std::collections::BTreeSet::new();
        let shapes: Vec<&super::AgentSpec> = self
            .groups()
            .filter(|g| g.role.is_none())
            .map(|g| self.agent_of(g))
            .collect();
        for (i, job) in self.jobs.iter().enumerate() {
            let field = |name: &str| format!("jobs[{i}].{name}");
            if !seen.insert((job.framework.as_str(), job.id.as_str())) {
                return Err((
                    field("id"),
                    format!(
                        "job {} of framework {} appears more than once; give one [[jobs]] \
                         table per job",
                        job.id, job.framework
                    ),
                ));
            }
            if !shapes
                .iter()
                .any(|a| job.cpus <= a.cpus && job.mem <= a.mem)
            {
                return Err((
                    field("cpus"),
                    format!(
                        "a run of {} cpus and {} MB fits on no unreserved agent (the job \
                         framework's role is \"*\")",
                        job.cpus, job.mem
                    ),
                ));
            }
        }
        Ok(())
    }
}
