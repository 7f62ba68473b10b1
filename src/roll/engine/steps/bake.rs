//! The bake: once the first tasks have moved to the new agents (the
//! drain's first wave, or the first replacement's moves), no old agent is
//! terminated and no further wave starts until they have stayed up there
//! for a bake time, while the failure watch looks at them each tick. A
//! bad image then costs the first moves only, and the rollback finds
//! every old agent still there.
//!
//! The bake time is the environment's `bake` (`--bake`), else twice the
//! longest health-check interval among the apps on the new agents, at
//! least `MIN_BAKE` (two checks must pass).
//! It is recorded when it starts (`Checkpoint::bake_until_unix_ms`), so a
//! resume keeps the same end.

use std::time::Duration;

use super::{StepContext, Wait};
use crate::roll::error::RollError;
use crate::roll::ports::Ports;
use crate::roll::record::kinds::WaitKind;

/// The shortest bake.
pub(crate) const MIN_BAKE: Duration = Duration::from_secs(60);

impl<P: Ports> StepContext<'_, '_, P> {
    /// `None` once the bake is over; else what the step waits for. With
    /// `start`, a bake not begun begins now (the first moves are done);
    /// without, the step waits for them.
    pub(crate) async fn bake_gate(&mut self, start: bool) -> Result<Option<Wait>, RollError> {
        let now = self.clock.now_unix_ms();
        let until = match self.group().bake_until_unix_ms {
            Some(until) => until,
            None if !start => {
                return Ok(Some(Wait {
                    kind: WaitKind::TaskMoves,
                    extension: Duration::ZERO,
                    message:
                        "no old agent goes before the first moves have baked on the new agents"
                            .to_string(),
                }));
            }
            None => {
                let bake = self.bake_time().await?;
                let until = now + u64::try_from(bake.as_millis()).unwrap_or(u64::MAX);
                self.group_mut().bake_until_unix_ms = Some(until);
                self.record(
                    crate::roll::record::checkpoint::EventKind::Step,
                    format!(
                        "the first moves bake on the new agents for {} s before any old agent goes",
                        bake.as_secs()
                    ),
                );
                self.save().await?;
                until
            }
        };
        if now >= until {
            return Ok(None);
        }
        Ok(Some(Wait {
            kind: WaitKind::TaskMoves,
            extension: Duration::ZERO,
            message: format!(
                "baking: the first moves must stay up on the new agents {} s more before any old agent goes",
                (until - now).div_ceil(1000)
            ),
        }))
    }

    /// The environment's `bake`, else twice the longest health-check
    /// interval of the apps with tasks on the new agents, at least
    /// `MIN_BAKE`.
    async fn bake_time(&mut self) -> Result<Duration, RollError> {
        if let Some(bake) = self.env.bake {
            return Ok(bake);
        }
        let seen = self.tick.observation().await?;
        let new: std::collections::HashSet<&str> = self
            .group()
            .new_agents
            .iter()
            .map(|a| a.agent_id.as_str())
            .collect();
        let longest = seen
            .apps
            .iter()
            .filter(|a| {
                a.tasks
                    .iter()
                    .any(|t| t.agent_id.as_deref().is_some_and(|id| new.contains(id)))
            })
            .filter_map(|a| a.health_check_interval)
            .max()
            .unwrap_or_default();
        Ok((longest * 2).max(MIN_BAKE))
    }
}
