//! `GET /v2/info`: every key of Marathon 1.5's RAML example, with the values
//! a default Marathon has (DC/OS's `mesos_role` when the scenario reserves
//! agents to a role).

use super::*;

pub(super) fn info(marathon: &Marathon) -> Response {
    let leader = marathon.peers.leader();
    let own = authority(marathon.peers.url(marathon.index));
    let (host, port) = match own.rsplit_once(':') {
        Some((host, port)) => (host, port.parse().unwrap_or(8080)),
        None => (own, 8080),
    };
    // `--mesos_role`: unset (null) unless the scenario reserves agents to
    // a role, as DC/OS sets `slave_public` (the RAML example's value).
    let role = marathon.world.with(|w| {
        let role = w.marathon_role();
        (role != "*").then(|| role.to_string())
    });
    json(
        StatusCode::OK,
        &Info {
            name: "marathon",
            version: MARATHON_VERSION,
            buildref: "simulated",
            elected: leader == marathon.index,
            leader: authority(marathon.peers.url(leader)).to_string(),
            // The id the masters list Marathon's tasks under.
            framework_id: marathon.world.with(|w| w.marathon_framework_id()),
            marathon_config: serde_json::json!({
                "access_control_allow_origin": ["*"],
                "checkpoint": true,
                "decline_offer_duration": 120_000,
                "default_network_name": null,
                "env_vars_prefix": null,
                "executor": "//cmd",
                "failover_timeout": 604_800,
                "features": [],
                "framework_name": "marathon",
                "ha": true,
                "hostname": host,
                "launch_token": 100,
                "launch_token_refresh_interval": 30_000,
                "leader_proxy_connection_timeout_ms": 5_000,
                "leader_proxy_read_timeout_ms": 10_000,
                "local_port_max": 20_000,
                "local_port_min": 10_000,
                "master": "zk://simulated:2181/mesos",
                "max_instances_per_offer": 5,
                "mesos_bridge_name": "mesos-bridge",
                "mesos_heartbeat_failure_threshold": 5,
                "mesos_heartbeat_interval": 15_000,
                "mesos_leader_ui_url": null,
                "mesos_role": role,
                "mesos_user": "root",
                "min_revive_offers_interval": 5_000,
                "offer_matching_timeout": 3_000,
                "on_elected_prepare_timeout": 180_000,
                "reconciliation_initial_delay": 15_000,
                "reconciliation_interval": 600_000,
                "scale_apps_initial_delay": 15_000,
                "scale_apps_interval": 300_000,
                "store_cache": true,
                "task_launch_confirm_timeout": 300_000,
                "task_launch_timeout": 300_000,
                "task_lost_expunge_initial_delay": 300_000,
                "task_lost_expunge_interval": 30_000,
                "task_reservation_timeout": 20_000,
                "webui_url": null,
            }),
            zookeeper_config: serde_json::json!({
                "zk": "zk://simulated:2181/marathon",
                "zk_compression": true,
                "zk_compression_threshold": 65_536,
                "zk_connection_timeout": 10_000,
                "zk_max_node_size": 1_024_000,
                "zk_max_versions": 50,
                "zk_session_timeout": 10_000,
                "zk_timeout": 10_000,
            }),
            http_config: wire::HttpConfig {
                http_port: port,
                https_port: 8443,
            },
        },
    )
}
