//! `cargo xtask reproduce kae-synthetic`: the simulated experiments of the KAE
//! paper (Sec. 5.1, App. C.1; spec 3.1): noisy concentric circles, two moons,
//! 1-D and 2-D Gaussian clusters, with PNG plots of codes and reconstructions.
//! The paper gives figures only; the quantitative proxies are those of spec 3.1.
//! Figs. 5a/5b, 5d and 6a/6b are in the sibling [`super::synthetic_c1`].

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context, Result};
use faer::{Mat, MatRef};
use okr_estimators::kae::{Kae, KaeParams, Kpca, LastLayer, LayerKernel, Optimizer};
use okr_eval::MetricRecord;
use okr_eval::probe::LinearProbe;
use plotters::prelude::*;

use super::common::write_experiment;
use crate::common::rng::Lcg;

/// A labelled toy data set.
pub(super) struct Toy {
    pub name: &'static str,
    pub x: Mat<f64>,
    pub labels: Vec<usize>,
}

fn circles(seed: u64) -> Toy {
    let mut r = Lcg(seed);
    let mut rows = Vec::new();
    let mut labels = Vec::new();
    for (c, radius) in [1.0, 2.0, 3.0].into_iter().enumerate() {
        for _ in 0..100 {
            let t = std::f64::consts::TAU * r.uniform();
            rows.push([radius * t.cos() + 0.1 * r.normal(), radius * t.sin() + 0.1 * r.normal()]);
            labels.push(c);
        }
    }
    Toy { name: "circles", x: Mat::from_fn(rows.len(), 2, |i, j| rows[i][j]), labels }
}

fn moons(seed: u64) -> Toy {
    let mut r = Lcg(seed);
    let mut rows = Vec::new();
    let mut labels = Vec::new();
    for i in 0..200 {
        let t = std::f64::consts::PI * r.uniform();
        let (x, y, c) = if i < 100 { (t.cos(), t.sin(), 0) } else { (1.0 - t.cos(), 0.5 - t.sin(), 1) };
        rows.push([x + 0.08 * r.normal(), y + 0.08 * r.normal()]);
        labels.push(c);
    }
    Toy { name: "moons", x: Mat::from_fn(rows.len(), 2, |i, j| rows[i][j]), labels }
}

pub(super) fn gaussians_1d(seed: u64) -> Toy {
    let mut r = Lcg(seed);
    let labels: Vec<usize> = (0..100).map(|i| i / 50).collect();
    let x = Mat::from_fn(100, 1, |i, _| 2.0 * (i / 50) as f64 + 0.1 * r.normal());
    Toy { name: "gaussians-1d", x, labels }
}

fn clusters_2d(seed: u64) -> Toy {
    let mut r = Lcg(seed);
    let centers = [[0.0, 0.0], [2.0, 2.0], [4.0, 0.0]];
    let labels: Vec<usize> = (0..150).map(|i| i / 50).collect();
    let x = Mat::from_fn(150, 2, |i, j| centers[i / 50][j] + 0.3 * r.normal());
    Toy { name: "clusters-2d", x, labels }
}

/// Best accuracy of labelling a 1-D code by `k` consecutive intervals
/// (k = number of classes, each interval one class, all assignments tried).
pub(super) fn interval_accuracy(code: &[f64], labels: &[usize], k: usize) -> f64 {
    let mut idx: Vec<usize> = (0..code.len()).collect();
    idx.sort_by(|&a, &b| code[a].total_cmp(&code[b]));
    let n = idx.len();
    // prefix[c][i] = number of class-c points among the i smallest codes.
    let mut prefix = vec![vec![0usize; n + 1]; k];
    for (pos, &i) in idx.iter().enumerate() {
        for (c, row) in prefix.iter_mut().enumerate() {
            row[pos + 1] = row[pos] + usize::from(labels[i] == c);
        }
    }
    let count = |c: usize, a: usize, b: usize| prefix[c][b] - prefix[c][a];
    let perms: Vec<Vec<usize>> = permutations(k);
    let mut best = 0;
    match k {
        2 => {
            for cut in 0..=n {
                for p in &perms {
                    best = best.max(count(p[0], 0, cut) + count(p[1], cut, n));
                }
            }
        }
        3 => {
            for a in 0..=n {
                for b in a..=n {
                    for p in &perms {
                        best = best.max(count(p[0], 0, a) + count(p[1], a, b) + count(p[2], b, n));
                    }
                }
            }
        }
        _ => unreachable!("2 or 3 classes"),
    }
    best as f64 / n as f64
}

fn permutations(k: usize) -> Vec<Vec<usize>> {
    if k == 1 {
        return vec![vec![0]];
    }
    let mut out = Vec::new();
    for p in permutations(k - 1) {
        for pos in 0..=p.len() {
            let mut q = p.clone();
            q.insert(pos, k - 1);
            out.push(q);
        }
    }
    out
}

pub(super) fn kae_params(code_dim: usize, max_iter: usize, seed: u64) -> KaeParams {
    Kae::params()
        .hidden_dims(vec![code_dim])
        .kernels(vec![LayerKernel::GaussianMedian])
        .lambdas(vec![1e-4])
        .last_layer(LastLayer::Krr)
        .optimizer(Optimizer::adam(1e-2))
        .max_iter(max_iter)
        .tol(1e-9)
        .patience(50)
        .seed(seed)
}

/// The linear autoencoder d-p-d (linear kernels, no penalty): its optimum is PCA.
fn linear_ae(x: MatRef<'_, f64>, p: usize, seed: u64) -> Result<Kae> {
    Ok(Kae::params()
        .hidden_dims(vec![p])
        .kernels(vec![LayerKernel::Linear])
        .lambdas(vec![0.0])
        .last_layer(LastLayer::Gradient)
        .optimizer(Optimizer::adam(1e-2))
        .max_iter(3000)
        .tol(1e-10)
        .patience(200)
        .seed(seed)
        .fit(x)?)
}

/// Mean squared error of the best rank-p linear reconstruction (uncentred PCA, Eckart-Young).
pub(super) fn pca_error(x: MatRef<'_, f64>, p: usize) -> Result<f64> {
    let s = okr_linalg::thin_svd(x)?;
    Ok(s.s()[p.min(s.s().len())..].iter().map(|v| v * v).sum::<f64>() / x.nrows() as f64)
}

pub(super) const COLORS: [RGBColor; 3] = [RGBColor(31, 119, 180), RGBColor(255, 127, 14), RGBColor(44, 160, 44)];

pub(super) fn bounds(points: &[(f64, f64)]) -> ((f64, f64), (f64, f64)) {
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for &(x, y) in points {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    let (dx, dy) = ((x1 - x0).max(1e-9) * 0.05, (y1 - y0).max(1e-9) * 0.05);
    ((x0 - dx, x1 + dx), (y0 - dy, y1 + dy))
}

/// Scatter panels: each panel is a title and series of (points, colour index or None for black).
type Series = (Vec<(f64, f64)>, Vec<usize>, bool);
fn plot_panels(path: &Path, panels: &[(String, Vec<Series>)]) -> Result<()> {
    let root = BitMapBackend::new(path, (420 * panels.len() as u32, 420)).into_drawing_area();
    root.fill(&WHITE)?;
    let areas = root.split_evenly((1, panels.len()));
    for (area, (title, series)) in areas.iter().zip(panels) {
        let all: Vec<(f64, f64)> = series.iter().flat_map(|s| s.0.iter().copied()).collect();
        let ((x0, x1), (y0, y1)) = bounds(&all);
        let mut chart = ChartBuilder::on(area)
            .caption(title, ("sans-serif", 16))
            .margin(8)
            .x_label_area_size(25)
            .y_label_area_size(35)
            .build_cartesian_2d(x0..x1, y0..y1)?;
        chart.configure_mesh().light_line_style(WHITE).draw()?;
        for (points, colors, small_black) in series {
            chart.draw_series(points.iter().enumerate().map(|(i, &(x, y))| {
                let style = if *small_black { BLACK.filled() } else { COLORS[colors[i] % 3].filled() };
                Circle::new((x, y), if *small_black { 1 } else { 2 }, style)
            }))?;
        }
    }
    root.present().with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

fn points(m: MatRef<'_, f64>, cx: usize, cy: Option<usize>) -> Vec<(f64, f64)> {
    (0..m.nrows()).map(|i| (m[(i, cx)], cy.map_or(i as f64, |c| m[(i, c)]))).collect()
}

/// Runs the experiment and writes `kae-synthetic.{json,md}` and PNG plots.
pub fn run(out_dir: &Path, seed: u64) -> Result<()> {
    std::fs::create_dir_all(out_dir)?;
    let mut records = Vec::new();
    let mut table = String::from(
        "| data set | n | KAE 2-1-2 train MSE | linear AE 2-1-2 (Adam) | PCA-1 (closed form) | 1-D code: best interval labelling accuracy after 5 / 20 / final steps | chance | steps | monotone objective |\n\
         |---|---|---|---|---|---|---|---|---|\n",
    );
    for toy in [circles(seed), moons(seed + 1), gaussians_1d(seed + 2), clusters_2d(seed + 3)] {
        let d = toy.x.ncols();
        let k = toy.labels.iter().max().map_or(1, |m| m + 1);
        let n = toy.x.nrows();
        let code_of = |m: &Kae| -> Vec<f64> {
            let c = &m.train_codes()[0];
            (0..c.nrows()).map(|i| c[(i, 0)]).collect()
        };
        let mut accs = Vec::new();
        for steps in [5, 20] {
            let m = kae_params(1, steps, seed).fit(toy.x.as_ref())?;
            accs.push(interval_accuracy(&code_of(&m), &toy.labels, k));
        }
        let model = kae_params(1, 2000, seed).fit(toy.x.as_ref())?;
        let code = code_of(&model);
        accs.push(interval_accuracy(&code, &toy.labels, k));
        let mse = model.reconstruction_error(toy.x.as_ref())?;
        let hist = &model.train_info().objective_history;
        let increases = hist.windows(2).filter(|w| w[1] > w[0] * (1.0 + 1e-12)).count();
        let chance = toy.labels.iter().fold(vec![0usize; k], |mut c, &l| {
            c[l] += 1;
            c
        });
        let chance = *chance.iter().max().unwrap_or(&0) as f64 / n as f64;
        let (lin_mse, pca_mse) = if d >= 2 {
            let lin = linear_ae(toy.x.as_ref(), 1, seed)?;
            (Some(lin.reconstruction_error(toy.x.as_ref())?), Some(pca_error(toy.x.as_ref(), 1)?))
        } else {
            (None, None)
        };
        let fmt = |v: Option<f64>| v.map_or("- (d = 1)".to_string(), |v| format!("{v:.4}"));
        let _ = writeln!(
            table,
            "| {} | {n} | {mse:.4} | {} | {} | {:.3} / {:.3} / {:.3} | {chance:.3} | {} | {} increases in {} steps |",
            toy.name,
            fmt(lin_mse),
            fmt(pca_mse),
            accs[0],
            accs[1],
            accs[2],
            model.train_info().n_iter,
            increases,
            hist.len(),
        );
        let base = |method: &str, metric: &str, v: f64| {
            MetricRecord::new("kae-synthetic", format!("{}-standin", toy.name), method, metric, v)
                .with_stand_in(true)
                .with_setting("code_dim", 1)
                .with_setting("n", n)
        };
        records.push(base("kae", "train_mse", mse).with_setting("steps", model.train_info().n_iter));
        if let (Some(l), Some(p)) = (lin_mse, pca_mse) {
            records.push(base("linear-ae", "train_mse", l));
            records.push(base("pca", "train_mse", p));
        }
        for (steps, acc) in ["5", "20", "final"].iter().zip(&accs) {
            records.push(base("kae", "interval_accuracy", *acc).with_setting("steps", *steps));
        }

        // Plots: data + reconstructions, the 1-D code by class, a 2-D re-representation (2-2-2).
        let labels = toy.labels.clone();
        let png = out_dir.join(format!("kae-synthetic-{}.png", toy.name));
        let code_pts: Vec<(f64, f64)> = code.iter().zip(&labels).map(|(&c, &l)| (c, l as f64)).collect();
        let rec = model.reconstruct(toy.x.as_ref())?;
        let mut panels = Vec::new();
        if d == 2 {
            let lin = linear_ae(toy.x.as_ref(), 1, seed)?;
            let lin_rec = lin.reconstruct(toy.x.as_ref())?;
            panels.push((
                "data (colour) and KAE 2-1-2 reconstruction (black)".to_string(),
                vec![
                    (points(toy.x.as_ref(), 0, Some(1)), labels.clone(), false),
                    (points(rec.as_ref(), 0, Some(1)), labels.clone(), true),
                ],
            ));
            panels.push((
                "linear AE 2-1-2 reconstruction (black)".to_string(),
                vec![
                    (points(toy.x.as_ref(), 0, Some(1)), labels.clone(), false),
                    (points(lin_rec.as_ref(), 0, Some(1)), labels.clone(), true),
                ],
            ));
            let m2 = kae_params(2, 2000, seed).fit(toy.x.as_ref())?;
            panels.push((
                "2-2-2 KAE code".to_string(),
                vec![(points(m2.train_codes()[0].as_ref(), 0, Some(1)), labels.clone(), false)],
            ));
        } else {
            let x_pts: Vec<(f64, f64)> = (0..n).map(|i| (toy.x[(i, 0)], rec[(i, 0)])).collect();
            panels.push(("x (horizontal) vs KAE reconstruction".to_string(), vec![(x_pts, labels.clone(), false)]));
            let enc: Vec<(f64, f64)> = (0..n).map(|i| (toy.x[(i, 0)], code[i])).collect();
            panels.push(("x vs 1-D code (encoder)".to_string(), vec![(enc, labels.clone(), false)]));
        }
        panels.push((
            format!("1-D code by class ({} steps)", model.train_info().n_iter),
            vec![(code_pts, labels.clone(), false)],
        ));
        let hist_pts: Vec<(f64, f64)> = hist.iter().enumerate().map(|(i, &v)| (i as f64, v.ln())).collect();
        panels.push(("ln objective by step".to_string(), vec![(hist_pts.clone(), vec![0; hist_pts.len()], true)]));
        plot_panels(&png, &panels)?;
    }
    let (sep_table, sep_records) = separability(seed)?;
    records.extend(sep_records);
    let (c1_md, c1_records) = super::synthetic_c1::run(out_dir, seed)?;
    records.extend(c1_records);
    let notes = format!(
        "{sep_table}\n{NOTES}\n\nPlots: {}.\n{c1_md}",
        ["circles", "moons", "gaussians-1d", "clusters-2d"]
            .iter()
            .map(|n| format!("![{n}](kae-synthetic-{n}.png)"))
            .collect::<Vec<_>>()
            .join(" ")
    );
    write_experiment(out_dir, "kae-synthetic", &records, &table, &notes)?;
    println!("{table}");
    Ok(())
}

/// Seeds of the separability study.
const SEP_SEEDS: u64 = 5;

/// 2-D codes of `x` by each method: KAE 2-2-2, centred Gaussian KPCA (2
/// components, median heuristic), the linear AE 2-2-2, and the input itself.
fn codes_2d(x: MatRef<'_, f64>, seed: u64) -> Result<Vec<(&'static str, Mat<f64>)>> {
    let kae = kae_params(2, 2000, seed).fit(x)?.train_codes()[0].clone();
    let n = x.nrows();
    let mut d2: Vec<f64> = (0..n)
        .flat_map(|j| (0..j).map(move |i| (i, j)))
        .map(|(i, j)| (0..x.ncols()).map(|k| (x[(i, k)] - x[(j, k)]).powi(2)).sum())
        .collect();
    let mid = d2.len() / 2;
    let median = *d2.select_nth_unstable_by(mid, f64::total_cmp).1;
    let gram = LayerKernel::Gaussian { gamma: 1.0 / median }.gram(x)?;
    let (centred, _) = okr_kernels::combinators::center_gram(gram.as_ref());
    let kpca = Kpca::fit(centred.as_ref(), 2)?.train_codes();
    let lin = linear_ae(x, 2, seed)?.train_codes()[0].clone();
    Ok(vec![("kae", kae), ("kpca", kpca), ("linear-ae", lin), ("input", x.to_owned())])
}

/// Code separability (issue 21): held-out accuracy of a least-squares linear
/// classifier ([`LinearProbe`]) on the 2-D codes of circles and moons, KAE vs
/// KPCA vs the linear AE (and the raw input), over [`SEP_SEEDS`] seeds.
fn separability(seed: u64) -> Result<(String, Vec<MetricRecord>)> {
    use rand::SeedableRng;
    use rand::seq::SliceRandom;
    let mut acc: Vec<((&str, &str), Vec<f64>)> = Vec::new();
    for s in 0..SEP_SEEDS {
        let data_seed = seed + 1000 * (s + 1);
        for toy in [circles(data_seed), moons(data_seed + 1)] {
            let n = toy.x.nrows();
            // Stratified 50/50 split of the points for the probe (the codes are
            // learned on all points without labels).
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(data_seed + 7);
            let k = toy.labels.iter().max().map_or(1, |m| m + 1);
            let (mut train, mut test) = (Vec::new(), Vec::new());
            for c in 0..k {
                let mut idx: Vec<usize> = (0..n).filter(|&i| toy.labels[i] == c).collect();
                idx.shuffle(&mut rng);
                let half = idx.len() / 2;
                train.extend_from_slice(&idx[..half]);
                test.extend_from_slice(&idx[half..]);
            }
            for (method, codes) in codes_2d(toy.x.as_ref(), data_seed)? {
                let probe = LinearProbe::fit(codes.as_ref(), &toy.labels, &train, 1e-6)?;
                let a = probe.accuracy(codes.as_ref(), &toy.labels, &test)?;
                eprintln!("kae-synthetic separability: seed {s} {} {method}: {a:.3}", toy.name);
                match acc.iter_mut().find(|(key, _)| *key == (toy.name, method)) {
                    Some((_, v)) => v.push(a),
                    None => acc.push(((toy.name, method), vec![a])),
                }
            }
        }
    }
    let mut table = String::from(
        "## Code separability by a linear classifier\n\nHeld-out accuracy of a least-squares classifier \
         (`okr_eval::probe::LinearProbe`: one-vs-rest ±1 targets on standardized codes plus a bias, ridge 1e-6) on \
         2-D codes learned from all points without labels, trained on a stratified half of the points and scored on \
         the other half; mean ± std (ddof 1) over 5 seeds (fresh data, split and initialisation each). KAE 2-2-2 as above; \
         KPCA = centred Gaussian kernel PCA with the median heuristic, 2 components; linear AE 2-2-2 (linear kernels, \
         Adam, its optimum spans the input plane); `input` = the raw 2-D points (what a linear classifier does without \
         any code). Circles: 3 classes (chance 0.333); moons: 2 classes (chance 0.5).\n\n\
         | data set | KAE 2-2-2 | KPCA (2) | linear AE 2-2-2 | input |\n|---|---|---|---|---|\n",
    );
    let mut records = Vec::new();
    for toy in ["circles", "moons"] {
        let mut row = format!("| {toy} |");
        for method in ["kae", "kpca", "linear-ae", "input"] {
            let v = &acc.iter().find(|(key, _)| *key == (toy, method)).context("missing accuracy")?.1;
            let m = v.iter().sum::<f64>() / v.len() as f64;
            let sd = (v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (v.len() as f64 - 1.0).max(1.0)).sqrt();
            let _ = write!(row, " {m:.3} ± {sd:.3} |");
            records.push(
                MetricRecord::new("kae-synthetic", format!("{toy}-standin"), method, "probe_accuracy", m)
                    .with_std(sd)
                    .with_stand_in(true)
                    .with_setting("code_dim", 2)
                    .with_setting("seeds", SEP_SEEDS)
                    .with_setting("per_seed", v.clone()),
            );
        }
        table.push_str(&row);
        table.push('\n');
    }
    Ok((table, records))
}

const NOTES: &str = "\
Spec 3.1 (paper Sec. 5.1, Fig. 3; App. C.1, Figs. 5-7). The paper reports figures only and no \
data parameters; the generators follow the spec's proposal (circles of radii 1, 2, 3 with 100 \
points each and noise 0.1; moons n = 200, noise 0.08; 1-D: N(0, 0.1^2) and N(2, 0.1^2), 50 \
points each; 2-D clusters: centres (0,0), (2,2), (4,0), std 0.3, 50 points each), all seeded \
stand-ins. KAE: Gaussian kernels with the median heuristic on every layer (input, then initial \
codes), lambda = 1e-4 on both layers, last layer by KRR refreshed every step, Adam (lr 1e-2), \
codes initialized with RMS 1, at most 2000 steps (stopping when the objective decreases by less \
than 1e-9 relative over 50 steps). The linear AE is the KAE with linear kernels and no penalty, \
trained by Adam (its optimum is uncentred PCA, the PCA-1 column). The separability proxy is the \
best accuracy of labelling the sorted 1-D code by k consecutive intervals (k classes, every \
class order tried); the 5 and 20 step columns are the same seeded run stopped early (the paper's \
Fig. 3d/3e). Paper's qualitative claims and what we see: (i) the KAE 2-1-2 reconstruction is a \
curve much closer to the data than the AE's straight line (compare the MSE columns and the first \
two panels of each plot); (ii) the 1-D code is discriminative between clusters (accuracy columns \
vs chance). On circles the separability is well above chance (about 0.5 vs 0.33) but far from \
the paper's clean per-circle codes: the 1-D code puts the inner circle in a narrow central band \
and spreads the two outer ones over overlapping wide ranges (4th panel). The linear AE column is \
what Adam reached from a random start in 3000 steps; on clusters-2d (uncentred data, large mean) \
it stays far above its own optimum (the PCA-1 column), a reminder that even the linear \
autoencoder is a non-convex problem (spec 4.3).";
