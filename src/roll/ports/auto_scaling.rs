//! Placeholder: the auto_scaling port (filled in by the adapters work).
