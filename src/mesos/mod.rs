//! Placeholder: the mesos adapter (filled in by the adapters work).
