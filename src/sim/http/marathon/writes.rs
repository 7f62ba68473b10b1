//! The writes Marathon answers here: `PUT /v2/apps/{id}` (instances and
//! acceptedResourceRoles), cancelling a deployment, killing tasks.

use super::*;

pub(super) fn update_app(world: &SharedWorld, id: &str, body: &[u8], force: bool) -> Response {
    let update: AppUpdate = match serde_json::from_slice(body) {
        Ok(update) => update,
        Err(err) => return invalid_json(&err),
    };
    if update.instances.is_none() && update.accepted_resource_roles.is_none() {
        return not_valid(
            "/instances",
            "the simulator changes only 'instances' and 'acceptedResourceRoles'",
        );
    }
    // Marathon's `validAcceptedResourceRoles`: a non-empty set of valid
    // role names (its wording for a bad name is not established).
    if let Some(roles) = &update.accepted_resource_roles {
        if roles.is_empty() {
            return not_valid("/acceptedResourceRoles", "must not be empty");
        }
        if let Some(why) = roles.iter().find_map(|role| check_role(role).err()) {
            return not_valid("/acceptedResourceRoles", &why);
        }
    }
    let change = AppChange {
        instances: update.instances,
        accepted_resource_roles: update.accepted_resource_roles,
    };
    let result = world.with(|w| {
        w.update_app(id, change, force)
            .map(|deployment| (deployment, w.unix_ms(w.now())))
    });
    match result {
        Ok((deployment_id, now)) => json(
            StatusCode::OK,
            &DeploymentResult {
                version: timestamp(now),
                deployment_id,
            },
        ),
        // Marathon takes a PUT to an id it does not have as a create
        // (`AppHelpers.withoutPriorAppDefinition`), and refuses an app
        // with neither `cmd`, `args` nor a `container`, which a body of
        // `instances` or roles has none of.
        Err(MarathonError::AppNotFound { .. }) => not_valid(
            "/",
            "AppDefinition must either contain one of 'cmd' or 'args', and/or a 'container'.",
        ),
        Err(err) => marathon_error(&err),
    }
}

/// `DELETE /v2/deployments/{id}`, as `DeploymentsResource.cancel`
/// answers: without `force`, 200 with the rollback deployment
/// (`{"version", "deploymentId"}` and `Marathon-Deployment-Id`, as every
/// deployment result); with `force`, 202 and no body; an id not running,
/// 404 `DeploymentPlan <id> does not exist`.
pub(super) fn cancel_deployment(world: &SharedWorld, id: &str, force: bool) -> Response {
    let result = world.with(|w| {
        w.cancel_deployment(id, force)
            .map(|rollback| (rollback, w.unix_ms(w.now())))
    });
    match result {
        Ok((Some(deployment_id), now)) => {
            let mut response = json(
                StatusCode::OK,
                &DeploymentResult {
                    version: timestamp(now),
                    deployment_id: deployment_id.clone(),
                },
            );
            if let Ok(value) = HeaderValue::from_str(&deployment_id) {
                response.headers_mut().insert(DEPLOYMENT_HEADER, value);
            }
            response
        }
        Ok((None, _)) => StatusCode::ACCEPTED.into_response(),
        Err(err) => marathon_error(&err),
    }
}

/// `POST /v2/tasks/delete`. An id that names no app (Marathon reads the
/// app from the id: `app_path.uuid`) is a 400, as Marathon's
/// `Task.Id.runSpecId` fails on it; an unknown task of a well-formed id is
/// left out of the answer, as Marathon filters it.
pub(super) fn kill_tasks(world: &SharedWorld, body: &[u8], scale: bool, force: bool) -> Response {
    let ids: TaskIds = match serde_json::from_slice(body) {
        Ok(ids) => ids,
        Err(err) => return invalid_json(&err),
    };
    if let Some(bad) = ids.ids.iter().find(|id| !well_formed_task_id(id)) {
        return message(
            StatusCode::BAD_REQUEST,
            &format!("Invalid task id '{bad}'."),
        );
    }
    kill(world, &ids.ids, scale, force, false)
}

/// Whether Marathon can read an app id off a task id: a non-empty app
/// part, then `.` or `_`, then a non-empty part without either.
fn well_formed_task_id(id: &str) -> bool {
    match id.rfind(['.', '_']) {
        Some(at) => at > 0 && at + 1 < id.len(),
        None => false,
    }
}

/// Kills `ids` and answers as Marathon's task resources do: with `scale`
/// the deployment (`{"version", "deploymentId"}`); else the tasks killed,
/// `{"task": …}` for one addressed by its path (`single`), `{"tasks": […]}`
/// otherwise.
pub(super) fn kill(
    world: &SharedWorld,
    ids: &[String],
    scale: bool,
    force: bool,
    single: bool,
) -> Response {
    let ids = TaskIds { ids: ids.to_vec() };
    let outcome = world.with(|w| {
        if scale {
            // Scaling down changes the apps: locked apps refuse it, as
            // any app change, unless forced.
            let locked = locking_deployments(w, &ids.ids);
            if !locked.is_empty() && !force {
                return Err(locked);
            }
        }
        let result = w.kill_tasks(&ids.ids, scale);
        let deployment = result.deployment_id.clone().or_else(|| {
            scale
                .then(|| locking_deployments(w, &ids.ids).into_iter().next())
                .flatten()
        });
        Ok((result, deployment, w.unix_ms(w.now())))
    });
    match outcome {
        Err(deployments) => locked(deployments),
        Ok((_, Some(deployment_id), now)) if scale => json(
            StatusCode::OK,
            &DeploymentResult {
                version: timestamp(now),
                deployment_id,
            },
        ),
        Ok((result, _, _)) if single && !result.killed.is_empty() => json(
            StatusCode::OK,
            &wire::TaskSingle {
                task: Task::from_view(&result.killed[0]),
            },
        ),
        Ok((result, _, _)) => json(
            StatusCode::OK,
            &TaskList {
                tasks: result.killed.iter().map(Task::from_view).collect(),
            },
        ),
    }
}

/// The deployments touching the apps of these tasks.
fn locking_deployments(w: &World, task_ids: &[String]) -> Vec<String> {
    let apps: std::collections::BTreeSet<String> = w
        .tasks()
        .into_iter()
        .filter(|t| task_ids.contains(&t.id))
        .map(|t| t.app_id)
        .collect();
    apps.iter()
        .filter_map(|id| w.app(id, false).ok())
        .flat_map(|app| app.deployments)
        .collect()
}
