//! `CallMeter`: an SDK interceptor that counts every request the AWS
//! clients (Auto Scaling, EC2, S3) send, and those that failed, in
//! `crate::metrics`. The one place every AWS call passes, retries
//! included, so no operation can be left uncounted.

use aws_sdk_autoscaling::config::interceptors::{
    BeforeTransmitInterceptorContextRef, FinalizerInterceptorContextRef,
};
use aws_sdk_autoscaling::config::{ConfigBag, Intercept, RuntimeComponents};
use aws_sdk_autoscaling::error::BoxError;

use crate::metrics::{self, System};

#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct CallMeter;

impl Intercept for CallMeter {
    fn name(&self) -> &'static str {
        "roller::CallMeter"
    }

    /// Once per attempt, just before it goes on the wire.
    fn read_before_transmit(
        &self,
        _context: &BeforeTransmitInterceptorContextRef<'_>,
        _runtime_components: &RuntimeComponents,
        _cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        metrics::call(System::Aws);
        Ok(())
    }

    /// Once per attempt, answered or not.
    fn read_after_attempt(
        &self,
        context: &FinalizerInterceptorContextRef<'_>,
        _runtime_components: &RuntimeComponents,
        _cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let status = context.response().map(|r| r.status().as_u16());
        metrics::answered(System::Aws, status);
        Ok(())
    }
}
