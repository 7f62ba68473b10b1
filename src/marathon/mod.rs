//! Placeholder: the marathon adapter (filled in by the adapters work).
