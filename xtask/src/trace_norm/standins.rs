//! `cargo xtask reproduce tn-jester-standins`: seeded rating stand-ins of
//! Table 1's other shapes (ml100k, jester1, jester2, sushi; spec 3.5), run
//! through the `tn-jester` protocol and labelled as stand-ins.

use std::path::Path;
use std::time::Instant;

use anyhow::Result;
use okr_eval::MetricRecord;
use okr_eval::readers::ranking::Ratings;
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

use super::jester::{Convention, SPLITS, TN_MAX_ITER, TN_RANKS, TnGrid, run_dataset, write};

/// How many ratings each user of a stand-in gives.
#[derive(Debug, Clone, Copy)]
pub enum Counts {
    /// Uniform in `lo..=hi`.
    Uniform(usize, usize),
    /// Heavy tailed: `min + floor(exp(ln(median) + sigma z))`, `z` standard normal, capped at `max`.
    LogNormal {
        /// Smallest count.
        min: usize,
        /// Median of the part above `min`.
        median: f64,
        /// Log-scale spread.
        sigma: f64,
        /// Largest count.
        max: usize,
    },
    /// Jester-like: every item with probability `full`, else uniform in `min..n_items`.
    Jester {
        /// Smallest count.
        min: usize,
        /// Fraction of users who rated every item.
        full: f64,
    },
}

/// The shape of a seeded rating stand-in (spec 3.5).
#[derive(Debug, Clone, Copy)]
pub struct StandinShape {
    /// Users.
    pub n_users: usize,
    /// Items.
    pub n_items: usize,
    /// Ratings per user.
    pub counts: Counts,
    /// Item popularity: item `i` is drawn (without replacement) with weight
    /// $(1 + \pi(i))^{-s}$ for a seeded permutation $\pi$; 0 = uniform.
    pub item_skew: f64,
    /// Integer ratings in `1..=levels`, or `None` for Jester's continuous [-10, 10].
    pub levels: Option<u32>,
}

/// A seeded rating stand-in (spec 3.5) of a given shape:
/// $r_{ui} = \mathrm{clip}(\mathrm{round}(\mu + b_u + b_i + p_u\cdot q_i + \sigma\varepsilon))$
/// with a 5-dimensional latent model (per-user and per-item biases), per-user
/// counts from `shape.counts`, items drawn without replacement by popularity
/// (uniformly when `item_skew = 0`). `levels`: integer ratings in `1..=levels`,
/// or `None` for continuous ratings in [-10, 10] on a 0.05 grid (exact 0
/// avoided, as Jester's 0 means missing). Uniform counts without popularity
/// give the draws of the earlier sushi stand-in.
pub fn shape_standin(shape: &StandinShape, seed: u64) -> Ratings {
    use rand::RngExt;
    let StandinShape { n_users, n_items, counts, item_skew, levels } = *shape;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut normal = || crate::common::rng::normal(&mut rng);
    let dim = 5;
    let q: Vec<Vec<f64>> = (0..n_items).map(|_| (0..dim).map(|_| normal()).collect()).collect();
    let bi: Vec<f64> = (0..n_items).map(|_| normal()).collect();
    let p: Vec<Vec<f64>> = (0..n_users).map(|_| (0..dim).map(|_| normal()).collect()).collect();
    let bu: Vec<f64> = (0..n_users).map(|_| 0.5 * normal()).collect();
    let noise: Vec<f64> = (0..n_users * n_items).map(|_| normal()).collect();
    let count_z: Vec<f64> = match counts {
        Counts::LogNormal { .. } => (0..n_users).map(|_| normal()).collect(),
        _ => Vec::new(),
    };
    let mut rng = ChaCha8Rng::seed_from_u64(seed + 1);
    // Popularity weights on a seeded permutation of the items.
    let weight: Vec<f64> = if item_skew > 0.0 {
        let mut perm: Vec<usize> = (0..n_items).collect();
        perm.shuffle(&mut rng);
        perm.iter().map(|&r| (1.0 + r as f64).powf(-item_skew)).collect()
    } else {
        Vec::new()
    };
    let users = (0..n_users)
        .map(|u| {
            let k = match counts {
                Counts::Uniform(lo, hi) => rng.random_range(lo..=hi.min(n_items)),
                Counts::LogNormal { min, median, sigma, max } => {
                    (min + (median.ln() + sigma * count_z[u]).exp() as usize).min(max).min(n_items)
                }
                Counts::Jester { min, full } => {
                    if rng.random::<f64>() < full {
                        n_items
                    } else {
                        rng.random_range(min..n_items)
                    }
                }
            };
            let items: Vec<usize> = if weight.is_empty() {
                let mut items: Vec<usize> = (0..n_items).collect();
                items.shuffle(&mut rng);
                items.truncate(k);
                items
            } else {
                // Weighted sampling without replacement (Efraimidis-Spirakis keys ln(U) / w).
                let mut keyed: Vec<(f64, usize)> =
                    (0..n_items).map(|i| ((1.0 - rng.random::<f64>()).ln() / weight[i], i)).collect();
                keyed.sort_by(|a, b| b.0.total_cmp(&a.0));
                keyed.into_iter().take(k).map(|(_, i)| i).collect()
            };
            items
                .into_iter()
                .map(|i| {
                    let score = bu[u]
                        + bi[i]
                        + p[u].iter().zip(&q[i]).map(|(a, b)| a * b).sum::<f64>() / (dim as f64).sqrt()
                        + 0.5 * noise[u * n_items + i];
                    let r = match levels {
                        Some(l) => (score * 0.8 + (l as f64 + 1.0) / 2.0).round().clamp(1.0, l as f64),
                        None => {
                            let v = ((score * 3.0).clamp(-10.0, 10.0) * 20.0).round() / 20.0;
                            if v == 0.0 { 0.05 } else { v }
                        }
                    };
                    (i, r)
                })
                .collect()
        })
        .collect();
    Ratings { n_items, users }
}

/// One stand-in of `tn-jester-standins`: data set name, shape, seed offset,
/// trace-norm lambda grid, number of splits.
pub struct Standin {
    /// Data set name (`<paper column>-standin`).
    pub name: &'static str,
    /// The generated shape.
    pub shape: StandinShape,
    /// Trace-norm grid (the lambda optimum scales with the training entries).
    pub grid: TnGrid,
    /// Random splits.
    pub splits: usize,
}

/// The shape of jester1 and jester2 (their stand-ins differ by seed).
const JESTER: Standin = Standin {
    name: "jester-standin",
    shape: StandinShape {
        n_users: 2500,
        n_items: 100,
        counts: Counts::Jester { min: 36, full: 0.2 },
        item_skew: 0.0,
        levels: None,
    },
    grid: TnGrid { lambdas: &[300.0, 1e3, 3e3, 1e4, 3e4, 1e5], ranks: &TN_RANKS, max_iter: TN_MAX_ITER },
    splits: 3,
};

/// The stand-ins of Table 1's sushi, jester1, jester2 and ml100k shapes (in run order: cheapest first).
pub const STANDINS: [Standin; 4] = [
    // sushi: 5000 users, 100 sushis, exactly 10 ratings in 1..5 per user.
    Standin {
        name: "sushi-standin",
        shape: StandinShape {
            n_users: 5000,
            n_items: 100,
            counts: Counts::Uniform(10, 10),
            item_skew: 0.0,
            levels: Some(5),
        },
        grid: TnGrid { lambdas: &[1.0, 10.0, 100.0, 1e3, 1e4], ranks: &TN_RANKS, max_iter: TN_MAX_ITER },
        splits: SPLITS,
    },
    // ml100k: 943 users, 1682 items, >= 20 ratings per user, about 100k ratings
    // with a heavy tail of per-user counts (max 737) and of item popularity.
    Standin {
        name: "ml100k-standin",
        shape: StandinShape {
            n_users: 943,
            n_items: 1682,
            counts: Counts::LogNormal { min: 20, median: 56.0, sigma: 1.0, max: 737 },
            item_skew: 0.5,
            levels: Some(5),
        },
        // Rank 5 only and at most 60 L-BFGS iterations: ~700k pair tasks make an
        // iteration ~1.5 s on the shared machine (lambda 1e4 is far too large: 0.44).
        grid: TnGrid { lambdas: &[100.0, 300.0, 1e3, 3e3], ranks: &[5], max_iter: 60 },
        splits: 2,
    },
    // jester1 / jester2: 100 jokes, 36..100 ratings per user (a fifth rated all),
    // continuous in [-10, 10]; 2500 users of the 24,983 / 23,500 (time).
    Standin { name: "jester1-standin", ..JESTER },
    Standin { name: "jester2-standin", ..JESTER },
];

/// Runs the stand-in part of `tn-jester` (`tn-jester-standins`): seeded
/// rating sets of the ml100k, jester1, jester2 and sushi shapes ([`STANDINS`]),
/// clean convention, the `tn-jester` protocol with per-shape lambda grids.
/// `only` restricts to the named stand-ins (smoke runs).
pub fn run_standins(out_dir: &Path, seed: u64, only: Option<&[String]>) -> Result<()> {
    let t0 = Instant::now();
    let mut records = Vec::new();
    let mut log = String::new();
    let mut shapes = String::new();
    for (k, st) in STANDINS.iter().enumerate() {
        if only.is_some_and(|o| !o.iter().any(|n| n == st.name || format!("{n}-standin") == st.name)) {
            continue;
        }
        let t1 = Instant::now();
        // Sushi keeps its original seed; the others are offset so no two share draws.
        let data_seed = if st.name == "sushi-standin" { seed } else { seed + 1000 * (k as u64 + 1) };
        let r = shape_standin(&st.shape, data_seed);
        let counts: Vec<usize> = r.users.iter().map(Vec::len).collect();
        let mut per_item = vec![0usize; r.n_items];
        r.users.iter().flatten().for_each(|&(i, _)| per_item[i] += 1);
        let line = format!(
            "| {} | {} | {} | {} | {}..{} (median {}) | {}..{} |",
            st.name,
            r.users.len(),
            r.n_items,
            r.n_ratings(),
            counts.iter().min().unwrap_or(&0),
            counts.iter().max().unwrap_or(&0),
            {
                let mut c = counts.clone();
                c.sort_unstable();
                c[c.len() / 2]
            },
            per_item.iter().min().unwrap_or(&0),
            per_item.iter().max().unwrap_or(&0),
        );
        eprintln!("tn-jester-standins: {line}");
        let (recs, l) =
            run_dataset("tn-jester-standins", st.name, &r, true, &[Convention::Clean], st.splits, seed, &st.grid)?;
        let secs = t1.elapsed().as_secs_f64();
        shapes.push_str(&format!("{line} {secs:.0} |\n"));
        log.push_str(&l);
        records.extend(recs.into_iter().map(|rec| {
            rec.with_setting("users", r.users.len() as u64)
                .with_setting("ratings", r.n_ratings() as u64)
                .with_setting("dataset_seconds", secs)
        }));
        // Written after every stand-in, so a run stopped for time keeps what it finished.
        write_standins(out_dir, &records, &shapes, &log, t0.elapsed().as_secs_f64())?;
    }
    Ok(())
}

fn write_standins(out_dir: &Path, records: &[MetricRecord], shapes: &str, log: &str, secs: f64) -> Result<()> {
    let notes = format!(
        "{STANDIN_NOTES}\n\n## Generated shapes\n\n| stand-in | users | items | ratings | ratings per user | ratings per item | wall s (all splits) |\n|---|---|---|---|---|---|---|\n{shapes}\n## Validation log\n\nSplit 0 runs the grid; later splits refit with split 0's selection.\n\n| split | convention | method | lambda | rank | val loss | |\n|---|---|---|---|---|---|---|\n{log}\n\nTotal {:.0} s (2 shared cores).\n",
        secs
    );
    write(out_dir, "tn-jester-standins", records, &notes)
}

const STANDIN_NOTES: &str = "**Stand-ins, not the paper's data** (no ml100k, jester1, jester2 or sushi ratings here): \
seeded rating sets of the Table 1 shapes, r = b_u + b_i + p_u.q_i / sqrt 5 + 0.5 e (p, q, b_i, e standard normal, \
b_u ~ N(0, 0.5^2), latent dimension 5), mapped to clip(round(0.8 r + 3)) in 1..5 (ml100k, sushi) or to \
clip(3 r, -10, 10) on Jester's 0.05 grid (jester1, jester2; exact 0 avoided). ml100k: 943 users x 1682 items, \
20 + floor(exp(ln 56 + z)) ratings per user (z standard normal, capped at 737: heavy tailed like ml100k's), items drawn \
without replacement with popularity weight (1 + pi(i))^-0.5 (pi a seeded permutation; the most popular item gets ~600 ratings, ml100k's 583). jester1 and jester2 have the \
same shape (100 jokes, a fifth of the users rated all, the others uniform in 36..99) and differ by seed; **2,500 users** \
instead of 24,983 / 23,500 (time). sushi: 5000 users, 100 items, exactly 10 ratings per user, items uniform. \
The paper's column is printed beside ours for orientation only: the gap is not a reproduction gap. \
Protocol as `tn-jester` (clean convention: pairs of items both rated in the same part with distinct ratings; \
per-user 50/20/30 split; linear kernel on the normalized training ratings; trace norm = masked multitask R2 by L-BFGS, \
at most 200 iterations, rank in {5, 10}; SELF + HS = per-pair kernel ridge, in its dual (kernel) form on the tasks \
observed by fewer users than features, i.e. most ml100k pairs; maximum-agreement decoding, exact up to 18 items; \
tasks no training user observes predict 0 for both methods). \
Trace-norm grids: sushi lambda {1, 10, 100, 1e3, 1e4} x rank {5, 10}; jester1/2 {300, 1e3, 3e3, 1e4, 3e4, 1e5} x {5, 10}; \
**ml100k {100, 300, 1e3, 3e3} x rank 5 only, at most 60 L-BFGS iterations** (about 960k observed pair tasks: an iteration \
takes 1.5-2 s on the shared machine; a first try gave 0.44 at lambda 1e4 and 0.214 at 1e3). \
Splits: 5 for sushi, 3 for jester1 and jester2, **2 for ml100k** (time, 2 shared cores); seeds 0, 1, ...; \
split 0 selects the hyper-parameters of both methods on its validation part.";

#[cfg(test)]
mod tests {
    use super::*;

    /// Stand-ins are seeded, with counts in range, distinct items and ratings on the scale.
    #[test]
    fn shape_standin_counts() {
        let s = StandinShape {
            n_users: 50,
            n_items: 200,
            counts: Counts::LogNormal { min: 20, median: 10.0, sigma: 1.0, max: 150 },
            item_skew: 0.8,
            levels: Some(5),
        };
        let r = shape_standin(&s, 1);
        assert_eq!(r, shape_standin(&s, 1));
        for u in &r.users {
            assert!((20..=150).contains(&u.len()));
            let mut items: Vec<usize> = u.iter().map(|p| p.0).collect();
            items.sort_unstable();
            items.dedup();
            assert_eq!(items.len(), u.len());
            assert!(u.iter().all(|p| (1.0..=5.0).contains(&p.1) && p.1.fract() == 0.0));
        }
        let j = shape_standin(
            &StandinShape {
                n_users: 40,
                n_items: 100,
                counts: Counts::Jester { min: 36, full: 0.2 },
                item_skew: 0.0,
                levels: None,
            },
            2,
        );
        assert!(j.users.iter().all(|u| u.len() >= 36 && u.iter().all(|p| p.1 != 0.0 && p.1.abs() <= 10.0)));
    }
}
