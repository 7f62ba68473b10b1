//! The engine: runs a roll's plan as a reconcile loop, tick by tick.
//!
//! - `runner`: the loop, dispatch, deadlines, pause and hold.
//! - `tick_context`: what one tick has read of the world, built when the
//!   tick starts and handed to every step of it.
//! - `steps/`: each step of the plan as its own type behind one trait,
//!   over one context (`step_context`: what a step may use, its group's
//!   record and narrow ways to write the rest).
//! - `outcome`: how a run ends.
//! - `run_options`: what a run is told besides its environment.
//! - `journal`: the checkpoint as the run keeps it (intent before effect).
//! - `wait`: deadlines, and the sleep between ticks.
//! - `cluster_lock`: the other runs holding a group of this cluster.
//! - `failure_watch`: the failure watch on the new agents, each tick.
//! - `paging`: pausing on a timeout, the page, resuming after it.
//! - `inbox`: operator operations queued for a live run.
//! - `live`: what a running roll shares with the plan API.
//! - `clock`: the roll's time (the one place `time_scale` is applied).
//!
//! May import: every room below it (`ports`, `record`, `decide`) and
//! `crate::plan`. Nothing below imports the engine.

pub(crate) mod clock;
pub(crate) mod cluster_lock;
mod described;
mod failure_watch;
pub(crate) mod inbox;
mod journal;
mod late_agents;
pub(crate) mod live;
mod outcome;
mod paging;
pub(crate) mod run_options;
pub(crate) mod runner;
mod step_context;
pub(crate) mod steps;
pub(crate) mod tick_context;
mod wait;

pub(crate) use outcome::Outcome;
pub(crate) use run_options::RunOptions;
pub(crate) use runner::Runner;
