//! LEML (Yu, Jain, Kar and Dhillon, ICML 2014): full and missing-label
//! tables, speed lines and the theory checks.

pub mod ablation;
pub mod br_full;
pub mod experiments;
pub mod paper;
pub mod per_loss;
pub mod speed;
pub mod theory;
