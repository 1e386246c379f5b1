//! Reduced-rank IOKR (Brogat-Motte, Rudi, Brouard, Rousu and d'Alché-Buc,
//! JMLR 2022): multi-label tables 5-7, the synthetic study, USPS completion
//! and the Nystroem scale run.

pub mod full;
pub mod scale;
pub mod small;
pub mod synthetic;
pub mod usps;
