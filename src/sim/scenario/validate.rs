//! A scenario's checks beyond its syntax: sizes within bounds, versions
//! the template has, apps that fit on an agent, faults naming what exists.
//! Each refusal names the field.

use std::collections::BTreeSet;

use super::app::HEALTH_PROTOCOLS;
use super::group::{PROCESSES, resolve_template_version};
use super::{Scenario, ScenarioError};

impl Scenario {
    pub(super) fn validate(&self, origin: &str) -> Result<(), ScenarioError> {
        let invalid = |field: String, message: String| ScenarioError::Invalid {
            origin: origin.to_string(),
            field,
            message,
        };
        self.api_faults
            .check()
            .map_err(|message| match message.split_once(": ") {
                Some((field, why)) => invalid(format!("api_faults.{field}"), why.to_string()),
                None => invalid("api_faults".to_string(), message),
            })?;
        let t = &self.timings;
        let durations = [
            ("instance_boot_s", t.instance_boot_s),
            ("agent_register_s", t.agent_register_s),
            ("instance_terminate_s", t.instance_terminate_s),
            ("launch_retry_s", t.launch_retry_s),
            ("az_rebalance_delay_s", t.az_rebalance_delay_s),
            ("agent_ping_timeout_s", t.agent_ping_timeout_s),
            ("unreachable_relaunch_s", t.unreachable_relaunch_s),
            ("offer_interval_s", t.offer_interval_s),
            ("task_kill_s", t.task_kill_s),
            ("marathon_draining_s", t.marathon_draining_s),
        ];
        for (name, value) in durations {
            if !value.is_finite() || value < 0.0 {
                return Err(invalid(
                    format!("timings.{name}"),
                    format!("must be a non-negative number of seconds, got {value}"),
                ));
            }
        }
        if t.offer_interval_s <= 0.0 || t.launch_retry_s <= 0.0 {
            return Err(invalid(
                "timings.offer_interval_s/launch_retry_s".into(),
                "must be more than 0 (they are retry periods)".into(),
            ));
        }
        if !(0.0..1.0).contains(&t.jitter) {
            return Err(invalid(
                "timings.jitter".into(),
                format!("must be a fraction in [0, 1), got {}", t.jitter),
            ));
        }

        let g = &self.group;
        if g.name.is_empty() {
            return Err(invalid("group.name".into(), "must not be empty".into()));
        }
        if g.min_size > g.max_size {
            return Err(invalid(
                "group.min_size".into(),
                format!("{} is above max_size {}", g.min_size, g.max_size),
            ));
        }
        if g.desired_capacity < g.min_size || g.desired_capacity > g.max_size {
            return Err(invalid(
                "group.desired_capacity".into(),
                format!(
                    "{} is outside [min_size {}, max_size {}]",
                    g.desired_capacity, g.min_size, g.max_size
                ),
            ));
        }
        if g.desired_capacity.saturating_add(g.standby) > g.max_size {
            return Err(invalid(
                "group.standby".into(),
                format!(
                    "{} in Standby besides desired_capacity {} is above max_size {}",
                    g.standby, g.desired_capacity, g.max_size
                ),
            ));
        }
        let azs: BTreeSet<&String> = g.availability_zones.iter().collect();
        if g.availability_zones.is_empty() || azs.len() != g.availability_zones.len() {
            return Err(invalid(
                "group.availability_zones".into(),
                "must list at least one zone, each once".into(),
            ));
        }
        for p in &g.suspended_processes {
            if !PROCESSES.contains(&p.as_str()) {
                return Err(invalid(
                    "group.suspended_processes".into(),
                    format!("unknown process {p:?}; expected one of {PROCESSES:?}"),
                ));
            }
        }

        let lt = &g.launch_template;
        let (latest, default) = (lt.latest(), lt.default_number());
        if latest == 0 {
            return Err(invalid(
                "group.launch_template.latest_version".into(),
                "must be at least 1".into(),
            ));
        }
        if !(1..=latest).contains(&default) {
            return Err(invalid(
                "group.launch_template.default_version".into(),
                format!("{default} is not a version of the template (1 to {latest})"),
            ));
        }
        if resolve_template_version(&lt.version, latest, default).is_none() {
            return Err(invalid(
                "group.launch_template.version".into(),
                format!(
                    "{:?} is not a version of the template: expected 1 to {latest}, $Latest or $Default",
                    lt.version
                ),
            ));
        }

        let a = &self.agent;
        for (name, value) in [("cpus", a.cpus), ("mem", a.mem), ("disk", a.disk)] {
            if !value.is_finite() || value <= 0.0 {
                return Err(invalid(
                    format!("agent.{name}"),
                    format!("must be more than 0, got {value}"),
                ));
            }
        }

        let mut ids = BTreeSet::new();
        for (i, app) in self.apps.iter().enumerate() {
            let field = |name: &str| format!("apps[{i}] ({}).{name}", app.id);
            if !app.id.starts_with('/') || app.id.len() < 2 || app.id.ends_with('/') {
                return Err(invalid(
                    field("id"),
                    "must be an absolute app id like \"/team/service\"".into(),
                ));
            }
            if app.count == 0 {
                return Err(invalid(field("count"), "must be at least 1".into()));
            }
            if app.count > 1 && !app.id.contains("{n}") {
                return Err(invalid(
                    field("id"),
                    format!("count is {} so the id must hold {{n}}", app.count),
                ));
            }
            for (name, value) in [("cpus", app.cpus), ("mem", app.mem)] {
                if !value.is_finite() || value <= 0.0 {
                    return Err(invalid(
                        field(name),
                        format!("must be more than 0, got {value}"),
                    ));
                }
                let shape = if name == "cpus" { a.cpus } else { a.mem };
                if value > shape {
                    return Err(invalid(
                        field(name),
                        format!("{value} does not fit on an agent (agent.{name} = {shape})"),
                    ));
                }
            }
            for (name, value) in [
                ("task_start_s", app.task_start_s),
                ("ready_after_s", app.ready_after_s),
                ("backoff_s", app.backoff_s),
                ("max_launch_delay_s", app.max_launch_delay_s),
            ] {
                if !value.is_finite() || value < 0.0 {
                    return Err(invalid(
                        field(name),
                        format!("must be a non-negative number of seconds, got {value}"),
                    ));
                }
            }
            for (name, value) in [
                ("min_health_capacity", app.min_health_capacity),
                ("max_over_capacity", app.max_over_capacity),
            ] {
                if !(0.0..=1.0).contains(&value) {
                    return Err(invalid(
                        field(name),
                        format!("must be between 0 and 1, got {value}"),
                    ));
                }
            }
            if !app.backoff_factor.is_finite() || app.backoff_factor < 1.0 {
                return Err(invalid(
                    field("backoff_factor"),
                    format!("must be at least 1, got {}", app.backoff_factor),
                ));
            }
            for c in &app.constraints {
                if !(c.len() == 2 && c[0] == "hostname" && c[1] == "UNIQUE") {
                    return Err(invalid(
                        field("constraints"),
                        format!("{c:?} is not simulated; only [\"hostname\", \"UNIQUE\"] is"),
                    ));
                }
            }
            if app.colocate && app.unique_hostname() && app.instances > 1 {
                return Err(invalid(
                    field("colocate"),
                    "contradicts the [\"hostname\", \"UNIQUE\"] constraint".into(),
                ));
            }
            if app.colocate
                && (app.cpus * f64::from(app.instances) > a.cpus
                    || app.mem * f64::from(app.instances) > a.mem)
            {
                return Err(invalid(
                    field("colocate"),
                    format!("{} tasks do not fit on one agent", app.instances),
                ));
            }
            if let Some(hc) = &app.health_check {
                if !HEALTH_PROTOCOLS.contains(&hc.protocol.as_str()) {
                    return Err(invalid(
                        field("health_check.protocol"),
                        format!(
                            "unknown protocol {:?}; expected one of {HEALTH_PROTOCOLS:?}",
                            hc.protocol
                        ),
                    ));
                }
                if !hc.interval_s.is_finite() || hc.interval_s <= 0.0 {
                    return Err(invalid(
                        field("health_check.interval_s"),
                        format!("must be more than 0, got {}", hc.interval_s),
                    ));
                }
                if !hc.grace_period_s.is_finite() || hc.grace_period_s < 0.0 {
                    return Err(invalid(
                        field("health_check.grace_period_s"),
                        format!("must be non-negative, got {}", hc.grace_period_s),
                    ));
                }
                if hc.max_consecutive_failures == 0 {
                    return Err(invalid(
                        field("health_check.max_consecutive_failures"),
                        "must be at least 1".into(),
                    ));
                }
            }
        }
        for app in self.expanded_apps() {
            if !ids.insert(app.id.clone()) {
                return Err(invalid(
                    "apps".into(),
                    format!("app id {} appears more than once", app.id),
                ));
            }
        }
        for id in &self.faults.never_healthy_apps {
            if !ids.contains(id) {
                return Err(invalid(
                    "faults.never_healthy_apps".into(),
                    format!("{id} is not an app of this scenario"),
                ));
            }
        }
        for id in &self.faults.failing_health_checks {
            let field = || "faults.failing_health_checks".to_string();
            match self.expanded_apps().into_iter().find(|app| app.id == *id) {
                None => {
                    return Err(invalid(
                        field(),
                        format!("{id} is not an app of this scenario"),
                    ));
                }
                Some(app) if app.spec.health_check.is_none() => {
                    return Err(invalid(
                        field(),
                        format!("{id} has no health check, so its tasks cannot fail one"),
                    ));
                }
                Some(_) => {}
            }
        }
        self.faults
            .check_bad_images(latest)
            .map_err(|message| invalid("faults.bad_image".into(), message))?;
        Ok(())
    }
}
