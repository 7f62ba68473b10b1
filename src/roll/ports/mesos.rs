//! Placeholder: the mesos port (filled in by the adapters work).
