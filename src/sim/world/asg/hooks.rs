//! Lifecycle hooks, as AWS documents them: PutLifecycleHook,
//! DescribeLifecycleHooks and DeleteLifecycleHook on a group; a launch
//! hook holds each instance that has booted in `Pending:Wait`, a
//! termination hook each terminated instance in `Terminating:Wait`, until
//! every hook of the transition has its action completed
//! (CompleteLifecycleAction), by its heartbeat timeout (restarted by
//! RecordLifecycleActionHeartbeat) with its default result, or by the
//! global timeout (100 × the heartbeat timeout, at most 48 hours).
//!
//! What follows a wait: a termination goes on to `Terminating:Proceed`
//! and is shut down whatever the result; a launch goes in service when
//! every hook continued, and is terminated when one abandoned.
//!
//! What is not modelled: notification targets and metadata, the wait
//! of an instance whose group is deleted, and the machine of a
//! terminating instance running on during its wait (its agent stops
//! answering when the termination begins, as without a hook).

use super::*;
use crate::sim::scenario::{HOOK_LAUNCHING, LifecycleHookSpec};

/// AWS's cap on how long an instance waits, whatever the heartbeats.
const MAX_GLOBAL_TIMEOUT_MS: u64 = 48 * 3600 * 1000;

/// One lifecycle hook of a group.
#[derive(Clone, Debug)]
pub(super) struct Hook {
    name: String,
    launching: bool,
    heartbeat_timeout_s: u64,
    default_continue: bool,
}

impl Hook {
    /// From a checked spec (`LifecycleHookSpec::check`).
    pub(super) fn from_spec(spec: &LifecycleHookSpec) -> Hook {
        Hook {
            name: spec.name.clone(),
            launching: spec.transition == HOOK_LAUNCHING,
            heartbeat_timeout_s: spec.heartbeat_timeout,
            default_continue: spec.default_result == "CONTINUE",
        }
    }

    fn heartbeat_ms(&self) -> u64 {
        self.heartbeat_timeout_s * 1000
    }
}

/// One instance's wait in `Pending:Wait` or `Terminating:Wait`.
#[derive(Clone, Debug)]
pub(crate) struct HookWait {
    /// The hooks whose action is not completed yet, each with when its
    /// heartbeat timeout runs out and its action's token.
    pending: BTreeMap<String, PendingAction>,
    /// When the instance stops waiting whatever the heartbeats.
    global_deadline: SimTime,
    /// A hook abandoned (by call or by default): a launch is terminated.
    abandoned: bool,
}

#[derive(Clone, Debug)]
struct PendingAction {
    deadline: SimTime,
    token: String,
    heartbeat_ms: u64,
    default_continue: bool,
}

/// DescribeLifecycleHooks' view of one hook.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct HookView {
    pub(crate) name: String,
    pub(crate) group_name: String,
    pub(crate) transition: &'static str,
    pub(crate) heartbeat_timeout_s: u64,
    pub(crate) global_timeout_s: u64,
    pub(crate) default_result: &'static str,
}

/// How a lifecycle action is named in CompleteLifecycleAction and
/// RecordLifecycleActionHeartbeat: by instance id or by the token.
#[derive(Clone, Copy, Debug)]
pub(crate) enum ActionRef<'a> {
    Instance(&'a str),
    Token(&'a str),
}

impl World {
    /// PutLifecycleHook: creates the hook or replaces the one of that
    /// name. Instances already waiting keep the timeouts they began with.
    pub(crate) fn put_lifecycle_hook(
        &mut self,
        group: &str,
        spec: &LifecycleHookSpec,
    ) -> Result<(), AwsError> {
        const ACTION: &str = "PutLifecycleHook";
        let gi = self.check_group(ACTION, group)?;
        spec.check().map_err(|message| AwsError::Validation {
            action: ACTION,
            message,
        })?;
        let hook = Hook::from_spec(spec);
        let hooks = &mut self.groups[gi].hooks;
        match hooks.iter_mut().find(|h| h.name == spec.name) {
            Some(existing) => *existing = hook,
            None => hooks.push(hook),
        }
        Ok(())
    }

    /// DeleteLifecycleHook: instances waiting for it go on as if it had
    /// continued (AWS: "If there are any outstanding lifecycle actions,
    /// they are completed first").
    pub(crate) fn delete_lifecycle_hook(
        &mut self,
        group: &str,
        name: &str,
    ) -> Result<(), AwsError> {
        const ACTION: &str = "DeleteLifecycleHook";
        let gi = self.check_group(ACTION, group)?;
        let before = self.groups[gi].hooks.len();
        self.groups[gi].hooks.retain(|h| h.name != name);
        if self.groups[gi].hooks.len() == before {
            return Err(no_hook(ACTION, group, name));
        }
        let waiting: Vec<InstanceIdx> = self.groups[gi].members.clone();
        for idx in waiting {
            if let Some(wait) = self.instances[idx].hook_wait.as_mut() {
                wait.pending.remove(name);
            }
            self.end_wait_if_done(idx);
        }
        Ok(())
    }

    /// DescribeLifecycleHooks: the group's hooks (those named, when
    /// names are given), in the order they were put.
    pub(crate) fn lifecycle_hooks(
        &self,
        group: &str,
        names: &[String],
    ) -> Result<Vec<HookView>, AwsError> {
        let gi = self.check_group("DescribeLifecycleHooks", group)?;
        Ok(self.groups[gi]
            .hooks
            .iter()
            .filter(|h| names.is_empty() || names.contains(&h.name))
            .map(|h| HookView {
                name: h.name.clone(),
                group_name: group.to_string(),
                transition: if h.launching {
                    HOOK_LAUNCHING
                } else {
                    crate::sim::scenario::HOOK_TERMINATING
                },
                heartbeat_timeout_s: h.heartbeat_timeout_s,
                global_timeout_s: global_timeout_ms(h.heartbeat_ms()) / 1000,
                default_result: if h.default_continue {
                    "CONTINUE"
                } else {
                    "ABANDON"
                },
            })
            .collect())
    }

    /// CompleteLifecycleAction: ends the instance's wait for `hook` with
    /// `continue_` (CONTINUE) or not (ABANDON). An action that no longer
    /// waits is AWS's ValidationError "No active Lifecycle Action found".
    pub(crate) fn complete_lifecycle_action(
        &mut self,
        group: &str,
        hook: &str,
        action: ActionRef<'_>,
        continue_: bool,
    ) -> Result<(), AwsError> {
        const ACTION: &str = "CompleteLifecycleAction";
        let idx = self.waiting_action(ACTION, group, hook, action)?;
        if let Some(wait) = self.instances[idx].hook_wait.as_mut() {
            wait.pending.remove(hook);
            wait.abandoned |= !continue_;
        }
        self.end_wait_if_done(idx);
        Ok(())
    }

    /// RecordLifecycleActionHeartbeat: the hook's heartbeat timeout
    /// starts again (the global timeout does not move).
    pub(crate) fn record_lifecycle_action_heartbeat(
        &mut self,
        group: &str,
        hook: &str,
        action: ActionRef<'_>,
    ) -> Result<(), AwsError> {
        const ACTION: &str = "RecordLifecycleActionHeartbeat";
        let idx = self.waiting_action(ACTION, group, hook, action)?;
        let now = self.now;
        let Some(pending) = self.instances[idx]
            .hook_wait
            .as_mut()
            .and_then(|w| w.pending.get_mut(hook))
        else {
            return Ok(());
        };
        pending.deadline = now.plus_ms(pending.heartbeat_ms);
        let at = pending.deadline;
        self.schedule(at, Event::LifecycleHookTimeout(idx));
        Ok(())
    }

    /// The instance whose action for `hook` the call names, if that
    /// action still waits.
    fn waiting_action(
        &self,
        action_name: &'static str,
        group: &str,
        hook: &str,
        action: ActionRef<'_>,
    ) -> Result<InstanceIdx, AwsError> {
        let gi = self.check_group(action_name, group)?;
        if !self.groups[gi].hooks.iter().any(|h| h.name == hook) {
            return Err(no_hook(action_name, group, hook));
        }
        let pending_for = |idx: &InstanceIdx| {
            self.instances[*idx]
                .hook_wait
                .as_ref()
                .and_then(|w| w.pending.get(hook))
        };
        let found = self.groups[gi]
            .members
            .iter()
            .copied()
            .find(|idx| match action {
                ActionRef::Instance(id) => {
                    self.instances[*idx].id == id && pending_for(idx).is_some()
                }
                ActionRef::Token(token) => pending_for(idx).is_some_and(|p| p.token == token),
            });
        found.ok_or_else(|| {
            let (what, value) = match action {
                ActionRef::Instance(id) => ("instance ID", id),
                ActionRef::Token(token) => ("token", token),
            };
            AwsError::Validation {
                action: action_name,
                message: format!("No active Lifecycle Action found with {what} {value}"),
            }
        })
    }

    /// Puts the instance in `Pending:Wait` (`launching`) or
    /// `Terminating:Wait` when its group has hooks for that transition;
    /// `false` (nothing changed) when it has none.
    pub(super) fn enter_hook_wait(&mut self, idx: InstanceIdx, launching: bool) -> bool {
        let gi = self.instances[idx].group;
        let hooks: Vec<Hook> = self.groups[gi]
            .hooks
            .iter()
            .filter(|h| h.launching == launching)
            .cloned()
            .collect();
        if hooks.is_empty() {
            return false;
        }
        let now = self.now;
        let longest = hooks.iter().map(Hook::heartbeat_ms).max().unwrap_or(0);
        let mut pending = BTreeMap::new();
        for hook in &hooks {
            let deadline = now.plus_ms(hook.heartbeat_ms());
            pending.insert(
                hook.name.clone(),
                PendingAction {
                    deadline,
                    token: self.rng.uuid(),
                    heartbeat_ms: hook.heartbeat_ms(),
                    default_continue: hook.default_continue,
                },
            );
            self.schedule(deadline, Event::LifecycleHookTimeout(idx));
        }
        let global_deadline = now.plus_ms(global_timeout_ms(longest));
        self.schedule(global_deadline, Event::LifecycleHookTimeout(idx));
        self.instances[idx].hook_wait = Some(HookWait {
            pending,
            global_deadline,
            abandoned: false,
        });
        self.instances[idx].state = if launching {
            LifecycleState::PendingWait
        } else {
            LifecycleState::TerminatingWait
        };
        true
    }

    /// A heartbeat or global timeout may have run out: each hook whose
    /// did gets its default result (all of them past the global one).
    /// Stale events (an action completed, a heartbeat since) change
    /// nothing.
    pub(crate) fn on_lifecycle_hook_timeout(&mut self, idx: InstanceIdx) {
        let now = self.now;
        let Some(wait) = self.instances[idx].hook_wait.as_mut() else {
            return;
        };
        let all = now >= wait.global_deadline;
        let expired: Vec<String> = wait
            .pending
            .iter()
            .filter(|(_, p)| all || now >= p.deadline)
            .map(|(name, _)| name.clone())
            .collect();
        for name in expired {
            if let Some(p) = wait.pending.remove(&name) {
                wait.abandoned |= !p.default_continue;
            }
        }
        self.end_wait_if_done(idx);
    }

    /// Once no hook's action waits: a termination proceeds to its
    /// shutdown; a launch goes in service, or is terminated when a hook
    /// abandoned it.
    fn end_wait_if_done(&mut self, idx: InstanceIdx) {
        let done = self.instances[idx]
            .hook_wait
            .as_ref()
            .is_some_and(|w| w.pending.is_empty());
        if !done {
            return;
        }
        let abandoned = self.instances[idx]
            .hook_wait
            .take()
            .is_some_and(|w| w.abandoned);
        let gi = self.instances[idx].group;
        let state = self.instances[idx].state;
        match state {
            LifecycleState::TerminatingWait => {
                self.instances[idx].state = LifecycleState::TerminatingProceed;
                self.schedule_in(self.timing.terminate_ms, Event::InstanceTerminated(idx));
                self.observe_group(gi);
            }
            LifecycleState::PendingWait if abandoned => {
                let cause = format!(
                    "At {} a lifecycle hook abandoned the launch of {}: the instance is terminated.",
                    self.now, self.instances[idx].id
                );
                self.begin_termination(idx, cause);
                self.reconcile_group(gi);
            }
            LifecycleState::PendingWait => self.enter_service(idx),
            _ => {}
        }
    }
}

/// 100 × the heartbeat timeout, at most 48 hours.
fn global_timeout_ms(heartbeat_ms: u64) -> u64 {
    heartbeat_ms.saturating_mul(100).min(MAX_GLOBAL_TIMEOUT_MS)
}

fn no_hook(action: &'static str, group: &str, name: &str) -> AwsError {
    AwsError::Validation {
        action,
        message: format!("No Lifecycle Hook found with name {name} for group {group}"),
    }
}

#[cfg(test)]
#[path = "hooks_tests.rs"]
mod tests;
