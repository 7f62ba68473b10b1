//! A scenario's checks beyond its syntax: sizes within bounds, versions
//! the templates have, group names once and one reserved role at most,
//! apps that fit on an agent of a role they accept, faults naming what
//! exists. Each refusal names the field.

use std::collections::BTreeSet;

use super::app::{AppSpec, HEALTH_PROTOCOLS};
use super::group::{AgentSpec, GroupSpec, PROCESSES, check_role, resolve_template_version};
use super::{Scenario, ScenarioError};

/// A refused field and why.
type Refusal = (String, String);

fn refuse(field: String, message: String) -> Refusal {
    (field, message)
}

impl Scenario {
    pub(super) fn validate(&self, origin: &str) -> Result<(), ScenarioError> {
        self.check()
            .map_err(|(field, message)| ScenarioError::Invalid {
                origin: origin.to_string(),
                field,
                message,
            })
    }

    /// `[roller]`'s policies are among the ones roller knows.
    fn check_roller(&self) -> Result<(), Refusal> {
        let policies: [(&str, Option<&String>, &[&str]); 2] = [
            (
                "standby",
                self.roller.standby.as_ref(),
                &["ignore", "wait", "terminate"],
            ),
            (
                "protected",
                self.roller.protected.as_ref(),
                &["replace", "ignore", "wait"],
            ),
        ];
        for (key, value, known) in policies {
            if let Some(value) = value.filter(|v| !known.contains(&v.as_str())) {
                return Err(refuse(
                    format!("roller.{key}"),
                    format!("'{value}' is not one of {}", known.join(", ")),
                ));
            }
        }
        Ok(())
    }

    /// Each alarm named once, in a state CloudWatch knows, going to ALARM
    /// (if it does) at a time that is a time.
    fn check_alarms(&self) -> Result<(), Refusal> {
        let mut names = BTreeSet::new();
        for (i, alarm) in self.alarms.iter().enumerate() {
            let field = |f: &str| format!("alarms[{i}].{f}");
            if alarm.name.is_empty() || alarm.name.len() > 255 {
                return Err(refuse(
                    field("name"),
                    "an alarm name is 1 to 255 characters".to_string(),
                ));
            }
            if !names.insert(alarm.name.as_str()) {
                return Err(refuse(
                    field("name"),
                    format!("alarm {} appears more than once", alarm.name),
                ));
            }
            if !crate::sim::world::ALARM_STATES.contains(&alarm.state.as_str()) {
                return Err(refuse(
                    field("state"),
                    format!(
                        "{} is not a state; one of {}",
                        alarm.state,
                        crate::sim::world::ALARM_STATES.join(", ")
                    ),
                ));
            }
            if alarm.alarm_at_s.is_some_and(|s| !s.is_finite() || s < 0.0) {
                return Err(refuse(
                    field("alarm_at_s"),
                    "seconds from the start, 0 or more".to_string(),
                ));
            }
        }
        Ok(())
    }

    fn check(&self) -> Result<(), Refusal> {
        self.api_faults
            .check()
            .map_err(|message| match message.split_once(": ") {
                Some((field, why)) => refuse(format!("api_faults.{field}"), why.to_string()),
                None => refuse("api_faults".to_string(), message),
            })?;
        self.check_timings()?;
        self.check_roller()?;
        self.check_alarms()?;
        for (i, job) in self.jobs.iter().enumerate() {
            if let Some((name, why)) = job.invalid() {
                return Err(refuse(format!("jobs[{i}].{name}"), why));
            }
        }
        check_agent("agent", &self.agent)?;
        let mut names = BTreeSet::new();
        // The first reserved role met, and its group.
        let mut role: Option<(&str, &str)> = None;
        for (i, g) in self.groups().enumerate() {
            let prefix = self.group_field(i, g);
            self.check_group(&prefix, g)?;
            if !names.insert(g.name.as_str()) {
                return Err(refuse(
                    format!("{prefix}.name"),
                    format!("group {} appears more than once", g.name),
                ));
            }
            if let Some(mine) = g.role.as_deref() {
                match role {
                    Some((other, theirs)) if other != mine => {
                        return Err(refuse(
                            format!("{prefix}.role"),
                            format!(
                                "Marathon registers with one role (--mesos_role): {mine:?} here, {other:?} in group {theirs}"
                            ),
                        ));
                    }
                    _ => role = Some((mine, g.name.as_str())),
                }
            }
        }
        for (i, app) in self.apps.iter().enumerate() {
            self.check_app(i, app)?;
        }
        self.check_jobs()?;
        self.check_services()?;
        self.check_faults()
    }

    /// How a group's fields are named in refusals: `group` for the one
    /// `[group]`, `groups[i] (name)` in `[[groups]]`.
    fn group_field(&self, i: usize, g: &GroupSpec) -> String {
        if self.groups_listed {
            format!("groups[{i}] ({})", g.name)
        } else {
            "group".to_string()
        }
    }

    fn check_timings(&self) -> Result<(), Refusal> {
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
                return Err(refuse(
                    format!("timings.{name}"),
                    format!("must be a non-negative number of seconds, got {value}"),
                ));
            }
        }
        if t.offer_interval_s <= 0.0 || t.launch_retry_s <= 0.0 {
            return Err(refuse(
                "timings.offer_interval_s/launch_retry_s".into(),
                "must be more than 0 (they are retry periods)".into(),
            ));
        }
        if !(0.0..1.0).contains(&t.jitter) {
            return Err(refuse(
                "timings.jitter".into(),
                format!("must be a fraction in [0, 1), got {}", t.jitter),
            ));
        }
        Ok(())
    }

    fn check_group(&self, prefix: &str, g: &GroupSpec) -> Result<(), Refusal> {
        let field = |name: &str| format!("{prefix}.{name}");
        if g.name.is_empty() {
            return Err(refuse(field("name"), "must not be empty".into()));
        }
        if g.min_size > g.max_size {
            return Err(refuse(
                field("min_size"),
                format!("{} is above max_size {}", g.min_size, g.max_size),
            ));
        }
        if g.desired_capacity < g.min_size || g.desired_capacity > g.max_size {
            return Err(refuse(
                field("desired_capacity"),
                format!(
                    "{} is outside [min_size {}, max_size {}]",
                    g.desired_capacity, g.min_size, g.max_size
                ),
            ));
        }
        if g.desired_capacity.saturating_add(g.standby) > g.max_size {
            return Err(refuse(
                field("standby"),
                format!(
                    "{} in Standby besides desired_capacity {} is above max_size {}",
                    g.standby, g.desired_capacity, g.max_size
                ),
            ));
        }
        if g.protected > g.desired_capacity {
            return Err(refuse(
                field("protected"),
                format!(
                    "{} protected from scale-in is above the {} instances in service",
                    g.protected, g.desired_capacity
                ),
            ));
        }
        let mut hook_names = BTreeSet::new();
        for (n, hook) in g.lifecycle_hooks.iter().enumerate() {
            let at = field(&format!("lifecycle_hooks[{}]", n + 1));
            hook.check().map_err(|why| refuse(at.clone(), why))?;
            if !hook_names.insert(hook.name.as_str()) {
                return Err(refuse(at, format!("a second hook named {}", hook.name)));
            }
        }
        if let Some(policy) = &g.instance_maintenance_policy {
            policy
                .check()
                .map_err(|why| refuse(field("instance_maintenance_policy"), why))?;
        }
        if let Some(pool) = &g.warm_pool {
            pool.check()
                .map_err(|why| refuse(field("warm_pool.pool_state"), why))?;
            if g.mixed_instances.is_some() {
                return Err(refuse(
                    field("warm_pool"),
                    "AWS adds no warm pool to a group with a mixed instances policy; drop one of them".into(),
                ));
            }
        }
        let azs: BTreeSet<&String> = g.availability_zones.iter().collect();
        if g.availability_zones.is_empty() || azs.len() != g.availability_zones.len() {
            return Err(refuse(
                field("availability_zones"),
                "must list at least one zone, each once".into(),
            ));
        }
        for p in &g.suspended_processes {
            if !PROCESSES.contains(&p.as_str()) {
                return Err(refuse(
                    field("suspended_processes"),
                    format!("unknown process {p:?}; expected one of {PROCESSES:?}"),
                ));
            }
        }
        let lt = &g.launch_template;
        let (latest, default) = (lt.latest(), lt.default_number());
        if latest == 0 {
            return Err(refuse(
                field("launch_template.latest_version"),
                "must be at least 1".into(),
            ));
        }
        if !(1..=latest).contains(&default) {
            return Err(refuse(
                field("launch_template.default_version"),
                format!("{default} is not a version of the template (1 to {latest})"),
            ));
        }
        if resolve_template_version(&lt.version, latest, default).is_none() {
            return Err(refuse(
                field("launch_template.version"),
                format!(
                    "{:?} is not a version of the template: expected 1 to {latest}, $Latest or $Default",
                    lt.version
                ),
            ));
        }
        if let Some(mixed) = &g.mixed_instances {
            mixed.check(latest, default).map_err(|(name, message)| {
                refuse(field(&format!("mixed_instances.{name}")), message)
            })?;
        }
        if let Some(role) = &g.role {
            if role == "*" {
                return Err(refuse(
                    field("role"),
                    "\"*\" is the unreserved role: leave role out for unreserved agents".into(),
                ));
            }
            check_role(role).map_err(|why| refuse(field("role"), why))?;
        }
        if let Some(agent) = &g.agent {
            check_agent(&field("agent"), agent)?;
        }
        Ok(())
    }

    fn check_app(&self, i: usize, app: &AppSpec) -> Result<(), Refusal> {
        let field = |name: &str| format!("apps[{i}] ({}).{name}", app.id);
        if let Some(roles) = &app.accepted_resource_roles {
            if roles.is_empty() {
                return Err(refuse(
                    field("accepted_resource_roles"),
                    "must name at least one role (leave it out for Marathon's default, [\"*\"])"
                        .into(),
                ));
            }
            for role in roles {
                check_role(role).map_err(|why| refuse(field("accepted_resource_roles"), why))?;
            }
        }
        // The shapes of the agents Marathon may place the app on.
        let shapes: Vec<&AgentSpec> = self
            .groups()
            .filter(|g| app.accepts(g.role.as_deref()))
            .map(|g| self.agent_of(g))
            .collect();
        if shapes.is_empty() {
            let offered: BTreeSet<&str> = self
                .groups()
                .map(|g| g.role.as_deref().unwrap_or("*"))
                .collect();
            return Err(refuse(
                field("accepted_resource_roles"),
                format!(
                    "accepts no group's agents (their roles: {})",
                    offered.into_iter().collect::<Vec<_>>().join(", ")
                ),
            ));
        }
        if !app.id.starts_with('/') || app.id.len() < 2 || app.id.ends_with('/') {
            return Err(refuse(
                field("id"),
                "must be an absolute app id like \"/team/service\"".into(),
            ));
        }
        if app.count == 0 {
            return Err(refuse(field("count"), "must be at least 1".into()));
        }
        if app.count > 1 && !app.id.contains("{n}") {
            return Err(refuse(
                field("id"),
                format!("count is {} so the id must hold {{n}}", app.count),
            ));
        }
        for (name, value) in [("cpus", app.cpus), ("mem", app.mem)] {
            if !value.is_finite() || value <= 0.0 {
                return Err(refuse(
                    field(name),
                    format!("must be more than 0, got {value}"),
                ));
            }
            let shape = shapes
                .iter()
                .map(|a| if name == "cpus" { a.cpus } else { a.mem })
                .fold(0.0, f64::max);
            if value > shape {
                return Err(refuse(
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
                return Err(refuse(
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
                return Err(refuse(
                    field(name),
                    format!("must be between 0 and 1, got {value}"),
                ));
            }
        }
        // Marathon's `complyWithSingleInstanceLabelRules` and
        // `validForSingleInstanceApps`: it would not create such an app.
        if app.single_instance() {
            if app.instances > 1 {
                return Err(refuse(
                    field("instances"),
                    "Single instance app may only have one instance (the label \
                     MARATHON_SINGLE_INSTANCE_APP is \"true\")"
                        .to_string(),
                ));
            }
            if app.min_health_capacity != 0.0 || app.max_over_capacity != 0.0 {
                return Err(refuse(
                    field("min_health_capacity"),
                    "a single-instance app needs min_health_capacity = 0 and \
                     max_over_capacity = 0, as Marathon requires"
                        .to_string(),
                ));
            }
        }
        if !app.backoff_factor.is_finite() || app.backoff_factor < 1.0 {
            return Err(refuse(
                field("backoff_factor"),
                format!("must be at least 1, got {}", app.backoff_factor),
            ));
        }
        for c in &app.constraints {
            if !(c.len() == 2 && c[0] == "hostname" && c[1] == "UNIQUE") {
                return Err(refuse(
                    field("constraints"),
                    format!("{c:?} is not simulated; only [\"hostname\", \"UNIQUE\"] is"),
                ));
            }
        }
        if app.colocate && app.unique_hostname() && app.instances > 1 {
            return Err(refuse(
                field("colocate"),
                "contradicts the [\"hostname\", \"UNIQUE\"] constraint".into(),
            ));
        }
        let (cpus, mem) = (
            app.cpus * f64::from(app.instances),
            app.mem * f64::from(app.instances),
        );
        if app.colocate && !shapes.iter().any(|a| cpus <= a.cpus && mem <= a.mem) {
            return Err(refuse(
                field("colocate"),
                format!("{} tasks do not fit on one agent", app.instances),
            ));
        }
        if let Some(hc) = &app.health_check {
            if !HEALTH_PROTOCOLS.contains(&hc.protocol.as_str()) {
                return Err(refuse(
                    field("health_check.protocol"),
                    format!(
                        "unknown protocol {:?}; expected one of {HEALTH_PROTOCOLS:?}",
                        hc.protocol
                    ),
                ));
            }
            if !hc.interval_s.is_finite() || hc.interval_s <= 0.0 {
                return Err(refuse(
                    field("health_check.interval_s"),
                    format!("must be more than 0, got {}", hc.interval_s),
                ));
            }
            if !hc.grace_period_s.is_finite() || hc.grace_period_s < 0.0 {
                return Err(refuse(
                    field("health_check.grace_period_s"),
                    format!("must be non-negative, got {}", hc.grace_period_s),
                ));
            }
            if hc.max_consecutive_failures == 0 {
                return Err(refuse(
                    field("health_check.max_consecutive_failures"),
                    "must be at least 1".into(),
                ));
            }
        }
        Ok(())
    }

    fn check_faults(&self) -> Result<(), Refusal> {
        let mut ids = BTreeSet::new();
        for app in self.expanded_apps() {
            if !ids.insert(app.id.clone()) {
                return Err(refuse(
                    "apps".into(),
                    format!("app id {} appears more than once", app.id),
                ));
            }
        }
        for id in &self.faults.never_healthy_apps {
            if !ids.contains(id) {
                return Err(refuse(
                    "faults.never_healthy_apps".into(),
                    format!("{id} is not an app of this scenario"),
                ));
            }
        }
        for id in &self.faults.failing_health_checks {
            let field = || "faults.failing_health_checks".to_string();
            match self.expanded_apps().into_iter().find(|app| app.id == *id) {
                None => {
                    return Err(refuse(
                        field(),
                        format!("{id} is not an app of this scenario"),
                    ));
                }
                Some(app) if app.spec.health_check.is_none() => {
                    return Err(refuse(
                        field(),
                        format!("{id} has no health check, so its tasks cannot fail one"),
                    ));
                }
                Some(_) => {}
            }
        }
        let templates: Vec<(&str, u64)> = self
            .groups()
            .map(|g| (g.name.as_str(), g.launch_template.latest()))
            .collect();
        self.faults
            .check_bad_images(&templates)
            .map_err(|message| refuse("faults.bad_image".into(), message))
    }
}

/// An agent shape (`[agent]` or a group's own) offers something of each.
fn check_agent(prefix: &str, a: &AgentSpec) -> Result<(), Refusal> {
    for (name, value) in [("cpus", a.cpus), ("mem", a.mem), ("disk", a.disk)] {
        if !value.is_finite() || value <= 0.0 {
            return Err(refuse(
                format!("{prefix}.{name}"),
                format!("must be more than 0, got {value}"),
            ));
        }
    }
    Ok(())
}
