//! The outside world as the roll sees it: one small trait per system, with
//! plain domain types. SDK and HTTP types never cross these traits, so the
//! roll can be driven by the real adapters (`crate::aws`, `crate::mesos`,
//! `crate::marathon`, `crate::pager`) and by the simulator alike.
//!
//! Traits are written with `fn … -> impl Future<Output = …> + Send` so the
//! roll can hold them across tokio tasks; implementations use `async fn`.
//! `Ports` says once which client stands for each system, so the roll is
//! generic over one parameter, not four.
//!
//! Imports nothing of the roll: every other room builds on this one.

pub(crate) mod alarms;
pub mod auto_scaling;
mod auto_scaling_error;
pub(crate) mod checkpoint_object;
mod ec2;
mod launch_source;
mod lifecycle_hooks;
pub(crate) mod marathon;
pub(crate) mod mesos;
pub mod mixed_instances;
pub(crate) mod pager;
pub(crate) mod services;
mod warm_pool;

use auto_scaling::AutoScaling;
use marathon::Marathon;
use mesos::MesosMaster;
use pager::Pager;
use services::Services;

/// The clients a roll reaches the world through, one per system. Cheap to
/// copy (a set of references), so every part of the roll holds its own.
pub(crate) trait Ports: Copy + Send + Sync {
    type AutoScaling: AutoScaling + Sync;
    type Mesos: MesosMaster + Sync;
    type Marathon: Marathon + Sync;
    type Pager: Pager;
    type Services: Services + Sync;

    fn aws(&self) -> &Self::AutoScaling;
    fn mesos(&self) -> &Self::Mesos;
    fn marathon(&self) -> &Self::Marathon;
    fn pager(&self) -> &Self::Pager;
    fn services(&self) -> &Self::Services;
}

/// Borrowed clients, one per system: the `Ports` every caller hands the
/// roll (the CLI's real adapters, the simulator's, a test's wrappers).
pub(crate) struct PortSet<'a, A, M, K, P, S = services::NoServices> {
    pub(crate) aws: &'a A,
    pub(crate) mesos: &'a M,
    pub(crate) marathon: &'a K,
    pub(crate) pager: &'a P,
    /// The DC/OS SDK services' APIs (`&NoServices` where there are none).
    pub(crate) services: &'a S,
}

impl<A, M, K, P, S> Clone for PortSet<'_, A, M, K, P, S> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<A, M, K, P, S> Copy for PortSet<'_, A, M, K, P, S> {}

impl<A, M, K, P, S> Ports for PortSet<'_, A, M, K, P, S>
where
    A: AutoScaling + Sync,
    M: MesosMaster + Sync,
    K: Marathon + Sync,
    P: Pager,
    S: Services + Sync,
{
    type AutoScaling = A;
    type Mesos = M;
    type Marathon = K;
    type Pager = P;
    type Services = S;

    fn aws(&self) -> &A {
        self.aws
    }
    fn mesos(&self) -> &M {
        self.mesos
    }
    fn marathon(&self) -> &K {
        self.marathon
    }
    fn pager(&self) -> &P {
        self.pager
    }
    fn services(&self) -> &S {
        self.services
    }
}
