//! Placeholder: the pager adapter (filled in by the adapters work).
