//! What an instance was launched from and where it is in its lifecycle:
//! a group's launch source (a template, a launch configuration, a mixed
//! instances policy), whether an instance's is outdated, and the Auto
//! Scaling lifecycle states. Shared by the group (`auto_scaling`) and its
//! warm pool (`warm_pool`), which `auto_scaling` re-exports.

use super::mixed_instances::{MixedInstancesPolicy, TemplateRef};

/// Whether an instance launched from `launched` (of `instance_type`) runs
/// another source than `group_source` would launch it from now: a group
/// instance's or a warm one's.
pub(crate) fn is_outdated(
    launched: Option<&LaunchSource>,
    instance_type: Option<&str>,
    group_source: Option<&LaunchSource>,
) -> bool {
    match group_source {
        Some(LaunchSource::MixedInstances(policy)) => {
            launched != Some(&LaunchSource::from(policy.template_for(instance_type)))
        }
        other => launched != other,
    }
}

/// Where an instance's configuration comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LaunchSource {
    Template {
        id: Option<String>,
        name: Option<String>,
        version: Option<String>,
    },
    Configuration {
        name: String,
    },
    /// A group's only (never an instance's: each instance carries the
    /// template it launched from).
    MixedInstances(MixedInstancesPolicy),
}

impl From<&TemplateRef> for LaunchSource {
    fn from(t: &TemplateRef) -> LaunchSource {
        LaunchSource::Template {
            id: t.id.clone(),
            name: t.name.clone(),
            version: t.version.clone(),
        }
    }
}

impl LaunchSource {
    /// The template it names, if it is one.
    pub(crate) fn template(&self) -> Option<TemplateRef> {
        match self {
            LaunchSource::Template { id, name, version } => Some(TemplateRef {
                id: id.clone(),
                name: name.clone(),
                version: version.clone(),
            }),
            _ => None,
        }
    }

    /// The kind of source, as AWS names the group's parameter.
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            LaunchSource::Template { .. } => "LaunchTemplate",
            LaunchSource::Configuration { .. } => "LaunchConfigurationName",
            LaunchSource::MixedInstances(_) => "MixedInstancesPolicy",
        }
    }
}

/// The Auto Scaling lifecycle states the roll acts on; the rest are kept
/// verbatim.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LifecycleState {
    Pending,
    /// Held by a launch hook before going in service.
    PendingWait,
    /// A launch hook's wait is over; going in service.
    PendingProceed,
    InService,
    Standby,
    Terminating,
    /// Held by a termination hook before being shut down.
    TerminatingWait,
    /// A termination hook's wait is over; being shut down.
    TerminatingProceed,
    Terminated,
    Detaching,
    Detached,
    /// Warm pool states, `EnteringStandby` and whatever AWS adds later.
    Other(String),
}

impl LifecycleState {
    pub(crate) fn parse(state: &str) -> LifecycleState {
        match state {
            "Pending" => LifecycleState::Pending,
            "Pending:Wait" => LifecycleState::PendingWait,
            "Pending:Proceed" => LifecycleState::PendingProceed,
            "InService" => LifecycleState::InService,
            "Standby" => LifecycleState::Standby,
            "Terminating" => LifecycleState::Terminating,
            "Terminating:Wait" => LifecycleState::TerminatingWait,
            "Terminating:Proceed" => LifecycleState::TerminatingProceed,
            "Terminated" => LifecycleState::Terminated,
            "Detaching" => LifecycleState::Detaching,
            "Detached" => LifecycleState::Detached,
            other => LifecycleState::Other(other.to_string()),
        }
    }

    /// As AWS spells it (`Terminating:Wait`).
    pub(crate) fn as_aws(&self) -> &str {
        match self {
            LifecycleState::Pending => "Pending",
            LifecycleState::PendingWait => "Pending:Wait",
            LifecycleState::PendingProceed => "Pending:Proceed",
            LifecycleState::InService => "InService",
            LifecycleState::Standby => "Standby",
            LifecycleState::Terminating => "Terminating",
            LifecycleState::TerminatingWait => "Terminating:Wait",
            LifecycleState::TerminatingProceed => "Terminating:Proceed",
            LifecycleState::Terminated => "Terminated",
            LifecycleState::Detaching => "Detaching",
            LifecycleState::Detached => "Detached",
            LifecycleState::Other(text) => text,
        }
    }

    /// On its way out of the group: terminating it again changes nothing.
    pub fn is_leaving(&self) -> bool {
        match self {
            LifecycleState::Terminating
            | LifecycleState::TerminatingWait
            | LifecycleState::TerminatingProceed
            | LifecycleState::Terminated
            | LifecycleState::Detaching
            | LifecycleState::Detached => true,
            LifecycleState::Other(s) => s.starts_with("Terminat") || s.starts_with("Detach"),
            _ => false,
        }
    }
}
