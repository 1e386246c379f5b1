//! Benchmark data by name: the catalog of files and checksums, and the
//! verified download of `okr data fetch`.

pub mod catalog;
pub mod fetch;
