//! The roll's `MesosMaster` port over the master's HTTP API: which
//! endpoint each operation uses, how its answer is read, and which calls
//! may be sent twice.

use reqwest::StatusCode;
use serde::de::DeserializeOwned;

use crate::roll::ports::mesos::{
    Agents, Framework, MachineId, MaintenanceSchedule, MaintenanceStatus, MesosError, MesosMaster,
    ScheduleChange, Unavailability,
};

use crate::roll::ports::mesos::AgentId;
use crate::roll::ports::mesos::DrainOptions;

use super::client::{AgentListing, Call, MesosClient, Replay};
use super::maintenance::{Edited, schedule_machines, unschedule_machines};
use super::wire::{
    ClusterStatus, FrameworksResponse, GetAgentsResponse, MachineIdJson, Schedule, SlavesResponse,
    V1Call,
};

const SCHEDULE: &str = "master/maintenance/schedule";

impl MesosMaster for MesosClient {
    async fn agents(&self) -> Result<Agents, MesosError> {
        // Each listing falls back to the other where the master lacks it.
        let (first, second) = match self.agent_listing {
            AgentListing::MasterSlaves => (AgentListing::MasterSlaves, AgentListing::OperatorApi),
            AgentListing::OperatorApi => (AgentListing::OperatorApi, AgentListing::MasterSlaves),
        };
        match self.agents_by(first).await {
            Err(err) if lacks_endpoint(&err) => self.agents_by(second).await,
            result => result,
        }
    }

    async fn frameworks(&self) -> Result<Vec<Framework>, MesosError> {
        let call = Call::get("master/frameworks");
        let listed: FrameworksResponse = parse(&call.endpoint, &self.send(&call).await?)?;
        Ok(listed.into())
    }

    async fn maintenance_schedule(&self) -> Result<MaintenanceSchedule, MesosError> {
        let call = Call::get(SCHEDULE);
        let schedule: Schedule = parse(&call.endpoint, &self.send(&call).await?)?;
        Ok(schedule.into())
    }

    async fn schedule_maintenance(
        &self,
        machines: &[MachineId],
        unavailability: Unavailability,
    ) -> Result<ScheduleChange, MesosError> {
        self.edit_schedule(|schedule| schedule_machines(schedule, machines, unavailability))
            .await
    }

    async fn cancel_maintenance(
        &self,
        machines: &[MachineId],
    ) -> Result<ScheduleChange, MesosError> {
        self.edit_schedule(|schedule| unschedule_machines(schedule, machines))
            .await
    }

    async fn maintenance_status(&self) -> Result<MaintenanceStatus, MesosError> {
        let call = Call::get("master/maintenance/status");
        let status: ClusterStatus = parse(&call.endpoint, &self.send(&call).await?)?;
        Ok(status.into())
    }

    async fn machines_down(&self, machines: &[MachineId]) -> Result<(), MesosError> {
        self.post_machines("master/machine/down", machines).await
    }

    async fn machines_up(&self, machines: &[MachineId]) -> Result<(), MesosError> {
        self.post_machines("master/machine/up", machines).await
    }

    async fn drain_agent(&self, agent: &AgentId, options: DrainOptions) -> Result<(), MesosError> {
        let call = V1Call::drain_agent(agent, options.max_grace_period, options.mark_gone);
        self.call_v1(&call, Replay::IfNotProcessed, "Mesos 1.9 or later")
            .await
            .map(drop)
    }

    async fn deactivate_agent(&self, agent: &AgentId) -> Result<(), MesosError> {
        let call = V1Call::deactivate_agent(agent);
        self.call_v1(&call, Replay::IfNotProcessed, "Mesos 1.9 or later")
            .await
            .map(drop)
    }

    async fn reactivate_agent(&self, agent: &AgentId) -> Result<(), MesosError> {
        let call = V1Call::reactivate_agent(agent);
        self.call_v1(&call, Replay::IfNotProcessed, "Mesos 1.9 or later")
            .await
            .map(drop)
    }
}

impl MesosClient {
    async fn agents_by(&self, listing: AgentListing) -> Result<Agents, MesosError> {
        match listing {
            AgentListing::MasterSlaves => {
                let call = Call::get("master/slaves");
                let slaves: SlavesResponse = parse(&call.endpoint, &self.send(&call).await?)?;
                Ok(slaves.into_agents())
            }
            AgentListing::OperatorApi => {
                let body = self
                    .call_v1(&V1Call::get_agents(), Replay::Always, "Mesos 1.0 or later")
                    .await?;
                let agents: GetAgentsResponse = parse("POST /api/v1 GET_AGENTS", &body)?;
                Ok(agents.into_agents())
            }
        }
    }

    /// Read, change our machines only, write back if anything changed.
    /// Replaying the whole cycle is safe even when a write timed out: the
    /// next read shows whether it landed, and the edit is idempotent.
    /// (Mesos offers no compare-and-set: an operator writing between our
    /// read and write loses that write; the window is one round trip.)
    async fn edit_schedule(
        &self,
        edit: impl Fn(&MaintenanceSchedule) -> Edited,
    ) -> Result<ScheduleChange, MesosError> {
        self.with_retries(Replay::Always, || async {
            let read = Call::get(SCHEDULE);
            let current: Schedule = parse(&read.endpoint, &self.send_once(&read).await?)?;
            let edited = edit(&current.into());
            if edited.needs_write() {
                let body = to_json(&Schedule::from(&edited.schedule))?;
                self.send_once(&Call::post(SCHEDULE, body, Replay::Always))
                    .await?;
            }
            Ok(edited.change)
        })
        .await
    }

    /// `machine/down` and `machine/up` refuse a machine not in the mode
    /// they expect, so a replay of one that landed would fail: they are
    /// sent again only when the first try provably did not arrive.
    async fn post_machines(
        &self,
        path: &'static str,
        machines: &[MachineId],
    ) -> Result<(), MesosError> {
        // Mesos refuses an empty list; nothing to do is not an error.
        if machines.is_empty() {
            return Ok(());
        }
        let ids: Vec<MachineIdJson> = machines.iter().map(MachineIdJson::from).collect();
        let call = Call::post(path, to_json(&ids)?, Replay::IfNotProcessed);
        self.send(&call).await.map(drop)
    }

    /// A v1 operator call; a master without the call (or without the v1
    /// API) is `Unsupported`, naming `needs`.
    async fn call_v1(
        &self,
        v1: &V1Call,
        replay: Replay,
        needs: &str,
    ) -> Result<Vec<u8>, MesosError> {
        let mut call = Call::post("api/v1", to_json(v1)?, replay);
        call.endpoint = format!("POST /api/v1 {}", v1.kind);
        match self.send(&call).await {
            Err(MesosError::HttpStatus { status, body, .. })
                if status == StatusCode::NOT_FOUND.as_u16()
                    || (status == StatusCode::BAD_REQUEST.as_u16()
                        && body.contains("into Call protobuf")) =>
            {
                // An unknown call type fails the JSON-to-protobuf step:
                // "Failed to convert JSON into Call protobuf: ...".
                Err(MesosError::Unsupported {
                    call: v1.kind.to_string(),
                    detail: format!("needs {needs} (HTTP {status}: {body})"),
                })
            }
            result => result,
        }
    }
}

fn lacks_endpoint(err: &MesosError) -> bool {
    matches!(
        err,
        MesosError::Unsupported { .. } | MesosError::HttpStatus { status: 404, .. }
    )
}

pub(super) fn parse<T: DeserializeOwned>(endpoint: &str, body: &[u8]) -> Result<T, MesosError> {
    crate::http::from_json(body).map_err(|err| MesosError::BadResponse {
        endpoint: endpoint.to_string(),
        reason: err.to_string(),
    })
}

fn to_json(value: &impl serde::Serialize) -> Result<Vec<u8>, MesosError> {
    serde_json::to_vec(value).map_err(|err| MesosError::Config {
        reason: format!("cannot encode a request: {err}"),
    })
}
