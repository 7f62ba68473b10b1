//! Placeholder: the aws adapter (filled in by the adapters work).
