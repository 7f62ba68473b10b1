//! Pausing on a timeout and the page that goes with it: the step reads
//! `DELAYED`, the pause is recorded, and a page goes out when a pager is
//! configured. A page stays open until its step completes (or is
//! force-completed), the plan completes, or the roll is abandoned.

use std::collections::BTreeMap;

use super::checkpoint::{EventKind, Pause};
use super::error::RollError;
use super::ports::auto_scaling::AutoScaling;
use super::ports::marathon::Marathon;
use super::ports::mesos::MesosMaster;
use super::ports::pager::{Page, Pager, Severity};
use super::runner::{Ended, Outcome, Runner};
use crate::plan::{Status, StepIndex};

impl<A, M, K, P> Runner<'_, A, M, K, P>
where
    A: AutoScaling + Sync,
    M: MesosMaster + Sync,
    K: Marathon + Sync,
    P: Pager,
{
    /// A wait outlived its timeout: record the pause (the step reads
    /// DELAYED, so no tick offers it), page, and stop with exit 3.
    pub(super) async fn pause(mut self, at: StepIndex, reason: String) -> Result<Ended, RollError> {
        let name = self.step_name(at);
        let since = self.clock.utc();
        let step = self.checkpoint.plan.step_mut(at);
        step.status = Status::Delayed;
        step.message = format!("PAUSED at {since}: {reason}");
        let dedup_key = format!("roller/{}/{}", self.checkpoint.run_id, name);
        self.checkpoint.pause = Some(Pause {
            step: name.clone(),
            reason: reason.clone(),
            since,
            dedup_key: dedup_key.clone(),
            paged: false,
        });
        self.checkpoint
            .log(EventKind::Pause, format!("{name}: {reason}"));
        self.save().await?;
        let paged = if self.ports.pager.is_configured() {
            let page = self.page(&name, &reason, dedup_key);
            match self.ports.pager.trigger(&page).await {
                Ok(()) => {
                    self.checkpoint
                        .log(EventKind::Paged, format!("page sent for {name}"));
                    true
                }
                Err(err) => {
                    self.checkpoint.log(
                        EventKind::PageFailed,
                        format!("the page did not go out: {err}"),
                    );
                    // The event is logged as a warning (`report`).
                    false
                }
            }
        } else {
            false
        };
        if let Some(pause) = &mut self.checkpoint.pause {
            pause.paged = paged;
        }
        self.save().await?;
        Ok((
            Outcome::Paused {
                step: name,
                reason,
                paged,
            },
            self.checkpoint,
            self.store,
        ))
    }

    fn page(&self, name: &str, reason: &str, dedup_key: String) -> Page {
        let asg = self.checkpoint.asg.clone();
        let resume = self.options.resume_command.clone();
        Page {
            dedup_key,
            summary: format!(
                "roller paused rolling ASG {asg} at {name}: {reason}. Resume: {resume}"
            ),
            severity: Severity::Error,
            source: self.env.pager.source.clone().unwrap_or_else(host_name),
            component: Some(asg.clone()),
            group: Some("roller".to_string()),
            class: Some("roll_paused".to_string()),
            details: BTreeMap::from([
                ("asg".to_string(), asg),
                ("step".to_string(), name.to_string()),
                ("run_id".to_string(), self.checkpoint.run_id.clone()),
                ("resume_command".to_string(), resume),
            ]),
        }
    }

    /// Resolves the open page once its step is COMPLETE (done, or
    /// force-completed by an operator).
    pub(super) async fn resolve_settled_page(&mut self) -> Result<(), RollError> {
        let settled = self.checkpoint.open_page.as_ref().is_some_and(|page| {
            self.checkpoint
                .find_step(&page.step)
                .is_none_or(|at| self.checkpoint.plan.step(at).is_complete())
        });
        if settled {
            self.resolve_open_page().await?;
        }
        Ok(())
    }

    /// Resolves the open page, if any (a failure is logged: the roll goes
    /// on, and the page's own auto-resolution, if any, remains).
    pub(super) async fn resolve_open_page(&mut self) -> Result<(), RollError> {
        let Some(page) = self.checkpoint.open_page.take() else {
            return Ok(());
        };
        match self.ports.pager.resolve(&page.dedup_key).await {
            Ok(()) => self.checkpoint.log(
                EventKind::PageResolved,
                format!("{} got past its pause", page.step),
            ),
            Err(err) => self.checkpoint.log(
                EventKind::PageFailed,
                format!("resolving the page of {} failed: {err}", page.step),
            ),
        }
        self.save().await?;
        Ok(())
    }
}

/// This machine's name, the page's `source` (who is paging).
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok().filter(|s| !s.is_empty()))
        .unwrap_or_else(|| "roller".to_string())
}
