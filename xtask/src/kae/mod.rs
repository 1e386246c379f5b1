//! Kernel autoencoders, KAE and K2AE (Laforgue, Clémençon and d'Alché-Buc,
//! AISTATS 2019): graphs, the KPCA link, toy figures, fingerprints.

pub mod common;
pub mod fingerprints;
pub mod graphs;
pub mod kpca;
pub mod synthetic;
pub mod synthetic_c1;
