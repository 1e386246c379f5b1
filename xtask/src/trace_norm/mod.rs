//! Trace-norm surrogate prediction, LR-SELF (Luise, Stamos, Pontil and
//! Ciliberto, ICML 2019): jester ranking (Table 1), label ranking and the
//! theory checks.

pub mod jester;
pub mod label_ranking;
pub mod standins;
pub mod table1;
pub mod theory;
