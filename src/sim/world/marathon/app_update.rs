//! `PUT /v2/apps/{id}`: what of an app an operator may change in the world,
//! its `instances` (a scale) and its `acceptedResourceRoles` (a change of
//! configuration, as Marathon takes one).

use std::collections::BTreeSet;

use super::{MarathonError, World};

/// A change to an app, as `PUT /v2/apps/{id}` asks it; a part left `None`
/// stays as it is.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct AppChange {
    pub(crate) instances: Option<u32>,
    /// Valid role names (`*` or Mesos roles), at least one: the facade
    /// refuses others, as Marathon's validation does.
    pub(crate) accepted_resource_roles: Option<Vec<String>>,
}

/// The roles as a set, Marathon's default (`None`) being `*`.
fn role_set(roles: Option<&[String]>) -> BTreeSet<&str> {
    match roles {
        None => BTreeSet::from(["*"]),
        Some(roles) => roles.iter().map(String::as_str).collect(),
    }
}

impl World {
    /// `PUT /v2/apps/{id}`: returns the deployment's id. Roles that are
    /// the app's already (in any order; `["*"]` is the default) change
    /// nothing, and the call is the scale of `update_app_instances` (to the
    /// same count if none is given). Other roles are a change of
    /// configuration: a new version, the launch delay dropped (Marathon
    /// keys it by the config), a `RestartApplication` deployment (scaling
    /// too, if `instances` is given), and tasks placed from now on go where
    /// the new roles allow. Marathon would also replace every running task
    /// (a restart): the world does not, so tasks left on agents the new
    /// roles do not take stay there, and the monitor counts them as
    /// misplaced. Refused while another deployment touches the app unless
    /// `force`.
    pub(crate) fn update_app(
        &mut self,
        id: &str,
        change: AppChange,
        force: bool,
    ) -> Result<String, MarathonError> {
        const ACTION: &str = "update_app";
        let a = self.app_idx(ACTION, id)?;
        let app = &self.marathon.apps[a];
        let roles = change
            .accepted_resource_roles
            .filter(|roles| role_set(Some(roles)) != role_set(app.accepted_roles.as_deref()));
        let Some(roles) = roles else {
            let instances = change.instances.unwrap_or(app.instances);
            return self.update_app_instances(id, instances, force);
        };
        if let Some(instances) = change.instances {
            self.validate_instances(ACTION, a, instances)?;
        }
        self.take_over_deployment(ACTION, a, force)?;
        let original = self.marathon.apps[a].instances;
        let deployment = self.start_deployment(a, original, "RestartApplication");
        let now = self.now;
        let app = &mut self.marathon.apps[a];
        app.accepted_roles = Some(roles);
        app.config_changed = now;
        app.version = now;
        app.delay = None;
        if let Some(instances) = change.instances {
            app.instances = instances;
            app.floor_instances = app.floor_instances.min(instances);
        }
        self.store_version(a);
        self.publish_api_post(a);
        self.publish_deployment("deployment_info", &deployment, a);
        self.scale_down_surplus(a);
        self.launch_missing(a);
        self.app_changed(a);
        Ok(deployment)
    }
}
