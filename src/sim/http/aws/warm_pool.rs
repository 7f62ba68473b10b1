//! The warm-pool actions of Auto Scaling over the world: PutWarmPool,
//! DescribeWarmPool (paged by MaxRecords, at most 50, and NextToken) and
//! DeleteWarmPool, their parameters read as the SDK sends them and their
//! answers in AWS's XML.

use super::query::{Params, QueryError, Service, page, world_error};
use super::xml::Xml;
use crate::sim::scenario::WarmPoolSpec;
use crate::sim::world::World;

/// The warm-pool actions the facade answers.
pub(super) const ACTIONS: &[&str] = &["PutWarmPool", "DescribeWarmPool", "DeleteWarmPool"];

/// DescribeWarmPool's page maximum (AWS's: "The maximum value is 50").
const MAX_WARM_RECORDS: i64 = 50;

/// The answer to a warm-pool action (`None` for other actions); an
/// answer's body is `None` for actions whose result is empty.
pub(super) fn dispatch(
    w: &mut World,
    action: &str,
    p: &Params,
) -> Option<Result<Option<String>, QueryError>> {
    Some(match action {
        "PutWarmPool" => put(w, p).map(|()| Some(String::new())),
        "DescribeWarmPool" => describe(w, p).map(Some),
        "DeleteWarmPool" => delete(w, p).map(|()| Some(String::new())),
        _ => return None,
    })
}

/// PutWarmPool with AWS's defaults for what is left out (MinSize 0,
/// PoolState Stopped, no reuse on scale-in, MaxGroupPreparedCapacity the
/// group's MaxSize; -1 removes a value set before).
fn put(w: &mut World, p: &Params) -> Result<(), QueryError> {
    let group = p.required("AutoScalingGroupName")?;
    let count = |name: &str| -> Result<Option<u32>, QueryError> {
        Ok(p.int(name)?.and_then(|n| u32::try_from(n).ok()))
    };
    let spec = WarmPoolSpec {
        min_size: count("MinSize")?.unwrap_or(0),
        max_group_prepared_capacity: count("MaxGroupPreparedCapacity")?,
        pool_state: p.get("PoolState").unwrap_or("Stopped").to_string(),
        reuse_on_scale_in: p
            .bool("InstanceReusePolicy.ReuseOnScaleIn")?
            .unwrap_or(false),
    };
    w.put_warm_pool(group, &spec).map_err(world_error)
}

fn describe(w: &mut World, p: &Params) -> Result<String, QueryError> {
    let group = p.required("AutoScalingGroupName")?;
    let max = match p.int("MaxRecords")? {
        None => MAX_WARM_RECORDS,
        Some(n) if (1..=MAX_WARM_RECORDS).contains(&n) => n,
        Some(n) => {
            return Err(QueryError::sender(
                "ValidationError",
                format!(
                    "1 validation error detected: Value '{n}' at 'maxRecords' failed to satisfy constraint: Member must have value less than or equal to 50"
                ),
            ));
        }
    };
    let pool = w.warm_pool(group).map_err(world_error)?;
    let mut x = Xml::new();
    let Some(pool) = pool else {
        // AWS answers a group without a pool with no configuration and
        // no instances.
        x.empty("Instances");
        return Ok(x.finish());
    };
    x.open("WarmPoolConfiguration")
        .opt_leaf("MaxGroupPreparedCapacity", pool.max_group_prepared_capacity)
        .leaf("MinSize", pool.min_size)
        .leaf("PoolState", pool.pool_state)
        .opt_leaf("Status", pool.status)
        .open("InstanceReusePolicy")
        .leaf("ReuseOnScaleIn", pool.reuse_on_scale_in)
        .close("InstanceReusePolicy")
        .close("WarmPoolConfiguration");
    let (instances, next) = page(
        Service::AutoScaling,
        pool.instances,
        |i| i.instance_id.as_str(),
        p.get("NextToken"),
        usize::try_from(max).unwrap_or(50),
    )?;
    x.open("Instances");
    for i in &instances {
        x.open("member")
            .leaf("InstanceId", &i.instance_id)
            .leaf("InstanceType", &i.instance_type)
            .leaf("AvailabilityZone", &i.availability_zone)
            .leaf("LifecycleState", i.lifecycle_state)
            .leaf("HealthStatus", i.health_status)
            .open("LaunchTemplate")
            .leaf("LaunchTemplateId", &i.launch_template.id)
            .leaf("LaunchTemplateName", &i.launch_template.name)
            .leaf("Version", &i.launch_template.version)
            .close("LaunchTemplate")
            .leaf("ProtectedFromScaleIn", i.protected_from_scale_in)
            .close("member");
    }
    x.close("Instances").opt_leaf("NextToken", next);
    Ok(x.finish())
}

fn delete(w: &mut World, p: &Params) -> Result<(), QueryError> {
    let group = p.required("AutoScalingGroupName")?;
    let force = p.bool("ForceDelete")?.unwrap_or(false);
    w.delete_warm_pool(group, force).map_err(world_error)
}
