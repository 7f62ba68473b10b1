//! Placeholder: the marathon port (filled in by the adapters work).
