//! The outside world as the roll sees it: one small trait per system, with
//! plain domain types. SDK and HTTP types never cross these traits, so the
//! roll can be driven by the real adapters (`crate::aws`, `crate::mesos`,
//! `crate::marathon`, `crate::pager`) and by the simulator alike.
//!
//! Traits are written with `fn … -> impl Future<Output = …> + Send` so the
//! roll can hold them across tokio tasks; implementations use `async fn`.

pub mod auto_scaling;
mod auto_scaling_error;
pub mod checkpoint_object;
pub mod marathon;
pub mod mesos;
pub mod pager;
