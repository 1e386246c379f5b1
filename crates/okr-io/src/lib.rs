//! The file I/O floor of okr, below every other okr crate (it depends on
//! none of them), so that readers and writers never sit above estimators.
//!
//! - [`bounded`]: reads of user files with a byte limit
//!   ([`MAX_INPUT_BYTES`]), fallibly reserved memory and a NUL-byte check, so
//!   a device, an endless pipe or a huge file ends in an error, not an abort;
//!   [`check_count`], the one rule for counts an input declares or implies
//!   (checked against the input they refer to before anything is stored).
//! - [`atomic`]: [`write_atomic`], the one writer of every okr output (model,
//!   data, prediction and record files): a complete temporary file renamed
//!   over the target, with the output-path rules of a shell redirect
//!   (symlinks followed, devices and pipes written directly, read-only files
//!   refused, owner, mode and hard links kept, stale temporary files
//!   removed); [`remove_temporary_files`] for a signal handler.
//! - [`rows`]: the row syntax of output files (label sets, fingerprints,
//!   vectors), one writer and one parser per kind of row.
//!
//! # Example
//! ```
//! use std::io::Write;
//! let dir = tempfile::tempdir().unwrap();
//! let path = dir.path().join("sets.txt");
//! okr_io::write_atomic(&path, |w| {
//!     for set in [&[0usize, 2][..], &[]] {
//!         writeln!(w, "{}", okr_io::rows::format_index_set(set))?;
//!     }
//!     Ok(())
//! })?;
//! let text = okr_io::bounded::read_text(&path, okr_io::MAX_INPUT_BYTES)?;
//! assert_eq!(text, "0,2\n-\n");
//! let sets = okr_io::rows::parse_lines(&text, |r| okr_io::rows::parse_index_set(r, 3))?;
//! assert_eq!(sets, vec![vec![0, 2], vec![]]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![warn(missing_docs)]

pub mod atomic;
pub mod bounded;
pub mod rows;

pub use atomic::{remove_temporary_files, write_atomic};
pub use bounded::{MAX_INPUT_BYTES, ReadError, TooMany, check_count};

/// The crate README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
