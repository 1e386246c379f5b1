//! Shared fixtures for okr benches.
