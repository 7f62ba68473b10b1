//! The roll: builds the replacement plan from the desired end state and
//! runs it. For now it owns only its ports, the small traits through which
//! it reaches the outside world; the adapters implement them.

pub mod ports;
