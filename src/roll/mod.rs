//! The roll: builds the replacement plan from the desired end state and
//! runs it. For now it owns its ports, the small traits through which it
//! reaches the outside world (the adapters implement them), and the health
//! verdict over what Marathon reports.

pub mod env;
pub mod health;
pub mod ports;
pub mod rebalance;
