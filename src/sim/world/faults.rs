//! Faults the world can be told to suffer, at construction (the scenario's
//! `[faults]` table) and at runtime (`World::set_faults`): the ways a real
//! cluster misbehaves during a roll that the roller must notice, a bad
//! image among them (`BadImage`: a launch template version whose instances
//! cannot run tasks).

use serde::{Deserialize, Deserializer, Serialize};

use super::ids::{INSTANCE_TYPE, subnet_id};

/// World-level faults. API-level faults (error rates, latency, throttling,
/// leader changes) belong to the HTTP facades, not to the world.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Faults {
    /// Every instance launch fails (as EC2 capacity errors do): the group
    /// records a failed scaling activity, launches nothing and retries.
    #[serde(default)]
    pub(crate) launches_fail: bool,
    /// Why those launches fail, as the failed activity's status message
    /// says: `capacity` (the default), `vcpu-limit`, `subnet-full`, or
    /// `image-missing` (the template's AMI is gone: the new template's
    /// fault, where the others are EC2's want of room).
    #[serde(default)]
    pub(crate) launch_failure: LaunchFailure,
    /// The agents of the next N instances to be terminated stay registered
    /// and keep answering pings after their instance is gone, so Mesos
    /// never deregisters them.
    #[serde(default)]
    pub(crate) agents_outlive_instances: u32,
    /// Apps (by id) whose relaunched tasks never become healthy (or, without
    /// health checks, fail right after starting). Tasks running when the
    /// fault is switched on are not affected.
    #[serde(default)]
    pub(crate) never_healthy_apps: Vec<String>,
    /// Apps (by id; each must have a health check) whose running tasks,
    /// healthy ones included, fail every health check while listed: as a
    /// dependency failing or a leak would. Marathon marks them unhealthy
    /// and kills each after `maxConsecutiveFailures` (no launch delay:
    /// TASK_KILLED); relaunched tasks fail once their grace is over.
    /// Survivors pass again once the app is no longer listed.
    #[serde(default)]
    pub(crate) failing_health_checks: Vec<String>,
    /// Instances coming into service while this is set boot, but their
    /// Mesos agent never registers (a broken image, a wrong master URL in
    /// user data): the group grows and Mesos does not.
    #[serde(default)]
    pub(crate) agents_never_register: bool,
    /// Launch template versions whose instances run a bad image, each
    /// with what goes wrong there (one entry or a list; a version at most
    /// once per group). Only tasks placed on their agents suffer: tasks on
    /// agents of other versions are untouched. Written `{ version = "2",
    /// effect = "unhealthy" }`: every group's instances of version 2; with
    /// `group = "name"`, that group's only.
    #[serde(default, deserialize_with = "one_or_many")]
    pub(crate) bad_image: Vec<BadImage>,
}

/// Why a launch fails, with EC2's reason as Auto Scaling words it in the
/// scaling activity (the Auto Scaling user guide's troubleshooting pages).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum LaunchFailure {
    /// No capacity of the type in the AZ.
    #[default]
    Capacity,
    /// The account's On-Demand vCPU quota is used up.
    VcpuLimit,
    /// The group's subnet has no free address left.
    SubnetFull,
    /// The launch template's AMI does not exist (deleted after the
    /// template was made).
    ImageMissing,
}

impl LaunchFailure {
    /// The failed activity's status message for a launch in `az`.
    pub(crate) fn message(self, az: &str) -> String {
        match self {
            LaunchFailure::Capacity => format!(
                "We currently do not have sufficient {INSTANCE_TYPE} capacity in the Availability Zone you requested ({az}). \
                 Our system will be working on provisioning additional capacity. You can currently get {INSTANCE_TYPE} \
                 capacity by not specifying an Availability Zone in your request or choosing other Availability \
                 Zones. Launching EC2 instance failed."
            ),
            LaunchFailure::VcpuLimit => "You have requested more vCPU capacity than your current vCPU limit of 32 \
                 allows for the instance bucket that the specified instance type belongs to. Please visit \
                 http://aws.amazon.com/contact-us/ec2-request to request an adjustment to this limit. Launching EC2 \
                 instance failed."
                .to_string(),
            LaunchFailure::SubnetFull => format!(
                "There are not enough free addresses in subnet '{}' to satisfy the requested number of \
                 instances. Launching EC2 instance failed.",
                subnet_id(az)
            ),
            LaunchFailure::ImageMissing => {
                "The AMI ID ami-0bad0bad0bad0bad0 does not exist. Launching EC2 instance failed.".to_string()
            }
        }
    }
}

/// One launch template version that boots a bad image.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct BadImage {
    /// The version number, as the instances launched from it report it
    /// (`"2"`; not `$Latest`: an image is one version).
    pub(crate) version: String,
    pub(crate) effect: ImageEffect,
    /// The one group whose instances of `version` boot the bad image;
    /// unset, every group's (as when the groups share a launch template).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) group: Option<String>,
}

impl BadImage {
    /// Whether this bad image is what `group`'s instances of `version`
    /// boot.
    fn covers(&self, group: &str, version: &str) -> bool {
        self.version == version && self.group.as_deref().is_none_or(|g| g == group)
    }
}

/// What a bad image does to the tasks placed on its agents. Decided when a
/// task is placed: tasks already placed when the fault is switched on keep
/// running as they were, and so do the scenario's tasks at time zero.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ImageEffect {
    /// Tasks never pass a health check: after their grace period checks
    /// fail until Marathon kills them (TASK_KILLED). Tasks of apps without
    /// health checks crash soon after they start (TASK_FAILED).
    Unhealthy,
    /// Every task fails (TASK_FAILED) soon after it starts running, with
    /// or without health checks.
    Crash,
    /// The instance boots but its Mesos agent never registers (the
    /// per-version form of `agents_never_register`).
    Unregistered,
}

impl Faults {
    /// What a bad image does on `group`'s instances of `version`, if it
    /// is bad.
    pub(crate) fn image_effect(&self, group: &str, version: &str) -> Option<ImageEffect> {
        self.bad_image
            .iter()
            .find(|b| b.covers(group, version))
            .map(|b| b.effect)
    }

    /// `bad_image` names versions the launch templates have (1 to the
    /// group's latest; without a group, some group's) and groups that
    /// exist, each version once per group: a typo must not silently
    /// disable the fault. `templates` is each group's name and latest
    /// version. The error says why, without the field's name.
    pub(crate) fn check_bad_images(&self, templates: &[(&str, u64)]) -> Result<(), String> {
        for (i, bad) in self.bad_image.iter().enumerate() {
            let latest = match bad.group.as_deref() {
                Some(group) => match templates.iter().find(|(name, _)| *name == group) {
                    Some(&(_, latest)) => latest,
                    None => return Err(format!("group {group:?} is not a group of this world")),
                },
                None => templates
                    .iter()
                    .map(|&(_, latest)| latest)
                    .max()
                    .unwrap_or(1),
            };
            let numbered = bad
                .version
                .parse::<u64>()
                .ok()
                .filter(|n| (1..=latest).contains(n) && !bad.version.starts_with('0'));
            if numbered.is_none() {
                return Err(format!(
                    "version {:?} is not a version of the launch template (1 to {latest})",
                    bad.version
                ));
            }
            let clash = self.bad_image[..i].iter().any(|other| {
                other.version == bad.version
                    && (other.group.is_none() || bad.group.is_none() || other.group == bad.group)
            });
            if clash {
                return Err(format!("version {} appears more than once", bad.version));
            }
        }
        Ok(())
    }
}

/// `bad_image` as one table or a list of them. A visitor rather than an
/// untagged enum, so that a bad field keeps serde's own words (`unknown
/// variant `unhealty``) instead of "did not match any variant".
fn one_or_many<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<BadImage>, D::Error> {
    use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
    use serde::de::{MapAccess, SeqAccess, Visitor};

    struct OneOrMany;

    impl<'de> Visitor<'de> for OneOrMany {
        type Value = Vec<BadImage>;

        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a bad image ({ version, effect }) or a list of them")
        }

        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Vec<BadImage>, A::Error> {
            BadImage::deserialize(MapAccessDeserializer::new(map)).map(|one| vec![one])
        }

        fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Vec<BadImage>, A::Error> {
            Vec::deserialize(SeqAccessDeserializer::new(seq))
        }
    }

    d.deserialize_any(OneOrMany)
}
