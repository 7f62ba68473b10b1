//! The simulator's HTTP facades: the real AWS (Query protocol), Mesos
//! master and Marathon APIs, and the DC/OS admin router in front of the
//! SDK services' schedulers, over the shared world, so the roller's real
//! adapters talk to it with no special code path.

pub(crate) mod aws;
pub(crate) mod dcos;
pub(crate) mod marathon;
pub(crate) mod mesos;

#[cfg(test)]
pub(crate) mod peer_servers;
