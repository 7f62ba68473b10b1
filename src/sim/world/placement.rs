//! Where Marathon puts a task: an agent that is registered, answering,
//! active, not draining, not inside a maintenance window (Marathon's
//! maintenance mode), whose resources are of a role the app accepts
//! (`acceptedResourceRoles`, `*` by default: a DC/OS public agent, all of
//! it reserved to `slave_public`, takes only apps that name that role), with
//! room for the task's cpus and mem, and, for `["hostname", "UNIQUE"]`
//! apps, running no other task of the app. Among those, the choice is
//! seeded: a scan from a random agent, so a seed replays the same placement
//! and most placements cost O(1).

use std::collections::HashSet;

use super::World;
use super::events::{AgentIdx, AppIdx, Event};
use crate::sim::scenario::accepts;

impl World {
    fn agent_takes(
        &self,
        agent: AgentIdx,
        a: AppIdx,
        count: u64,
        taken: &HashSet<AgentIdx>,
    ) -> bool {
        let ag = &self.mesos.agents[agent];
        let app = &self.marathon.apps[a];
        ag.is_registered()
            && ag.answering
            && !ag.deactivated
            && ag.drain.is_none()
            && ag.used_cpus + app.cpus * count <= ag.cpus
            && ag.used_mem + app.mem * count <= ag.mem
            && !(app.unique && taken.contains(&agent))
            && self.accepted_on(a, agent)
            && !self.in_maintenance(agent)
    }

    /// The app's roles take the agent's resources (a task of it there is
    /// placed as Marathon places it; anything else is misplaced).
    pub(crate) fn accepted_on(&self, a: AppIdx, agent: AgentIdx) -> bool {
        let reserved_to = self.groups[self.mesos.agents[agent].group].role.as_deref();
        accepts(self.marathon.apps[a].accepted_roles.as_deref(), reserved_to)
    }

    fn scan_for(&mut self, a: AppIdx, count: u64) -> Option<AgentIdx> {
        let n = self.mesos.agents.len();
        if n == 0 {
            return None;
        }
        let app = &self.marathon.apps[a];
        let taken: HashSet<AgentIdx> = if app.unique {
            app.tasks
                .iter()
                .map(|k| self.marathon.tasks[k].agent)
                .collect()
        } else {
            HashSet::new()
        };
        let start = self.rng.below(n as u64) as usize;
        (0..n)
            .map(|k| (start + k) % n)
            .find(|&agent| self.agent_takes(agent, a, count, &taken))
    }

    /// An agent for one more task of `a`, if any has room.
    pub(crate) fn pick_agent(&mut self, a: AppIdx) -> Option<AgentIdx> {
        self.scan_for(a, 1)
    }

    /// The scenario's tasks at time zero. A `colocate` app gets one agent
    /// with room for all its tasks (the hazard); others spread. Tasks that
    /// fit nowhere wait for offers, as Marathon's would.
    pub(crate) fn place_initial_tasks(&mut self) {
        for a in 0..self.marathon.apps.len() {
            let app = &self.marathon.apps[a];
            let instances = app.instances;
            if app.colocate
                && let Some(agent) = self.scan_for(a, u64::from(instances))
            {
                for _ in 0..instances {
                    self.start_task(a, agent, true);
                }
                continue;
            }
            for _ in 0..instances {
                match self.pick_agent(a) {
                    Some(agent) => {
                        self.start_task(a, agent, true);
                    }
                    None => {
                        self.marathon.waiting.insert(a);
                        break;
                    }
                }
            }
        }
        self.offers_changed();
    }

    /// Makes sure apps waiting for room look at offers again soon.
    pub(crate) fn offers_changed(&mut self) {
        if !self.marathon.waiting.is_empty() && !self.marathon.offer_cycle_scheduled {
            self.marathon.offer_cycle_scheduled = true;
            self.schedule_in(self.timing.offer_interval_ms, Event::OfferCycle);
        }
    }

    /// Every waiting app tries again; those still short keep waiting.
    pub(crate) fn on_offer_cycle(&mut self) {
        self.marathon.offer_cycle_scheduled = false;
        let waiting: Vec<AppIdx> = std::mem::take(&mut self.marathon.waiting)
            .into_iter()
            .collect();
        for a in waiting {
            self.launch_missing(a);
        }
        self.offers_changed();
    }
}
