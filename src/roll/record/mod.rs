//! The records: what a roll keeps and is kept against. The checkpoint
//! (everything a resumed run must know, its schema and migration, the
//! stores it is written to, the run lock), the kinds of step and wait it
//! stores, the operator's queue beside it, and the environment (the
//! `--env` file with variables and flags).
//!
//! May import: the ports (their domain types, and the object store a
//! checkpoint in S3 is kept through), `crate::plan`, the crate's file
//! helpers. Never the decisions or the engine.

pub mod checkpoint;
pub(crate) mod env;
pub(crate) mod held;
pub(crate) mod kinds;
pub mod operations;

/// The tag that marks a group as being rolled, valued with the run id:
/// the roll's record on the group itself.
pub(crate) const RUN_ID_TAG: &str = "roller:run-id";

/// Beside the run id: `pending` while the run claims the cluster, `held`
/// once it has looked again and found no other run (one roll per cluster:
/// `decide::cluster_lock`).
pub(crate) const LOCK_STATE_TAG: &str = "roller:lock";
