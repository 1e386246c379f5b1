//! `cargo xtask reproduce metabolite-id`: molecule identification from
//! MS/MS spectra end to end (issue 34), on the seeded spectra stand-in
//! ([`SpectraStandinSpec`], labelled `metabolite-standin` in every record).
//!
//! The protocol (Brouard et al. 2016, as CSI:FingerID trains it):
//!
//! 1. **Inputs**: two probability product kernels on the spectra
//!    ([`Ppk`]): fragment peaks with peak width [`PEAK_WIDTH`] (uniform
//!    peak weights: the stand-in's intensities are log-normal noise), and the same with a precursor term of width
//!    [`PRECURSOR_WIDTH`]; combined by ALIGNF
//!    ([`okr_kernels::mkl::alignf_weights`]) on each training part against
//!    the Tanimoto Gram of the training fingerprints.
//! 2. **Folds**: [`GroupKFold`] by molecule, [`FOLDS`] folds: every spectrum
//!    of one structure is in one fold, so every test structure is new.
//! 3. **Models**: IOKR and reduced-rank IOKR fitted with [`okr::fit_gram`]
//!    on the combined training Gram, fingerprint outputs with the Tanimoto
//!    output kernel; IOKR's ridge by okr's closed-form leave-one-out on the
//!    training part (the `fit_gram` default); reduced rank at IOKR's ridge
//!    and rank [`RR_RANK`]. IOKR on the first kernel alone shows what the
//!    combination adds.
//! 4. **Ranking**: each test spectrum's candidates are the molecules of its
//!    formula (measured molecules and decoys; a second time without the
//!    molecules that have a training spectrum, see [`CANDIDATE_SETS`]), ranked by
//!    [`PerQueryDecoder`]; top-1/5/10/20 and mean rank, ties counted
//!    against the truth (pessimistic, the headline) and for it
//!    (optimistic), as [`okr_eval::retrieval_metrics`] documents.
//! 5. **Baselines** under the same combined kernel: `library-search` scores
//!    a candidate by its most similar training spectrum (candidates with
//!    no training spectrum, which under grouped folds includes the truth,
//!    tie at the bottom); `nearest-spectrum-fingerprint` takes the molecule
//!    of the most similar training spectrum and ranks the candidates by the
//!    Tanimoto similarity of their fingerprints to its fingerprint.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use faer::Mat;
use okr::{Estimator, InputRecipe, KernelRecipe, OutputKind, OutputRecipe, Recipe, TrainOutputs};
use okr_decode::per_query::{PerQueryDecoder, Query};
use okr_eval::{GroupKFold, MetricRecord, RetrievalMetrics, SpectraStandin, SpectraStandinSpec, retrieval_metrics};
use okr_kernels::{GramRows, Kernel, LabelSets, PeakWeights, Ppk, Rows, Tanimoto};

use crate::common::process::MachineState;
use crate::common::report::write_outputs;

/// Experiment name.
const NAME: &str = "metabolite-id";
/// Measured molecules of the stand-in (1 to 3 spectra each).
const MOLECULES: usize = 700;
/// Formulas (candidate sets).
const FORMULAS: usize = 30;
/// Unmeasured candidates per formula.
const DECOYS: usize = 40;
/// Fingerprint bits.
const BITS: usize = 2048;
/// Grouped folds.
const FOLDS: usize = 5;
/// PPK peak width $\sigma_m$ (m/z): five times the stand-in's m/z noise
/// (0.002), far below the spacing of its fragment masses (about 0.27), and
/// the typical fragment tolerance of high-resolution instruments.
const PEAK_WIDTH: f64 = 0.01;
/// Width $\sigma_p$ of the precursor term of the second kernel (m/z).
const PRECURSOR_WIDTH: f64 = 0.01;
/// Rank of reduced-rank IOKR.
const RR_RANK: usize = 128;

/// The ranks of one method's queries over all folds, for both candidate
/// sets ([`CANDIDATE_SETS`]: index 0 all molecules of the formula, 1 those
/// without a training spectrum).
#[derive(Default)]
struct Ranks {
    optimistic: [Vec<usize>; 2],
    pessimistic: [Vec<usize>; 2],
    fit_seconds: f64,
    rank_seconds: f64,
}

impl Ranks {
    fn push(&mut self, set: usize, (o, p): (usize, usize)) {
        self.optimistic[set].push(o);
        self.pessimistic[set].push(p);
    }
}

/// The two candidate sets of a query: every molecule of its formula
/// (training structures included, as a database search returns them), and
/// only those without a spectrum in the training part.
const CANDIDATE_SETS: [&str; 2] = ["formula", "formula-unseen"];

/// `(optimistic, pessimistic)` rank of `scores[truth]`, higher scores better:
/// `1 + #{c : s_c > s_t}` and `#{c : s_c >= s_t}`.
fn true_rank(scores: &[f64], truth: usize) -> (usize, usize) {
    let t = scores[truth];
    (1 + scores.iter().filter(|&&s| s > t).count(), scores.iter().filter(|&&s| s >= t).count())
}

/// `k[rows, cols]`.
fn block(k: &Mat<f64>, rows: &[usize], cols: &[usize]) -> Mat<f64> {
    Mat::from_fn(rows.len(), cols.len(), |i, j| k[(rows[i], cols[j])])
}

/// The fingerprint recipe on a precomputed Gram.
fn recipe(estimator: Estimator, lambda: Option<f64>, seed: u64) -> Recipe {
    let mut r = Recipe::new(estimator)
        .seed(seed)
        .input(InputRecipe::Gram)
        .output(OutputRecipe { kind: OutputKind::Fingerprint, kernel: Some(KernelRecipe::named("tanimoto")) });
    r.estimator.lambda = lambda;
    if estimator == Estimator::ReducedRank {
        r.estimator.rank = Some(RR_RANK);
    }
    r
}

/// Fits `recipe` on `k_train`, ranks the test queries, returns the resolved
/// ridge (`lambda`, or reduced rank's `lambda1`).
fn fit_and_rank(
    recipe: &Recipe,
    k_train: Mat<f64>,
    k_test: Mat<f64>,
    y: &LabelSets,
    pool: &LabelSets,
    queries: &[Vec<Query<LabelSets>>; 2],
    out: &mut Ranks,
) -> Result<f64> {
    let t = Instant::now();
    let fitted = okr::fit_gram(recipe, &GramRows::train(k_train)?, &TrainOutputs::Fingerprints(y))?;
    out.fit_seconds += t.elapsed().as_secs_f64();
    let e = &fitted.recipe.estimator;
    let lambda = e.lambda.or(e.lambda1).context("the resolved recipe records its ridge")?;
    let model = fitted.model.gram_surrogate().context("a Gram model")?;
    let x_test = GramRows::test(k_test, None)?;
    for (set, queries) in queries.iter().enumerate() {
        let t = Instant::now();
        let ranked = PerQueryDecoder::new().top_k(Some(1)).rank_all(model, &x_test, Some(pool), queries.to_vec())?;
        if set == 0 {
            out.rank_seconds += t.elapsed().as_secs_f64();
        }
        for r in ranked {
            let t = r.true_rank.context("every query marks its truth")?;
            out.push(set, (t.optimistic, t.pessimistic));
        }
    }
    Ok(lambda)
}

/// One method's figures on one candidate set.
struct Row {
    method: &'static str,
    candidates: &'static str,
    mean_candidates: f64,
    input: &'static str,
    metrics: RetrievalMetrics,
    fit_seconds: f64,
    rank_seconds: f64,
}

/// The stand-in of the experiment.
fn standin(seed: u64) -> Result<SpectraStandin> {
    Ok(SpectraStandinSpec::new(MOLECULES, FORMULAS).n_bits(BITS).decoys_per_formula(DECOYS).seed(seed).generate()?)
}

/// Runs the experiment and writes `metabolite-id.{md,json}`.
pub fn run(out_dir: &Path, seed: u64) -> Result<()> {
    let start = Instant::now();
    let before = MachineState::now();
    let data = standin(seed)?;
    let n = data.spectra.n_rows();
    let fp = &data.fingerprints;
    let n_peaks = data.spectra.iter().map(|s| s.n_peaks()).sum::<usize>() as f64 / n as f64;
    let cand_sizes: Vec<usize> = data.candidates.iter().map(Vec::len).collect();
    eprintln!("xtask: {NAME}: {n} spectra of {MOLECULES} molecules, {} candidates in all", fp.n_rows());

    let t = Instant::now();
    let ppk = Ppk::params().peak_width(PEAK_WIDTH).weights(PeakWeights::Uniform).check()?;
    let ppk_prec = ppk.to_params().precursor_width(Some(PRECURSOR_WIDTH)).check()?;
    let k1 = ppk.gram(&data.spectra);
    let k2 = ppk_prec.gram(&data.spectra);
    let gram_seconds = t.elapsed().as_secs_f64();
    let y_all = data.molecule.iter().map(|&m| fp.set(m).to_vec()).collect();
    let y_all = LabelSets::new(BITS, y_all)?;

    let folds = GroupKFold::new(FOLDS).seed(seed).split(&data.molecule)?;
    let (mut iokr, mut iokr_ppk, mut rr, mut lib, mut nn) =
        (Ranks::default(), Ranks::default(), Ranks::default(), Ranks::default(), Ranks::default());
    let mut log = String::new();
    let mut candidate_counts = [0usize; 2];
    for (f, (tr, te)) in folds.iter().enumerate() {
        if te.iter().any(|i| tr.iter().any(|j| data.molecule[*j] == data.molecule[*i])) {
            bail!("fold {f}: a test structure has a training spectrum");
        }
        let y = y_all.select(tr);
        // ALIGNF on the training part against the Tanimoto output Gram.
        let t = Instant::now();
        let (k1_tr, k2_tr) = (block(&k1, tr, tr), block(&k2, tr, tr));
        let target = Tanimoto.gram(&y);
        let w = okr_kernels::mkl::alignf_weights(&[k1_tr.as_ref(), k2_tr.as_ref()], target.as_ref())?;
        let combine =
            |a: &Mat<f64>, b: &Mat<f64>| Mat::from_fn(a.nrows(), a.ncols(), |i, j| w[0] * a[(i, j)] + w[1] * b[(i, j)]);
        let k_tr = combine(&k1_tr, &k2_tr);
        let k_te = combine(&block(&k1, te, tr), &block(&k2, te, tr));
        let alignf_seconds = t.elapsed().as_secs_f64();
        let mut in_train = vec![false; fp.n_rows()];
        for &j in tr {
            in_train[data.molecule[j]] = true;
        }
        let candidates = |m: usize, set: usize| -> Vec<usize> {
            data.candidates[data.formula[m]].iter().copied().filter(|&c| set == 0 || !in_train[c]).collect()
        };
        let queries: [Vec<Query<LabelSets>>; 2] = [0, 1].map(|set| {
            te.iter()
                .enumerate()
                .map(|(row, &i)| {
                    let m = data.molecule[i];
                    let cands = candidates(m, set);
                    let pos = cands.iter().position(|&c| c == m);
                    Query::pooled(format!("s{i}"), row, cands, pos)
                })
                .collect()
        });
        for (set, q) in queries.iter().enumerate() {
            candidate_counts[set] += q.iter().map(Query::n_candidates).sum::<usize>();
        }
        let lambda = fit_and_rank(
            &recipe(Estimator::Iokr, None, seed),
            k_tr.clone(),
            k_te.clone(),
            &y,
            fp,
            &queries,
            &mut iokr,
        )?;
        iokr.fit_seconds += alignf_seconds;
        let lambda_ppk = fit_and_rank(
            &recipe(Estimator::Iokr, None, seed),
            k1_tr.clone(),
            block(&k1, te, tr),
            &y,
            fp,
            &queries,
            &mut iokr_ppk,
        )?;
        fit_and_rank(
            &recipe(Estimator::ReducedRank, Some(lambda), seed),
            k_tr,
            k_te.clone(),
            &y,
            fp,
            &queries,
            &mut rr,
        )?;
        rr.fit_seconds += alignf_seconds;
        // Baselines on the same combined kernel.
        let t = Instant::now();
        for (row, &i) in te.iter().enumerate() {
            let m = data.molecule[i];
            let mut best_of_molecule = std::collections::HashMap::new();
            let (mut best, mut best_sim) = (tr[0], f64::NEG_INFINITY);
            for (col, &j) in tr.iter().enumerate() {
                let s = k_te[(row, col)];
                let e = best_of_molecule.entry(data.molecule[j]).or_insert(f64::NEG_INFINITY);
                *e = f64::max(*e, s);
                if s > best_sim {
                    (best, best_sim) = (j, s);
                }
            }
            let nearest = data.molecule[best];
            for set in 0..2 {
                let cands = candidates(m, set);
                let truth = cands.iter().position(|&c| c == m).context("truth among its candidates")?;
                let lib_scores: Vec<f64> =
                    cands.iter().map(|c| best_of_molecule.get(c).copied().unwrap_or(f64::NEG_INFINITY)).collect();
                lib.push(set, true_rank(&lib_scores, truth));
                let nn_scores: Vec<f64> = cands.iter().map(|&c| Tanimoto.eval(fp, nearest, fp, c)).collect();
                nn.push(set, true_rank(&nn_scores, truth));
            }
        }
        let baseline_seconds = t.elapsed().as_secs_f64();
        lib.rank_seconds += baseline_seconds / 2.0;
        nn.rank_seconds += baseline_seconds / 2.0;
        let line = format!(
            "fold {f}: {} training / {} test spectra; ALIGNF weights ({:.3}, {:.3}); IOKR lambda {lambda:.0e} \
             (PPK alone {lambda_ppk:.0e})",
            tr.len(),
            te.len(),
            w[0],
            w[1]
        );
        eprintln!("xtask: {NAME}: {line}");
        writeln!(log, "- {line}")?;
    }
    let after = MachineState::now();
    let mean_candidates = candidate_counts.map(|c| c as f64 / n as f64);
    let mut rows = Vec::new();
    for (set, cand_name) in CANDIDATE_SETS.iter().enumerate() {
        for (method, input, r) in [
            ("iokr", "alignf(ppk, ppk-precursor)", &iokr),
            ("reduced-rank-iokr", "alignf(ppk, ppk-precursor)", &rr),
            ("iokr-ppk-only", "ppk", &iokr_ppk),
            ("nearest-spectrum-fingerprint", "alignf(ppk, ppk-precursor)", &nn),
            ("library-search", "alignf(ppk, ppk-precursor)", &lib),
        ] {
            rows.push(Row {
                method,
                candidates: cand_name,
                mean_candidates: mean_candidates[set],
                input,
                metrics: retrieval_metrics(&r.optimistic[set], &r.pessimistic[set])?,
                fit_seconds: r.fit_seconds,
                rank_seconds: r.rank_seconds,
            });
        }
    }
    let total = start.elapsed().as_secs_f64();
    let sizes = Sizes {
        spectra: n,
        molecules: MOLECULES,
        candidates_min: cand_sizes.iter().copied().min().unwrap_or(0),
        candidates_mean: cand_sizes.iter().sum::<usize>() as f64 / cand_sizes.len().max(1) as f64,
        candidates_max: cand_sizes.iter().copied().max().unwrap_or(0),
        peaks_mean: n_peaks,
    };
    let recs = records(&rows, &sizes, seed, gram_seconds, total, (&before, &after));
    let md = render(&rows, &sizes, &log, gram_seconds, total, before.describe(&after));
    write_outputs(out_dir, NAME, &recs, &md)?;
    println!("{md}");
    Ok(())
}

/// Sizes of the stand-in, for the setting and the text.
struct Sizes {
    spectra: usize,
    molecules: usize,
    candidates_min: usize,
    candidates_mean: f64,
    candidates_max: usize,
    peaks_mean: f64,
}

fn records(
    rows: &[Row],
    sizes: &Sizes,
    seed: u64,
    gram_seconds: f64,
    total: f64,
    (before, after): (&MachineState, &MachineState),
) -> Vec<MetricRecord> {
    let dataset = SpectraStandin::dataset_name();
    let mut out = Vec::new();
    let setting = |rec: &mut MetricRecord, input: &str| {
        rec.stand_in = true;
        for (k, v) in [
            ("spectra", serde_json::Value::from(sizes.spectra)),
            ("molecules", sizes.molecules.into()),
            ("bits", BITS.into()),
            ("folds", FOLDS.into()),
            ("grouping", "molecule".into()),
            ("input", input.into()),
            ("peak_width", PEAK_WIDTH.into()),
            ("precursor_width", PRECURSOR_WIDTH.into()),
            ("output_kernel", "tanimoto".into()),
            ("seed", seed.into()),
        ] {
            rec.setting.insert(k.into(), v);
        }
    };
    for r in rows {
        let (p, o) = (&r.metrics.pessimistic, &r.metrics.optimistic);
        let mut figures: Vec<(String, f64, Option<f64>)> = Vec::new();
        for (i, k) in okr_eval::retrieval_metrics::TOP_KS.iter().enumerate() {
            figures.push((format!("top{k}"), p.top_k[i], None));
            figures.push((format!("top{k}_optimistic"), o.top_k[i], None));
        }
        figures.push(("mean_rank".into(), p.mean_rank, None));
        figures.push(("mean_rank_optimistic".into(), o.mean_rank, None));
        figures.push(("median_rank".into(), p.median_rank, None));
        figures.push(("fit_seconds".into(), r.fit_seconds, Some(r.fit_seconds)));
        figures.push(("decode_seconds".into(), r.rank_seconds, Some(r.rank_seconds)));
        for (metric, value, seconds) in figures {
            let mut rec = MetricRecord::new(NAME, dataset, r.method, metric, value);
            setting(&mut rec, r.input);
            rec.setting.insert("candidates".into(), r.candidates.into());
            rec.setting.insert("mean_candidates".into(), r.mean_candidates.into());
            rec.seconds = seconds;
            if r.method.contains("iokr") {
                rec.setting.insert("lambda".into(), "leave-one-out on the training part".into());
            }
            if r.method == "reduced-rank-iokr" {
                rec.setting.insert("rank".into(), RR_RANK.into());
            }
            out.push(rec);
        }
    }
    let mut push_machine = |metric: &str, value: f64| {
        let mut rec = MetricRecord::new(NAME, dataset, "machine", metric, value);
        setting(&mut rec, "alignf(ppk, ppk-precursor)");
        out.push(rec);
    };
    push_machine("dgemm_gflops_before", before.dgemm_gflops);
    push_machine("dgemm_gflops_after", after.dgemm_gflops);
    let mut rec = MetricRecord::new(NAME, dataset, "ppk-gram", "gram_seconds", gram_seconds);
    setting(&mut rec, "ppk and ppk-precursor, n x n each");
    rec.seconds = Some(gram_seconds);
    out.push(rec);
    let mut rec = MetricRecord::new(NAME, dataset, "all", "total_seconds", total);
    setting(&mut rec, "alignf(ppk, ppk-precursor)");
    rec.seconds = Some(total);
    out.push(rec);
    out
}

fn render(rows: &[Row], sizes: &Sizes, log: &str, gram_seconds: f64, total: f64, machine: String) -> String {
    let mut md = format!(
        "# `cargo xtask reproduce {NAME}`\n\n\
         Molecule identification from MS/MS spectra on the **seeded spectra stand-in** (`metabolite-standin`: planted \
         fragments, formulas as labels; not chemistry, see docs/metabolite-id.md). {} spectra of {} molecules, {BITS}-bit \
         fingerprints, {} formulas with {}..{} candidates each (mean {:.1}), {:.0} peaks per spectrum on average. \
         {FOLDS} folds grouped by molecule: every test structure is absent from training.\n\n\
         Top-k in percent with ties counted against the truth (pessimistic), ties in its favour (optimistic) in \
         brackets; mean rank pessimistic.\n\n\
         | candidates | mean candidates | method | input kernel | top-1 | top-5 | top-10 | top-20 | mean rank | fit s | rank s |\n\
         |---|---|---|---|---|---|---|---|---|---|---|\n",
        sizes.spectra,
        sizes.molecules,
        FORMULAS,
        sizes.candidates_min,
        sizes.candidates_max,
        sizes.candidates_mean,
        sizes.peaks_mean
    );
    for r in rows {
        let (p, o) = (&r.metrics.pessimistic, &r.metrics.optimistic);
        let cell = |i: usize| format!("{:.1} ({:.1})", 100.0 * p.top_k[i], 100.0 * o.top_k[i]);
        let _ = writeln!(
            md,
            "| {} | {:.1} | {} | {} | {} | {} | {} | {} | {:.1} | {:.2} | {:.2} |",
            r.candidates,
            r.mean_candidates,
            r.method,
            r.input,
            cell(0),
            cell(1),
            cell(2),
            cell(3),
            p.mean_rank,
            r.fit_seconds,
            r.rank_seconds
        );
    }
    let _ = write!(
        md,
        "\n## Settings\n\n\
         - Input kernels: `ppk` = probability product kernel, peak width {PEAK_WIDTH} m/z, uniform peak weights; \
         `ppk-precursor` = the same times a Gaussian on the precursor m/z of width {PRECURSOR_WIDTH}; combined by \
         ALIGNF fitted on each training part against the Tanimoto Gram of its fingerprints.\n\
         - IOKR: `okr::fit_gram`, Tanimoto output kernel, ridge by okr's closed-form leave-one-out on the training \
         part (grid 1e-8..1e-1); reduced-rank IOKR at IOKR's ridge, rank {RR_RANK}.\n\
         - Candidates: `formula` = every molecule of the query's formula (measured ones, training structures \
         included, and the unmeasured decoys); `formula-unseen` = the same without the molecules that have a \
         training spectrum in the fold.\n\
         - `library-search`: a candidate's score is its most similar training spectrum under the combined kernel; \
         candidates without a training spectrum (the truth always, under grouped folds) tie at the bottom, so its \
         pessimistic rank is the candidate count.\n\
         - `nearest-spectrum-fingerprint`: the molecule of the most similar training spectrum; candidates ranked by \
         the Tanimoto similarity of their fingerprints to its fingerprint.\n\
         - Fit seconds include ALIGNF for the combined-kernel models, not the Grams ({gram_seconds:.1} s for both \
         PPK Grams). Whole run {total:.1} s. {machine}.\n\n{log}\n\
         Records: `{NAME}.json` (fractions, not percentages).\n"
    );
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ranks against a brute-force sort, ties both ways.
    #[test]
    fn true_rank_counts_ties_both_ways() {
        assert_eq!(true_rank(&[0.5, 0.9, 0.5, 0.1], 0), (2, 3));
        assert_eq!(true_rank(&[0.5, 0.9, 0.5, 0.1], 1), (1, 1));
        assert_eq!(true_rank(&[0.5, 0.9, 0.5, 0.1], 3), (4, 4));
        let s = [f64::NEG_INFINITY, 0.2, f64::NEG_INFINITY];
        assert_eq!(true_rank(&s, 0), (2, 3));
    }

    /// The experiment's stand-in: folds keep molecules whole, every query's
    /// truth is among its formula's candidates, candidate sets of the
    /// documented size.
    #[test]
    fn standin_folds_and_candidates() {
        let d = SpectraStandinSpec::new(60, 4).decoys_per_formula(5).seed(1).generate().unwrap();
        let folds = GroupKFold::new(3).split(&d.molecule).unwrap();
        for (tr, te) in &folds {
            for &i in te {
                assert!(tr.iter().all(|&j| d.molecule[j] != d.molecule[i]));
                assert!(d.candidates[d.formula[d.molecule[i]]].contains(&d.molecule[i]));
            }
        }
        assert!(d.candidates.iter().all(|c| c.len() >= 6));
    }
}
