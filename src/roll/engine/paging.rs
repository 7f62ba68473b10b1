//! Pausing on a timeout and the page that goes with it: the step reads
//! `DELAYED`, the pause is recorded, and a page goes out when a pager is
//! configured. A rerun resumes from the pause with a fresh deadline. A page stays open until its step completes (or is
//! force-completed), the plan completes, or the roll is abandoned.

use std::collections::BTreeMap;

use super::clock::RollClock;
use super::journal::Journal;
use crate::plan::{Status, StepIndex};
use crate::roll::ports::pager::{Page, Pager, Severity};
use crate::roll::record::checkpoint::{Checkpoint, CheckpointError, EventKind, OpenPage, Pause};

/// Who pages and how the human resumes, as the page says it.
pub(crate) struct PageOrigin<'a> {
    /// The page's `source` (the environment's `[pager] source`, else this
    /// machine's name).
    pub(crate) source: &'a str,
    /// The command an operator runs to resume.
    pub(crate) resume_command: &'a str,
}

/// A wait outlived its timeout: records the pause (the step at `at` reads
/// `DELAYED`, so no tick offers it) and pages. Returns whether a
/// configured pager accepted the page.
pub(crate) async fn pause<G: Pager>(
    journal: &mut Journal<'_>,
    pager: &G,
    at: StepIndex,
    reason: &str,
    since: String,
    origin: PageOrigin<'_>,
) -> Result<bool, CheckpointError> {
    let checkpoint = &mut journal.checkpoint;
    let name = checkpoint.step_name(at);
    let step = checkpoint.plan.step_mut(at);
    step.status = Status::Delayed;
    step.message = format!("PAUSED at {since}: {reason}");
    let dedup_key = format!("roller/{}/{}", checkpoint.run_id, name);
    checkpoint.pause = Some(Pause {
        step: name.clone(),
        reason: reason.to_string(),
        since,
        dedup_key: dedup_key.clone(),
        paged: false,
    });
    journal.log(EventKind::Pause, format!("{name}: {reason}"));
    journal.save().await?;
    let paged = if pager.is_configured() {
        let page = page(journal, at, reason, dedup_key, origin);
        match pager.trigger(&page).await {
            Ok(()) => {
                journal.log(EventKind::Paged, format!("page sent for {name}"));
                true
            }
            Err(err) => {
                journal.log(
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
    if let Some(pause) = &mut journal.checkpoint.pause {
        pause.paged = paged;
    }
    journal.save().await?;
    Ok(paged)
}

/// The page of a pause at the step `at`, naming the group it acts on.
fn page(
    journal: &Journal<'_>,
    at: StepIndex,
    reason: &str,
    dedup_key: String,
    origin: PageOrigin<'_>,
) -> Page {
    let checkpoint = &journal.checkpoint;
    let name = &checkpoint.step_name(at);
    let asg = checkpoint.group_of(at).map_or_else(
        || checkpoint.name().to_string(),
        |g| checkpoint.group(g).asg.clone(),
    );
    let resume = origin.resume_command.to_string();
    Page {
        dedup_key,
        summary: format!("roller paused rolling ASG {asg} at {name}: {reason}. Resume: {resume}"),
        severity: Severity::Error,
        source: origin.source.to_string(),
        component: Some(asg.clone()),
        group: Some("roller".to_string()),
        class: Some("roll_paused".to_string()),
        details: {
            let mut details = failure_details(&journal.checkpoint);
            details.extend([
                ("asg".to_string(), asg),
                ("step".to_string(), name.to_string()),
                ("run_id".to_string(), journal.checkpoint.run_id.clone()),
                ("resume_command".to_string(), resume),
            ]);
            details
        },
    }
}

/// The rollback is complete: logs it and pages (when a pager is
/// configured) that the cluster was rolled back and what failed. The
/// page stays open: a bad image needs a human. Returns whether it went
/// out.
pub(crate) async fn rolled_back<G: Pager>(
    journal: &mut Journal<'_>,
    pager: &G,
    failure: &str,
    source: &str,
) -> Result<bool, CheckpointError> {
    let asg = rolled_back_groups(&journal.checkpoint).join(", ");
    journal.log(
        EventKind::RolledBack,
        format!("rolled back after a failure on a new agent: {failure}"),
    );
    journal.save().await?;
    if !pager.is_configured() {
        return Ok(false);
    }
    let checkpoint = &journal.checkpoint;
    let mut details = failure_details(checkpoint);
    details.insert("asg".to_string(), asg.clone());
    details.insert("run_id".to_string(), checkpoint.run_id.clone());
    let page = Page {
        dedup_key: format!("roller/{}/rolled-back", checkpoint.run_id),
        summary: format!(
            "roller rolled ASG {asg} back after a failure on a new agent: {failure}. \
             The cluster is as it was before the roll; the new image needs a look"
        ),
        severity: Severity::Warning,
        source: source.to_string(),
        component: Some(asg),
        group: Some("roller".to_string()),
        class: Some("roll_rolled_back".to_string()),
        details,
    };
    let paged = match pager.trigger(&page).await {
        Ok(()) => {
            journal.log(EventKind::Paged, "page sent: rolled back".to_string());
            true
        }
        Err(err) => {
            journal.log(
                EventKind::PageFailed,
                format!("the page did not go out: {err}"),
            );
            false
        }
    };
    journal.save().await?;
    Ok(paged)
}

/// The groups the plan rolled back (those with a rollback phase), in
/// plan order; the checkpoint's name if none says so.
fn rolled_back_groups(checkpoint: &Checkpoint) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for (_, step) in checkpoint.plan.steps() {
        if let Some(kind) = step.kind.as_ref().filter(|k| k.kind.is_rollback()) {
            let asg = &checkpoint.group(kind.group).asg;
            if !names.contains(asg) {
                names.push(asg.clone());
            }
        }
    }
    if names.is_empty() {
        names.push(checkpoint.name().to_string());
    }
    names
}

/// The evidence of the failure found on the new agents, as page details
/// (`failure_app`, `failure_task`, …); empty when there is none.
fn failure_details(checkpoint: &Checkpoint) -> BTreeMap<String, String> {
    let Some(f) = &checkpoint.failure else {
        return BTreeMap::new();
    };
    [
        ("failure", Some(&f.what)),
        ("failure_app", f.app.as_ref()),
        ("failure_task", f.task.as_ref()),
        ("failure_agent", f.agent.as_ref()),
        ("failure_instance", f.instance.as_ref()),
        ("failure_since", f.since.as_ref()),
        ("failure_found", Some(&f.found)),
    ]
    .into_iter()
    .filter_map(|(k, v)| v.map(|v| (k.to_string(), v.clone())))
    .collect()
}

/// Resolves the open page once its step is COMPLETE (done, or
/// force-completed by an operator).
pub(crate) async fn resolve_settled_page<G: Pager>(
    journal: &mut Journal<'_>,
    pager: &G,
) -> Result<(), CheckpointError> {
    let checkpoint = &journal.checkpoint;
    let settled = checkpoint.open_page.as_ref().is_some_and(|page| {
        checkpoint
            .find_step(&page.step)
            .is_none_or(|at| checkpoint.plan.step(at).is_complete())
    });
    if settled {
        resolve_open_page(journal, pager).await?;
    }
    Ok(())
}

/// Resolves the open page, if any (a failure is logged: the roll goes
/// on, and the page's own auto-resolution, if any, remains).
pub(crate) async fn resolve_open_page<G: Pager>(
    journal: &mut Journal<'_>,
    pager: &G,
) -> Result<(), CheckpointError> {
    let Some(page) = journal.checkpoint.open_page.take() else {
        return Ok(());
    };
    match pager.resolve(&page.dedup_key).await {
        Ok(()) => journal.log(
            EventKind::PageResolved,
            format!("{} got past its pause", page.step),
        ),
        Err(err) => journal.log(
            EventKind::PageFailed,
            format!("resolving the page of {} failed: {err}", page.step),
        ),
    }
    journal.save().await
}

/// `roller abandon`: resolves the roll's page, a paused one's included;
/// what it logged, if there was a page.
pub(crate) async fn resolve_page_of_abandoned<G: Pager>(
    journal: &mut Journal<'_>,
    pager: &G,
) -> Result<Option<String>, CheckpointError> {
    let checkpoint = &mut journal.checkpoint;
    if let Some(page) = checkpoint.pause.take().as_ref().and_then(keep_page_open) {
        checkpoint.open_page = Some(page);
    }
    if checkpoint.open_page.is_none() {
        return Ok(None);
    }
    resolve_open_page(journal, pager).await?;
    Ok(journal
        .checkpoint
        .events
        .last()
        .map(|event| match event.kind {
            EventKind::PageResolved => "resolved the roll's open page".to_string(),
            _ => event.message.clone(),
        }))
}

/// A paused roll that is resumed or abandoned keeps its page open until
/// it is resolved: the pause's page becomes the open page.
pub(crate) fn keep_page_open(pause: &Pause) -> Option<OpenPage> {
    pause.paged.then(|| OpenPage {
        step: pause.step.clone(),
        dedup_key: pause.dedup_key.clone(),
    })
}

/// A rerun after a timeout: the paused step runs again with a fresh
/// deadline (a human chose to give it more time), and the page stays open
/// until the step completes.
pub(crate) async fn resume_after_pause(
    journal: &mut Journal<'_>,
    clock: &RollClock,
) -> Result<(), CheckpointError> {
    let Some(pause) = journal.checkpoint.pause.take() else {
        return Ok(());
    };
    let now = clock.now_unix_ms();
    let checkpoint = &mut journal.checkpoint;
    if let Some(at) = paused_step(checkpoint, &pause.step) {
        let id = checkpoint.plan.step(at).id.clone();
        let step = checkpoint.plan.step_mut(at);
        step.status = Status::Started;
        step.message = format!("resuming after the pause of {}", pause.since);
        if let Some(wait) = checkpoint
            .progress
            .get_mut(&id)
            .and_then(|p| p.wait.as_mut())
        {
            wait.since_unix_ms = now;
        }
    }
    if let Some(page) = keep_page_open(&pause) {
        checkpoint.open_page = Some(page);
    }
    journal.log(
        EventKind::Resume,
        format!("resuming after the pause at {}", pause.step),
    );
    journal.save().await
}

/// The step `name` (`phase/step`) if it is the one a pause left DELAYED.
pub(crate) fn paused_step(checkpoint: &Checkpoint, name: &str) -> Option<StepIndex> {
    checkpoint
        .find_step(name)
        .filter(|&at| checkpoint.plan.step(at).status == Status::Delayed)
}

/// This machine's name, the page's `source` (who is paging).
pub(crate) fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok().filter(|s| !s.is_empty()))
        .unwrap_or_else(|| "roller".to_string())
}
