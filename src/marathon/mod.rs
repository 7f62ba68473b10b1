//! The Marathon adapter: implements the roll's `Marathon` port over
//! Marathon's REST API v2 (`client`), with the wire format kept in `wire`
//! and the event stream that tells when `/v2/apps` changed in `events`.

mod client;
mod events;
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) mod fuzz;
mod host_ports;
mod wire;

#[cfg(test)]
mod tests;

pub(crate) use client::MarathonClient;
#[cfg(test)]
pub(crate) use client::MarathonConfigError;
pub use wire::parse_apps;
