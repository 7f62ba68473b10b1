//! Placeholder: the pager port (filled in by the adapters work).
