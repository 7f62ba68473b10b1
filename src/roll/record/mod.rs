//! The records: what a roll keeps and is kept against. The checkpoint
//! (everything a resumed run must know, its schema and migration, the
//! stores it is written to, the run lock), the kinds of step and wait it
//! stores, and the environment (the `--env` file with variables and
//! flags).
//!
//! May import: the ports' domain types, `crate::plan`, the crate's file
//! helpers. Never the engine or the decisions.

pub mod checkpoint;
pub mod env;
pub mod kinds;

/// The tag that marks a group as being rolled, valued with the run id:
/// the roll's record on the group itself.
pub const RUN_ID_TAG: &str = "roller:run-id";
