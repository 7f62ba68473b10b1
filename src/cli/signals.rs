//! SIGINT and SIGTERM for the commands that run until told to stop.

/// SIGINT and SIGTERM, registered when installed.
pub(super) struct StopSignals {
    #[cfg(unix)]
    interrupt: tokio::signal::unix::Signal,
    #[cfg(unix)]
    terminate: tokio::signal::unix::Signal,
}

impl StopSignals {
    #[cfg(unix)]
    pub(super) fn install() -> std::io::Result<StopSignals> {
        use tokio::signal::unix::{SignalKind, signal};
        Ok(StopSignals {
            interrupt: signal(SignalKind::interrupt())?,
            terminate: signal(SignalKind::terminate())?,
        })
    }

    #[cfg(not(unix))]
    pub(super) fn install() -> std::io::Result<StopSignals> {
        Ok(StopSignals {})
    }

    #[cfg(unix)]
    pub(super) async fn wait(&mut self) {
        tokio::select! {
            _ = self.interrupt.recv() => {}
            _ = self.terminate.recv() => {}
        }
    }

    #[cfg(not(unix))]
    pub(super) async fn wait(&mut self) {
        let _ = tokio::signal::ctrl_c().await;
    }
}
