//! The calls the Marathon facade makes: listing apps, tasks, the queue and
//! versions; scaling, cancelling deployments, killing tasks.

use super::*;

impl World {
    // ----- the API the Marathon facade calls -----

    /// `/v2/apps` (with counts and deployments; tasks when `embed_tasks`).
    pub(crate) fn apps(&self, embed_tasks: bool) -> Vec<AppView> {
        (0..self.marathon.apps.len())
            .map(|a| self.app_view(a, embed_tasks))
            .collect()
    }

    /// `/v2/apps/{id}`.
    pub(crate) fn app(&self, id: &str, embed_tasks: bool) -> Result<AppView, MarathonError> {
        let a = self.app_idx("get_app", id)?;
        Ok(self.app_view(a, embed_tasks))
    }

    /// `/v2/tasks`: every task Marathon knows, by app.
    pub(crate) fn tasks(&self) -> Vec<TaskView> {
        (0..self.marathon.apps.len())
            .flat_map(|a| self.app_tasks(a))
            .collect()
    }

    /// `/v2/queue`: the apps with instances left to launch, each with what
    /// is left and how long its launch delay still holds them back.
    pub(crate) fn queue(&self) -> Vec<QueueView> {
        (0..self.marathon.apps.len())
            .filter_map(|a| {
                let app = &self.marathon.apps[a];
                let since = app.queued_since?;
                let count = app.left_to_launch();
                if count == 0 {
                    return None;
                }
                let delay_left_ms = self
                    .launch_delay(a)
                    .map_or(0, |(_, deadline)| deadline.since(self.now));
                Some(QueueView {
                    app: self.app_view(a, false),
                    count: u32::try_from(count).unwrap_or(u32::MAX),
                    delay_left_ms,
                    since_unix_ms: self.unix_ms(since),
                })
            })
            .collect()
    }

    /// `DELETE /v2/queue/{id}/delay`: drops the app's launch delay so its
    /// queued instances launch now. False when the app has nothing queued
    /// (or does not exist), as Marathon answers 404 then.
    pub(crate) fn reset_launch_delay(&mut self, id: &str) -> bool {
        let Ok(a) = self.app_idx("reset_delay", id) else {
            return false;
        };
        let app = &self.marathon.apps[a];
        if app.queued_since.is_none() || app.left_to_launch() == 0 {
            return false;
        }
        self.marathon.apps[a].delay = None;
        self.launch_missing(a);
        true
    }

    /// `GET /v2/apps/{id}/versions`: the app's stored versions (Unix ms),
    /// newest first.
    pub(crate) fn app_versions(&self, id: &str) -> Result<Vec<u64>, MarathonError> {
        let a = self.app_idx("app_versions", id)?;
        Ok(self.marathon.apps[a]
            .versions
            .iter()
            .rev()
            .map(|v| self.unix_ms(v.at))
            .collect())
    }

    /// `GET /v2/apps/{id}/versions/{version}`: the app as it was at that
    /// version (Unix ms), None for a version it never had.
    pub(crate) fn app_at_version(
        &self,
        id: &str,
        version_unix_ms: u64,
    ) -> Result<Option<AppView>, MarathonError> {
        let a = self.app_idx("app_version", id)?;
        let app = &self.marathon.apps[a];
        Ok(app
            .versions
            .iter()
            .find(|v| self.unix_ms(v.at) == version_unix_ms)
            .map(|v| {
                let mut view = self.app_view(a, false);
                view.instances = v.instances;
                view.accepted_resource_roles = v.accepted_roles.clone();
                view.version_unix_ms = self.unix_ms(v.at);
                view
            }))
    }

    pub(crate) fn store_version(&mut self, a: AppIdx) {
        let now = self.now;
        let app = &mut self.marathon.apps[a];
        let version = AppVersion {
            at: now,
            instances: app.instances,
            accepted_roles: app.accepted_roles.clone(),
        };
        match app.versions.last_mut() {
            // Two changes in one millisecond are one version.
            Some(last) if last.at == now => *last = version,
            _ => app.versions.push(version),
        }
    }

    /// `/v2/deployments`, oldest first.
    pub(crate) fn deployments(&self) -> Vec<DeploymentView> {
        self.marathon
            .deployments
            .iter()
            .map(|d| DeploymentView {
                id: d.id.clone(),
                version_unix_ms: self.unix_ms(d.version),
                affected_apps: vec![self.marathon.apps[d.app].id.clone()],
                action: d.action,
                current_step: 1,
                total_steps: 1,
            })
            .collect()
    }

    /// `PUT /v2/apps/{id}` with a new `instances`: starts a deployment and
    /// returns its id. Refused while another deployment touches the app
    /// unless `force` (which replaces it, as Marathon's `force=true`).
    pub(crate) fn update_app_instances(
        &mut self,
        id: &str,
        instances: u32,
        force: bool,
    ) -> Result<String, MarathonError> {
        const ACTION: &str = "update_app";
        let a = self.app_idx(ACTION, id)?;
        self.validate_instances(ACTION, a, instances)?;
        self.take_over_deployment(ACTION, a, force)?;
        let original = self.marathon.apps[a].instances;
        let deployment = self.start_deployment(a, original, "ScaleApplication");
        self.marathon.apps[a].instances = instances;
        let app = &mut self.marathon.apps[a];
        app.floor_instances = app.floor_instances.min(instances);
        self.marathon.apps[a].version = self.now;
        self.store_version(a);
        // A change of `instances` alone is not a config change: Marathon
        // keys the launch delay by the last config change, so it stays.
        self.publish_api_post(a);
        self.publish_deployment("deployment_info", &deployment, a);
        self.scale_down_surplus(a);
        self.launch_missing(a);
        self.app_changed(a);
        Ok(deployment)
    }

    /// Marathon's validation of the app as it would be with `instances`
    /// (`complyWithSingleInstanceLabelRules`), before any lock is looked
    /// at: a single-instance app may not have more than one.
    pub(crate) fn validate_instances(
        &self,
        action: &'static str,
        a: AppIdx,
        instances: u32,
    ) -> Result<(), MarathonError> {
        if self.marathon.apps[a].single_instance && instances > 1 {
            return Err(MarathonError::Invalid {
                action,
                path: "/",
                error: "Single instance app may only have one instance",
            });
        }
        Ok(())
    }

    /// Before a change to app `a`: refused while a deployment touches it,
    /// unless `force`, which drops that deployment (Marathon's
    /// `force=true`).
    pub(crate) fn take_over_deployment(
        &mut self,
        action: &'static str,
        a: AppIdx,
        force: bool,
    ) -> Result<(), MarathonError> {
        let app = &self.marathon.apps[a];
        if let Some(existing) = &app.deployment {
            if !force {
                return Err(MarathonError::DeploymentConflict {
                    action,
                    app: app.id.clone(),
                    deployments: vec![existing.clone()],
                });
            }
            let existing = existing.clone();
            self.publish_deployment("deployment_failed", &existing, a);
            self.marathon.deployments.retain(|d| d.id != existing);
        }
        Ok(())
    }

    /// `DELETE /v2/deployments/{id}`, as Marathon's `DeploymentsResource`
    /// cancels one. Without `force` the deployment is stopped and a new one
    /// deploys the app's state before it (`plan.revert`, forced over the
    /// one cancelled): for a scale, `instances` goes back and the surplus
    /// is killed as any scale-down kills; its id is returned. With `force`
    /// the deployment is dropped and nothing is rolled back (`None`): the
    /// app keeps the `instances` the deployment set.
    pub(crate) fn cancel_deployment(
        &mut self,
        id: &str,
        force: bool,
    ) -> Result<Option<String>, MarathonError> {
        const ACTION: &str = "cancel_deployment";
        let Some(deployment) = self.marathon.deployments.iter().find(|d| d.id == id) else {
            return Err(MarathonError::DeploymentNotFound {
                action: ACTION,
                id: id.to_string(),
            });
        };
        let (a, original) = (deployment.app, deployment.original_instances);
        let original_roles = deployment.original_roles.clone();
        self.publish_deployment("deployment_failed", id, a);
        if force {
            self.marathon.deployments.retain(|d| d.id != id);
            if self.marathon.apps[a].deployment.as_deref() == Some(id) {
                self.marathon.apps[a].deployment = None;
            }
            self.app_changed(a);
            return Ok(None);
        }
        self.marathon.deployments.retain(|d| d.id != id);
        if self.marathon.apps[a].accepted_roles != original_roles {
            self.marathon.apps[a].accepted_roles = original_roles;
            self.marathon.apps[a].config_changed = self.now;
        }
        let app_id = self.marathon.apps[a].id.clone();
        self.update_app_instances(&app_id, original, true).map(Some)
    }

    /// `POST /v2/tasks/delete`: kills the tasks. With `scale` the apps'
    /// instances drop by the tasks killed (one deployment); without, the
    /// tasks are replaced (wherever they can be placed).
    pub(crate) fn kill_tasks(&mut self, ids: &[String], scale: bool) -> KillResult {
        let mut killed = Vec::new();
        let mut unknown = Vec::new();
        // Each scaled app's `instances` before the kills: what its
        // deployment would restore if cancelled.
        let mut scaled_apps: HashMap<AppIdx, u32> = HashMap::new();
        for id in ids {
            let Some(&key) = self.marathon.task_by_id.get(id) else {
                unknown.push(id.clone());
                continue;
            };
            let task = &self.marathon.tasks[&key];
            if !matches!(task.state, TaskState::Staging | TaskState::Running) {
                continue;
            }
            let app = task.app;
            if scale {
                let a = &mut self.marathon.apps[app];
                scaled_apps.entry(app).or_insert(a.instances);
                a.instances = a.instances.saturating_sub(1);
                a.floor_instances = a.floor_instances.min(a.instances);
            }
            self.end_task(
                key,
                if scale {
                    TaskEnd::KilledForScale
                } else {
                    TaskEnd::Killed
                },
            );
            killed.push(self.task_view(key));
        }
        let mut deployment_id = None;
        let mut scaled_apps: Vec<(AppIdx, u32)> = scaled_apps.into_iter().collect();
        scaled_apps.sort_unstable();
        for (app, original) in scaled_apps {
            self.marathon.apps[app].version = self.now;
            self.store_version(app);
            if self.marathon.apps[app].deployment.is_none() {
                let id = self.start_deployment(app, original, "ScaleApplication");
                self.publish_deployment("deployment_info", &id, app);
                deployment_id = Some(id);
            }
            self.app_changed(app);
        }
        KillResult {
            killed,
            unknown,
            deployment_id,
        }
    }

    pub(crate) fn app_idx(&self, action: &'static str, id: &str) -> Result<AppIdx, MarathonError> {
        let key = if id.starts_with('/') {
            id.to_string()
        } else {
            format!("/{id}")
        };
        self.marathon
            .by_id
            .get(&key)
            .copied()
            .ok_or_else(|| MarathonError::AppNotFound {
                action,
                app: id.to_string(),
            })
    }

    /// A deployment of app `a`, whose `instances` were `original` before
    /// the change it carries out (its roles are still as they were).
    pub(crate) fn start_deployment(
        &mut self,
        a: AppIdx,
        original: u32,
        action: &'static str,
    ) -> String {
        let id = self.rng.uuid();
        self.marathon.deployments.push(Deployment {
            id: id.clone(),
            app: a,
            version: self.now,
            original_instances: original,
            original_roles: self.marathon.apps[a].accepted_roles.clone(),
            action,
        });
        self.marathon.apps[a].deployment = Some(id.clone());
        id
    }

    /// Kills tasks beyond `instances`: staging ones first, then unhealthy,
    /// then the most recently started (as Marathon prefers).
    pub(crate) fn scale_down_surplus(&mut self, a: AppIdx) {
        let app = &self.marathon.apps[a];
        let live: Vec<TaskKey> = app
            .tasks
            .iter()
            .copied()
            .filter(|k| {
                matches!(
                    self.marathon.tasks[k].state,
                    TaskState::Staging | TaskState::Running
                )
            })
            .collect();
        let surplus = live.len().saturating_sub(app.instances as usize);
        if surplus == 0 {
            return;
        }
        let mut ranked: Vec<(u8, std::cmp::Reverse<SimTime>, TaskKey)> = live
            .iter()
            .map(|&k| {
                let t = &self.marathon.tasks[&k];
                let rank = match (t.state, t.health.alive) {
                    (TaskState::Staging, _) => 0,
                    (_, Some(false)) => 1,
                    _ => 2,
                };
                (
                    rank,
                    std::cmp::Reverse(t.started_at.unwrap_or(t.staged_at)),
                    k,
                )
            })
            .collect();
        ranked.sort();
        for (_, _, k) in ranked.into_iter().take(surplus) {
            self.end_task(k, TaskEnd::KilledForScale);
        }
    }
}
