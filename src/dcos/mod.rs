//! The DC/OS SDK services adapter: implements the roll's `Services` port
//! over each service's v1 plan and pod API (mesosphere/dcos-commons'
//! `PlansResource` and `PodResource`), reached through the DC/OS admin
//! router or a scheduler URL of its own (`client`), with the wire format
//! kept in `wire`.

mod client;
mod wire;

#[cfg(test)]
mod tests;

pub(crate) use client::ServicesClient;
