//! Sketched IOKR: SIOKR / ISOKR / SISOKR (El Ahmad, Brogat-Motte, Laforgue
//! and d'Alché-Buc): multi-label benchmarks, scale, synthetic study, timing.

pub mod multilabel;
pub mod scale;
pub mod synthetic;
pub mod timing;
