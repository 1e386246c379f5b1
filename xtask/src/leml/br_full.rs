//! `cargo xtask reproduce leml-full-br-sq`: binary relevance with the squared
//! loss and full labels (BR-SQ) on bibtex and delicious, the BR reference line
//! of LEML's Fig. 1a / 1c, set beside `leml-full`'s LEML-SQ and CPLST rows.
//!
//! One resumable record file for both data sets (`leml-full-br-sq.json`):
//! every validation point and the test row are merged in as they finish and a
//! rerun skips what is there. The markdown is rendered from these records and
//! the LEML-SQ / CPLST records of `leml-full.json` (read, never written).

use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

use anyhow::Result;
use faer::MatRef;
use okr_estimators::Fit;
use okr_estimators::leml::{BinaryRelevance, FeatureMap, Loss, SparseDesign, Targets};
use okr_eval::{MetricRecord, read_records};
use okr_kernels::{CsrRows, LabelSets, Rows};
use serde_json::{Value, json};

use super::experiments::{GRID_SQ, METRICS, Validation, evaluate, load};
use super::per_loss::{RunFile, records};
use crate::common::process::MachineState;
use crate::common::report::write_md;

/// Record file and page stem (also the experiment's name in `reproduce`).
pub const STEM: &str = "leml-full-br-sq";
/// The method name of the rows, as `br-sq` of `leml-missing`.
const METHOD: &str = "br-sq";
/// The records' experiment: the rows belong to `leml-full` (as `br-lr`, `br-sh`).
const EXPERIMENT: &str = "leml-full";

/// Rows of `X` per tile of [`ridge_residual`]: the dense tiles of $XW - Y$
/// and $Y$ `(rows, L)` hold at most this many entries each (32 MiB).
const RESIDUAL_TILE_ENTRIES: usize = 1 << 22;

/// Relative residual of the ridge normal equations of BR-SQ,
/// $\lVert (X^\top X + \lambda I) W - X^\top Y \rVert_F / \lVert X^\top Y \rVert_F$
/// with $Y \in \{0,1\}^{n \times L}$, computed as $X^\top (XW - Y) + \lambda W$
/// without the Gram matrix: how far a fitted `W` `(d, L)` is from the closed
/// form (0 at the exact solution).
pub(super) fn ridge_residual(x: &CsrRows, y: &LabelSets, w: MatRef<'_, f64>, lambda: f64) -> f64 {
    ridge_residual_tiled(x, y, w, lambda, (RESIDUAL_TILE_ENTRIES / w.ncols().max(1)).max(1))
}

/// [`ridge_residual`] with the products of the library's
/// [`SparseDesign`] over tiles of `tile` rows:
/// $X^\top(XW - Y) = \sum_b X_b^\top (X_b W - Y_b)$ and likewise $X^\top Y$.
fn ridge_residual_tiled(x: &CsrRows, y: &LabelSets, w: MatRef<'_, f64>, lambda: f64, tile: usize) -> f64 {
    let (d, l, n) = (w.nrows(), w.ncols(), x.n_rows());
    // Row-major (d, L), the layout of `SparseDesign`'s products.
    let w_rows: Vec<f64> = (0..d).flat_map(|f| (0..l).map(move |j| w[(f, j)])).collect();
    let (mut r, mut xty, mut part) = (vec![0.0; d * l], vec![0.0; d * l], vec![0.0; d * l]);
    let (mut e, mut yb) = (Vec::new(), Vec::new());
    for r0 in (0..n).step_by(tile.max(1)) {
        let rows = r0..r0.saturating_add(tile).min(n);
        let design = SparseDesign::new(&x.slice(rows.clone()));
        e.resize(rows.len() * l, 0.0);
        design.mul(&w_rows, l, &mut e);
        yb.clear();
        yb.resize(rows.len() * l, 0.0);
        for (i, labels) in y.iter().skip(r0).take(rows.len()).enumerate() {
            labels.iter().for_each(|&j| yb[i * l + j] = 1.0);
        }
        e.iter_mut().zip(&yb).for_each(|(a, b)| *a -= b);
        design.tmul(&e, l, &mut part);
        r.iter_mut().zip(&part).for_each(|(a, b)| *a += b);
        design.tmul(&yb, l, &mut part);
        xty.iter_mut().zip(&part).for_each(|(a, b)| *a += b);
    }
    let num: f64 = r.iter().zip(&w_rows).map(|(a, b)| (a + lambda * b).powi(2)).sum();
    let den = xty.iter().map(|v| v * v).sum::<f64>();
    (num / den.max(f64::MIN_POSITIVE)).sqrt()
}

fn split_is(r: &MetricRecord, split: &str) -> bool {
    r.setting.get("split").and_then(Value::as_str) == Some(split)
}

fn lambda_of(r: &MetricRecord) -> Option<f64> {
    r.setting.get("lambda").and_then(Value::as_f64)
}

/// The BR-SQ record of `dataset` for `metric` on `split` (validation: at `lambda`).
fn br<'a>(
    recs: &'a [MetricRecord],
    dataset: &str,
    split: &str,
    lambda: Option<f64>,
    metric: &str,
) -> Option<&'a MetricRecord> {
    recs.iter().find(|r| {
        r.dataset == dataset
            && r.method == METHOD
            && r.metric == metric
            && split_is(r, split)
            && (lambda.is_none() || lambda_of(r) == lambda)
    })
}

/// The lambda of `grid` with the best validation P@3 on `dataset` (ties: the
/// smaller lambda), or `None` while a grid point is not measured.
fn chosen(recs: &[MetricRecord], dataset: &str, grid: &[f64]) -> Option<f64> {
    let mut best = (None, f64::NEG_INFINITY);
    for &lambda in grid {
        let p3 = br(recs, dataset, "validation", Some(lambda), "p_at_3")?.value;
        if p3 > best.1 {
            best = (Some(lambda), p3);
        }
    }
    best.0
}

/// `cargo xtask reproduce leml-full-br-sq`: per data set, lambda of BR-SQ by
/// validation P@3 over `grid` (the split of every `leml-full` row), then one
/// fit on all training rows, scored on the test split; DGEMM rate and load
/// are measured just before that fit, the load again after it.
pub fn run(datasets: &[String], out_dir: &Path, seed: u64, lambdas: Option<&[f64]>) -> Result<()> {
    std::fs::create_dir_all(out_dir)?;
    let grid = lambdas.unwrap_or(&GRID_SQ);
    anyhow::ensure!(!grid.is_empty(), "the lambda grid is empty");
    let mut file = RunFile::open(out_dir, STEM)?;
    let full_path = out_dir.join("leml-full.json");
    let beside = if full_path.exists() { read_records(&full_path)? } else { Vec::new() };
    let save = |file: &RunFile| write_md(out_dir, STEM, &render(&file.records, &beside, grid));
    let params = |lambda: f64| BinaryRelevance::params().lambda(lambda).loss(Loss::Squared);
    for name in datasets {
        let data = load(name, seed)?;
        let l = data.n_labels();
        let val = Validation::new(data.x.n_rows(), seed)?;
        let (xf, yf) = data.train_rows(&val.fit);
        let (xv, yv) = data.train_rows(&val.val);
        // A single lambda is used as given (as `leml-full`'s per-loss rows).
        for &lambda in grid.iter().filter(|_| grid.len() > 1) {
            if br(&file.records, &data.name, "validation", Some(lambda), "p_at_3").is_some() {
                continue;
            }
            let t = Instant::now();
            let s = evaluate(&params(lambda).fit(&xf, Targets::Full(&yf))?, &xv, &yv)?;
            let secs = t.elapsed().as_secs_f64();
            eprintln!("xtask: {} {METHOD} validation lambda {lambda}: P@3 {:.2} ({secs:.1} s)", data.name, s.p3);
            let settings =
                [("split", json!("validation")), ("k", json!(l)), ("observed", json!(1.0)), ("lambda", json!(lambda))];
            file.add(records(EXPERIMENT, &data, METHOD, &s, None, &settings, secs, &|_| None))?;
            save(&file)?;
        }
        let lambda = if grid.len() == 1 { grid[0] } else { chosen(&file.records, &data.name, grid).unwrap_or(grid[0]) };
        if br(&file.records, &data.name, "test", None, "p_at_3").is_some_and(|r| lambda_of(r) == Some(lambda)) {
            continue;
        }
        let before = MachineState::now();
        let t = Instant::now();
        let m = params(lambda).fit(&data.x, Targets::Full(&data.y))?;
        let secs = t.elapsed().as_secs_f64();
        let s = evaluate(&m, &data.x_test, &data.y_test)?;
        let residual = ridge_residual(&data.x, &data.y, m.w(), lambda);
        eprintln!(
            "xtask: {} {METHOD} lambda {lambda}: P@1 {:.2} P@3 {:.2} AUC {:.4} ({secs:.1} s, residual {residual:.1e}, DGEMM {:.1} GFLOP/s)",
            data.name, s.p1, s.p3, s.auc, before.dgemm_gflops
        );
        let settings = [
            ("split", json!("test")),
            ("k", json!(l)),
            ("observed", json!(1.0)),
            ("lambda", json!(lambda)),
            ("lambda_from", json!(if grid.len() == 1 { "fixed" } else { "validation" })),
        ];
        let mut new = records(EXPERIMENT, &data, METHOD, &s, None, &settings, secs, &|_| None);
        let mut extra = vec![("dgemm_gflops_before", before.dgemm_gflops), ("ridge_residual", residual)];
        if let Some(load) = before.load {
            extra.push(("load_1min_before", load));
        }
        for (metric, v) in extra {
            let mut r = MetricRecord::new(EXPERIMENT, &data.name, METHOD, metric, v).with_stand_in(data.stand_in);
            for (k, v) in &settings {
                r = r.with_setting(*k, v.clone());
            }
            new.push(r);
        }
        file.add(new)?;
        save(&file)?;
    }
    save(&file)
}

fn prec(metric: &str) -> usize {
    if metric == "hamming" || metric == "auc" { 4 } else { 2 }
}

/// The page: per data set, LEML-SQ and CPLST of `leml-full.json` (`beside`)
/// at every k/L and the BR-SQ row, how often each beats BR-SQ, the machine
/// state of the BR-SQ fit, and its validation grid.
pub(super) fn render(recs: &[MetricRecord], beside: &[MetricRecord], grid: &[f64]) -> String {
    let list = grid.iter().map(f64::to_string).collect::<Vec<_>>().join(", ");
    let mut md = format!(
        "# `cargo xtask reproduce {STEM}`\n\nBinary relevance with the squared loss and full labels (BR-SQ): one ridge \
         regression per label, {{0,1}} targets and Hamming threshold 0.5 as LEML-SQ, all labels solved jointly by CG \
         on (XᵀX + λI) W = XᵀY (relative residual 1e-4, at most 200 steps; through the d x d Gram XᵀX where that is \
         cheaper), the library's defaults as every BR row of `leml-full` and `leml-missing`. It is the BR line the \
         paper draws \"for reference\" in Fig. 1a (bibtex) and 1c (delicious) beside LEML, CPLST and BCS against \
         k/L. **Fig. 1 is an image with no printed numbers, so no paper value stands beside these rows** (the \
         records carry `paper: null`). lambda by validation P@3 on the split of every `leml-full` row (fit on 80 % \
         of the training rows, seeded, scored on the other 20 %), grid {{{list}}} (LEML-SQ's grid in \
         `leml-full`), then one fit on all training rows scored on Mulan's test split. BR has no rank: its row \
         is the same under every k/L. The LEML-SQ and CPLST rows are read from `leml-full.json` (not rerun; their \
         paper values are in [leml-full.md](leml-full.md)). `residual` is \
         ‖(XᵀX + λI)W - XᵀY‖_F / ‖XᵀY‖_F of the final BR-SQ fit, computed apart from the solver. `fit s` is wall \
         time on a 2-core machine shared with other jobs: an upper bound, read with the DGEMM rate and the load \
         beside it. Resumable: finished fits are merged into `{STEM}.json`.\n"
    );
    let mut datasets: Vec<&str> = Vec::new();
    for r in recs.iter().filter(|r| r.method == METHOD) {
        if !datasets.contains(&r.dataset.as_str()) {
            datasets.push(&r.dataset);
        }
    }
    for dataset in datasets {
        let _ = writeln!(md, "\n## {dataset}\n");
        md.push_str(&dataset_md(recs, beside, dataset, grid));
    }
    let _ = write!(md, "\nRecords: `{STEM}.json` (top-k in percent).\n");
    md
}

fn dataset_md(recs: &[MetricRecord], beside: &[MetricRecord], dataset: &str, grid: &[f64]) -> String {
    let mut md = String::new();
    let test = br(recs, dataset, "test", None, "p_at_3");
    let ratios: Vec<f64> = {
        let mut v: Vec<f64> = Vec::new();
        for r in beside.iter().filter(|r| r.dataset == dataset && r.metric == "p_at_3") {
            if let Some(kl) = r.setting.get("k_over_l").and_then(Value::as_f64)
                && !v.contains(&kl)
            {
                v.push(kl);
            }
        }
        v.sort_by(f64::total_cmp);
        v
    };
    let at = |method: &str, kl: f64, metric: &str| {
        beside.iter().find(|r| {
            r.dataset == dataset
                && r.method == method
                && r.metric == metric
                && r.setting.get("k_over_l").and_then(Value::as_f64) == Some(kl)
        })
    };
    md.push_str("| method | k/L | k | lambda | P@1 | P@3 | P@5 | Hamming | AUC | fit s |\n|---|---|---|---|---|---|---|---|---|---|\n");
    for method in ["leml-sq", "cplst"] {
        for &kl in &ratios {
            let Some(p3) = at(method, kl, "p_at_3") else { continue };
            let k = p3.setting.get("k").map_or("-".to_string(), Value::to_string);
            let lambda = lambda_of(p3).map_or("-".to_string(), |v| v.to_string());
            let _ = write!(md, "| {method} | {:.0}% | {k} | {lambda} |", 100.0 * kl);
            for metric in METRICS {
                let _ = write!(
                    md,
                    " {} |",
                    at(method, kl, metric).map_or("-".into(), |r| format!("{:.p$}", r.value, p = prec(metric)))
                );
            }
            let _ =
                writeln!(md, " {} |", at(method, kl, "fit_seconds").map_or("-".into(), |r| format!("{:.1}", r.value)));
        }
    }
    let test_value = |metric: &str| br(recs, dataset, "test", None, metric).map(|r| r.value);
    match test {
        Some(p3) => {
            let k = p3.setting.get("k").map_or("-".to_string(), Value::to_string);
            let lambda = lambda_of(p3).map_or("-".to_string(), |v| v.to_string());
            let _ = write!(md, "| **{METHOD}** | - | {k} | {lambda} |");
            for metric in METRICS {
                let _ = write!(
                    md,
                    " **{}** |",
                    test_value(metric).map_or("-".into(), |v| format!("{v:.p$}", p = prec(metric)))
                );
            }
            let _ = writeln!(md, " {} |", test_value("fit_seconds").map_or("-".into(), |v| format!("{v:.1}")));
            let num = |metric: &str, p: usize| test_value(metric).map_or("-".into(), |v| format!("{v:.p$}"));
            let _ = writeln!(
                md,
                "\nBR-SQ fit: faer DGEMM {} GFLOP/s and 1-minute load {} just before it, load {} after it; ridge \
                 residual {}.",
                num("dgemm_gflops_before", 1),
                num("load_1min_before", 2),
                num("load_1min", 2),
                test_value("ridge_residual").map_or("-".into(), |v| format!("{v:.1e}"))
            );
        }
        None => md.push_str("\n**BR-SQ test row not run yet** (a rerun of the same command resumes).\n"),
    }
    if test.is_some() && !ratios.is_empty() {
        md.push_str(
            "\n**Against BR-SQ** (the paper's reading of Fig. 1: LEML close to BR even at small k/L; better = \
             higher, Hamming lower, a tie is not better)\n\n| metric | BR-SQ | LEML-SQ better at | CPLST better at |\n|---|---|---|---|\n",
        );
        for metric in METRICS {
            let Some(b) = test_value(metric) else { continue };
            let better = |method: &str| {
                let mut n = 0;
                let mut which = Vec::new();
                for &kl in &ratios {
                    let Some(r) = at(method, kl, metric) else { continue };
                    n += 1;
                    if if metric == "hamming" { r.value < b } else { r.value > b } {
                        which.push(format!("{:.0}%", 100.0 * kl));
                    }
                }
                let list = if which.is_empty() { String::new() } else { format!(" ({})", which.join(", ")) };
                format!("{} of {n} k/L{list}", which.len())
            };
            let _ =
                writeln!(md, "| {metric} | {b:.p$} | {} | {} |", better("leml-sq"), better("cplst"), p = prec(metric));
        }
    }
    let best = chosen(recs, dataset, grid);
    let measured: Vec<f64> =
        grid.iter().copied().filter(|&l| br(recs, dataset, "validation", Some(l), "p_at_3").is_some()).collect();
    if !measured.is_empty() {
        let k = br(recs, dataset, "validation", None, "p_at_3")
            .and_then(|r| r.setting.get("k"))
            .map_or("-".to_string(), Value::to_string);
        let _ = write!(
            md,
            "\n**br-sq, k = {k} (all labels), validation** (fit on 80 % of the training rows, scored on the other 20 %)\n\n\
             | lambda | P@1 | P@3 | P@5 | Hamming | AUC | fit s |\n|---|---|---|---|---|---|---|\n"
        );
        for &lambda in &measured {
            let mark = if best == Some(lambda) { " **(chosen)**" } else { "" };
            let _ = write!(md, "| {lambda}{mark} |");
            for metric in METRICS.iter().copied().chain(["fit_seconds"]) {
                let p = if metric == "fit_seconds" { 1 } else { prec(metric) };
                let v = br(recs, dataset, "validation", Some(lambda), metric).map_or(f64::NAN, |r| r.value);
                let _ = write!(md, " {v:.p$} |");
            }
            md.push('\n');
        }
        if grid.len() > 1 && measured.len() == grid.len() {
            let edge = if best == grid.first().copied() {
                Some("smallest")
            } else if best == grid.last().copied() {
                Some("largest")
            } else {
                None
            };
            if let Some(edge) = edge {
                let _ = writeln!(
                    md,
                    "\nThe chosen lambda is the {edge} of the grid: the validation optimum may lie beyond it."
                );
            }
        }
    }
    md
}

#[cfg(test)]
mod tests {
    use faer::Mat;

    use super::*;

    /// X = [[1, 0], [1, 1]], Y = [[1, 0], [0, 1]], lambda = 1:
    /// XᵀX + I = [[3, 1], [1, 2]], XᵀY = [[1, 1], [0, 1]], so
    /// W = (1/5) [[2, -1], [-1, 3]] XᵀY = [[0.4, 0.2], [-0.2, 0.4]].
    fn tiny() -> (CsrRows, LabelSets) {
        let x = CsrRows::from_rows(2, vec![vec![(0, 1.0)], vec![(0, 1.0), (1, 1.0)]]).unwrap();
        let y = LabelSets::new(2, vec![vec![0], vec![1]]).unwrap();
        (x, y)
    }

    #[test]
    fn ridge_residual_against_the_hand_computed_solution() {
        let (x, y) = tiny();
        let exact = Mat::from_fn(2, 2, |i, j| [[0.4, 0.2], [-0.2, 0.4]][i][j]);
        assert!(ridge_residual(&x, &y, exact.as_ref(), 1.0) < 1e-15);
        // W = 0 leaves all of XᵀY: residual 1.
        assert!((ridge_residual(&x, &y, Mat::<f64>::zeros(2, 2).as_ref(), 1.0) - 1.0).abs() < 1e-15);
        // W = I: [[3, 1], [1, 2]] - [[1, 1], [0, 1]] = [[2, 0], [1, 1]], norm sqrt(6) over sqrt(3).
        let eye = Mat::<f64>::identity(2, 2);
        assert!((ridge_residual(&x, &y, eye.as_ref(), 1.0) - 2f64.sqrt()).abs() < 1e-14);
    }

    /// The residual from dense matrices: `Xᵀ(XW - Y) + λW` and `XᵀY` by GEMM.
    fn ridge_residual_dense(x: &CsrRows, y: &LabelSets, w: MatRef<'_, f64>, lambda: f64) -> f64 {
        let (xd, yd) = (x.to_dense(), y.to_indicator());
        let r = xd.transpose() * (&xd * w - &yd) + w * faer::Scale(lambda);
        let xty = xd.transpose() * &yd;
        r.norm_l2() / xty.norm_l2()
    }

    #[test]
    fn sparse_design_products_equal_dense_products_for_any_tile() {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0);
        for (n, d, l) in [(1, 3, 2), (17, 9, 5), (60, 25, 11)] {
            let mut rows = vec![Vec::new(); n];
            // Every row has feature i % d and label i % l, so XᵀY is not 0.
            for (i, row) in rows.iter_mut().enumerate() {
                for f in 0..d {
                    if f == i % d || rng.random_bool(0.3) {
                        row.push((f, rng.random_range(-1.0..1.0)));
                    }
                }
            }
            let x = CsrRows::from_rows(d, rows).unwrap();
            let sets = (0..n).map(|i| (0..l).filter(|&j| j == i % l || rng.random_bool(0.4)).collect()).collect();
            let y = LabelSets::new(l, sets).unwrap();
            let w = Mat::from_fn(d, l, |_, _| rng.random_range(-0.5..0.5));
            let want = ridge_residual_dense(&x, &y, w.as_ref(), 0.7);
            for tile in [1, 4, n, usize::MAX / 2] {
                let got = ridge_residual_tiled(&x, &y, w.as_ref(), 0.7, tile);
                assert!((got - want).abs() <= 1e-12 * want, "{n}x{d}x{l} tile {tile}: {got} vs {want}");
            }
            assert_eq!(ridge_residual(&x, &y, w.as_ref(), 0.7), ridge_residual_tiled(&x, &y, w.as_ref(), 0.7, n));
        }
    }

    #[test]
    fn library_br_sq_reaches_the_closed_form() {
        let (x, y) = tiny();
        let m = BinaryRelevance::params().lambda(1.0).loss(Loss::Squared).fit(&x, Targets::Full(&y)).unwrap();
        assert!(ridge_residual(&x, &y, m.w(), 1.0) < 1e-4);
        assert!((m.w()[(1, 0)] + 0.2).abs() < 1e-4, "{:?}", m.w());
    }

    fn rec(method: &str, metric: &str, v: f64, settings: &[(&str, Value)]) -> MetricRecord {
        let mut r = MetricRecord::new(EXPERIMENT, "bibtex", method, metric, v);
        for (k, s) in settings {
            r = r.with_setting(*k, s.clone());
        }
        r
    }

    #[test]
    fn render_against_a_hand_computed_page() {
        let val = |lambda: f64| vec![("split", json!("validation")), ("k", json!(159)), ("lambda", json!(lambda))];
        let test = vec![("split", json!("test")), ("k", json!(159)), ("lambda", json!(3.0))];
        let mut recs = Vec::new();
        for (lambda, p3) in [(1.0, 30.0), (3.0, 31.0), (10.0, 31.0)] {
            for m in METRICS {
                recs.push(rec(METHOD, m, if m == "p_at_3" { p3 } else { 0.5 }, &val(lambda)));
            }
            recs.push(rec(METHOD, "fit_seconds", 2.0, &val(lambda)));
        }
        for (m, v) in [("p_at_1", 60.0), ("p_at_3", 36.0), ("p_at_5", 26.0), ("hamming", 0.0130), ("auc", 0.9)] {
            recs.push(rec(METHOD, m, v, &test));
        }
        for (m, v) in [
            ("fit_seconds", 4.31),
            ("dgemm_gflops_before", 20.04),
            ("load_1min_before", 1.5),
            ("load_1min", 2.0),
            ("ridge_residual", 3e-5),
        ] {
            recs.push(rec(METHOD, m, v, &test));
        }
        let full = |kl: f64, lambda: Value| vec![("k_over_l", json!(kl)), ("k", json!(32)), ("lambda", lambda)];
        let mut beside = Vec::new();
        // LEML-SQ: P@1 59 then 61 (better than 60 at 40 % only); Hamming 0.0131 then 0.0129 (lower at 40 %).
        for (kl, p1, ham) in [(0.2, 59.0, 0.0131), (0.4, 61.0, 0.0129)] {
            beside.push(rec("leml-sq", "p_at_1", p1, &full(kl, json!(30.0))));
            beside.push(rec("leml-sq", "p_at_3", 35.0, &full(kl, json!(30.0))));
            beside.push(rec("leml-sq", "hamming", ham, &full(kl, json!(30.0))));
            beside.push(rec("cplst", "p_at_3", 37.0, &full(kl, Value::Null)));
        }
        let md = render(&recs, &beside, &[1.0, 3.0, 10.0]);
        assert!(md.contains("## bibtex"), "{md}");
        assert!(md.contains("| leml-sq | 20% | 32 | 30 | 59.00 | 35.00 | - | 0.0131 | - | - |"), "{md}");
        assert!(md.contains("| cplst | 40% | 32 | - | - | 37.00 | - | - | - | - |"), "{md}");
        assert!(
            md.contains(
                "| **br-sq** | - | 159 | 3 | **60.00** | **36.00** | **26.00** | **0.0130** | **0.9000** | 4.3 |"
            ),
            "{md}"
        );
        assert!(
            md.contains(
                "DGEMM 20.0 GFLOP/s and 1-minute load 1.50 just before it, load 2.00 after it; ridge residual 3.0e-5."
            ),
            "{md}"
        );
        assert!(md.contains("| p_at_1 | 60.00 | 1 of 2 k/L (40%) | 0 of 0 k/L |"), "{md}");
        assert!(md.contains("| p_at_3 | 36.00 | 0 of 2 k/L | 2 of 2 k/L (20%, 40%) |"), "{md}");
        assert!(md.contains("| hamming | 0.0130 | 1 of 2 k/L (40%) | 0 of 0 k/L |"), "{md}");
        // Ties go to the smaller lambda: 3 is chosen, inside the grid.
        assert!(md.contains("| 3 **(chosen)** | 0.50 | 31.00 |"), "{md}");
        assert!(md.contains("| 10 | 0.50 | 31.00 |"), "{md}");
        assert!(!md.contains("of the grid"), "{md}");
        assert!(md.contains("no paper value stands beside these rows"));
        // A chosen lambda at the end of the grid is flagged.
        assert!(render(&recs, &beside, &[3.0, 10.0]).contains("the smallest of the grid"));
    }
}
