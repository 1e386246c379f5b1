//! Nystroem KRR streamed over row chunks of K_nm equals the in-memory fit
//! that forms K_nm whole, for every size and chunk size; the Nystroem
//! reduced-rank estimator equals its brute-force composition (Nystroem
//! coefficients, then the projection learned by Algorithm 1 on a subset);
//! the profiled phases match their closed-form flops, and an exactly
//! singular ridge system (repeated anchors) falls back to the whitened path.

mod common;

use common::{random_rows, rel_err};
use faer::Mat;
use okr_estimators::Fit;
use okr_estimators::nystroem::Anchors;
use okr_estimators::{Nystroem, SurrogateModel};
use okr_kernels::{DenseRows, Gaussian, LabelSets, Rows};
use proptest::prelude::*;

/// Label sets with repeats (duplicate outputs exercise the group sums).
fn label_sets(n: usize, n_labels: usize, seed: u64) -> LabelSets {
    let mut r = common::lcg(seed);
    let sets: Vec<Vec<usize>> = (0..n)
        .map(|_| {
            let k = 1 + ((r() + 1.0) * 1.5) as usize;
            let mut s: Vec<usize> =
                (0..k).map(|_| (((r() + 1.0) / 2.0) * n_labels as f64) as usize % n_labels).collect();
            s.sort_unstable();
            s.dedup();
            s
        })
        .collect();
    LabelSets::new(n_labels, sets).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// The streamed fit (any chunk size, dividing n or not) equals the
    /// in-memory fit: same weights, same scores.
    #[test]
    fn streamed_fit_equals_in_memory(
        n in 2usize..60,
        m_frac in 0.05f64..0.5,
        chunk in 1usize..70,
        lambda_exp in -5i32..-1,
        seed in 0u64..1000,
    ) {
        faer::set_global_parallelism(faer::Par::Seq);
        let x = random_rows(n, 3, seed);
        let y = label_sets(n, 6, seed + 1);
        let m = ((n as f64 * m_frac).ceil() as usize).clamp(1, n);
        let params = Nystroem::params(Gaussian::new(0.8).unwrap(), Gaussian::from_sigma2(2.0).unwrap())
            .anchors(Anchors::Uniform(m))
            .lambda(10f64.powi(lambda_exp))
            .seed(seed);
        let valid = okr_estimators::ParamGuard::check(params).unwrap();
        let reference = valid.fit_in_memory(&x, &y).unwrap();
        let streamed = valid.fit_with_chunk_rows(&x, &y, chunk).unwrap();
        prop_assert_eq!(reference.anchor_indices(), streamed.anchor_indices());
        prop_assert_eq!(reference.rank(), streamed.rank());
        let (w0, w1) = (reference.weights().to_owned(), streamed.weights().to_owned());
        // W solves a system whose conditioning grows as m approaches n; the
        // predictions are the contract, the weights agree to rounding times that.
        prop_assert!(rel_err(&w1, &w0) < 1e-7, "weights rel err {}", rel_err(&w1, &w0));
        let xt = random_rows(5, 3, seed + 7);
        let (c0, c1) = (reference.coefficients(&xt).unwrap(), streamed.coefficients(&xt).unwrap());
        prop_assert!(rel_err(&c1, &c0) < 1e-9, "coefficients rel err {}", rel_err(&c1, &c0));
    }
}

/// `fit` (default chunks) equals the in-memory fit on a problem larger than
/// one chunk, and a zero chunk size is an error.
#[test]
fn default_fit_spans_several_chunks() {
    let n = 2 * okr_estimators::nystroem::DEFAULT_CHUNK_ROWS + 17;
    let x = random_rows(n, 4, 3);
    let y = DenseRows::new(Mat::from_fn(n, 2, |i, j| ((i * 3 + j) % 5) as f64)).unwrap();
    let params = Nystroem::params(Gaussian::new(0.5).unwrap(), Gaussian::new(0.5).unwrap())
        .anchors(Anchors::Uniform(40))
        .lambda(1e-4);
    let valid = okr_estimators::ParamGuard::check(params).unwrap();
    let reference = valid.fit_in_memory(&x, &y).unwrap();
    let streamed = valid.fit(&x, &y).unwrap();
    let w = streamed.weights().to_owned();
    assert!(rel_err(&w, &reference.weights().to_owned()) < 1e-9);
    assert!(valid.fit_with_chunk_rows(&x, &y, 0).is_err());
    assert_eq!(x.n_rows(), n);
}

/// Brute-force composition: Nystroem coefficients over the distinct training
/// outputs (in-memory fit), times the projected outputs
/// `K_y(D, D_S) G_S^T`, times the projected candidates `G_S K_y(D_S, c)`,
/// with `G_S` from reduced-rank IOKR (Algorithm 1, explicit `n x n`
/// eigendecompositions) on the same subset.
#[test]
fn nystroem_reduced_rank_equals_brute_force_composition() {
    use okr_estimators::{NystroemReducedRank, ReducedRankIokr};
    use okr_kernels::Kernel;
    faer::set_global_parallelism(faer::Par::Seq);
    for (n, m, s, p, seed) in [(40, 12, 25, 3, 0u64), (60, 30, 40, 5, 1), (33, 33, 33, 4, 2)] {
        let x = random_rows(n, 3, seed);
        let y = label_sets(n, 7, seed + 11);
        let (kx, ky) = (Gaussian::new(0.7).unwrap(), Gaussian::from_sigma2(2.0).unwrap());
        let (lambda1, lambda2) = (1e-2, 1e-3);
        let params = NystroemReducedRank::params(kx.clone(), ky.clone())
            .anchors(Anchors::Uniform(m))
            .subset(Anchors::Uniform(s))
            .rank(p)
            .lambda1(lambda1)
            .lambda2(lambda2)
            .chunk_rows(7)
            .seed(seed);
        let model = params.fit(&x, &y).unwrap();
        assert_eq!(model.rank(), p);

        let nys = Nystroem::params(kx.clone(), ky.clone())
            .anchors(Anchors::Given(model.anchor_indices().to_vec()))
            .lambda(lambda2);
        let nys = okr_estimators::ParamGuard::check(nys).unwrap().fit_in_memory(&x, &y).unwrap();
        let sub = model.subset_indices();
        let rr = ReducedRankIokr::params(kx.clone(), ky.clone())
            .rank(p)
            .lambda1(lambda1)
            .fit(&x.select(sub), &y.select(sub))
            .unwrap();
        let g_s = rr.encoder().to_owned();
        let uy = ky.gram_block(nys.distinct_outputs(), rr.distinct_outputs()) * g_s.transpose();

        let xt = random_rows(9, 3, seed + 5);
        let (cand, _) = y.group_duplicates();
        let reference = nys.coefficients(&xt).unwrap() * &uy * (&g_s * ky.gram_block(rr.distinct_outputs(), &cand));
        let got = model.coefficients(&xt).unwrap() * {
            let mut g = Mat::zeros(p, cand.n_rows());
            model.atom_products_into(&cand, g.as_mut(), faer::Par::Seq).unwrap();
            g
        };
        assert!(rel_err(&got, &reference) < 1e-8, "n {n}: rel err {}", rel_err(&got, &reference));

        // Orthonormal directions, and the eigenvalues of K_h agree.
        let gram = model.encoder() * ky.gram(model.distinct_outputs()) * model.encoder().transpose();
        assert!((gram - Mat::<f64>::identity(p, p)).norm_max() < 1e-8);
        for i in 0..p {
            assert!((model.mu()[i] - rr.mu()[i]).abs() <= 1e-8 * rr.mu()[0], "mu {i}");
        }

        // Composing an already fitted Nystroem model gives the same model,
        // and a truncated model equals a refit at the lower rank.
        let composed =
            okr_estimators::ParamGuard::check(params.clone()).unwrap().fit_from_nystroem(&nys, &x, &y).unwrap();
        let c0 = model.coefficients(&xt).unwrap();
        let c1 = composed.coefficients(&xt).unwrap();
        assert!(rel_err(&c1, &c0) < 1e-8);
        let low = params.clone().rank(2).fit(&x, &y).unwrap();
        let trunc = model.truncated(2).unwrap();
        let (cl, ct) = (low.coefficients(&xt).unwrap(), trunc.coefficients(&xt).unwrap());
        assert!(rel_err(&ct, &cl) < 1e-8);
    }
}

/// The phases a streamed Nystroem fit marks (what `cargo xtask bench
/// --scale` reports) and their flop counts against the closed forms:
/// `ceil(n / chunk)` kernel blocks and SYRKs of `m (m + 1) c` flops over
/// chunks of `c` rows; on the direct path `m (m + 1)` to form the lower
/// triangle of `B = K_mn K_nm + n lambda K_mm`, `m^3 / 3` for its Cholesky
/// and `2 m^2 k` for the solves with `k` distinct outputs, and no whitening.
#[test]
fn profiled_fit_reports_its_phases_with_closed_form_flops() {
    use okr_estimators::ParamGuard;
    use okr_linalg::profile;
    let (n, m, chunk) = (50usize, 8usize, 16usize);
    let x = random_rows(n, 3, 11);
    let y = label_sets(n, 5, 12);
    let k = y.group_duplicates().0.n_rows() as f64;
    let params = Nystroem::params(Gaussian::new(0.5).unwrap(), Gaussian::new(0.5).unwrap())
        .anchors(Anchors::Uniform(m))
        .lambda(1e-2)
        .check()
        .unwrap();
    let (model, phases) = profile::collect(|| params.fit_with_chunk_rows(&x, &y, chunk));
    model.unwrap();
    let get = |name: &str| phases.iter().find(|p| p.name == name).unwrap_or_else(|| panic!("no phase {name}"));
    let mf = m as f64;
    assert_eq!(get("kernel blocks").calls, n.div_ceil(chunk));
    let syrk = get("SYRK A^T A");
    assert_eq!(syrk.calls, n.div_ceil(chunk));
    assert_eq!(syrk.flops, mf * (mf + 1.0) * n as f64);
    assert_eq!(get("anchor Gram K_mm").calls, 1);
    assert_eq!(get("system B = A^T A + ridge K_mm").flops, mf * (mf + 1.0));
    let chol = get("system Cholesky");
    assert_eq!((chol.calls, chol.flops), (1, mf * mf * mf / 3.0));
    let solves = get("solves");
    assert_eq!((solves.calls, solves.flops), (1, 2.0 * mf * mf * k));
    assert!(!phases.iter().any(|p| p.name.starts_with("whitening") || p.name.starts_with("system Phi")));
    assert!(phases.iter().all(|p| p.seconds >= 0.0 && p.cpu_seconds.is_none_or(|c| c >= 0.0)));
    // Outside `collect` nothing is recorded.
    assert!(!profile::is_collecting());
}

/// Repeated anchors make `B = K_mn K_nm + n lambda K_mm` exactly singular
/// (equal columns), for any lambda: the direct path is refused, the
/// whitened path drops the repeated directions of `K_mm`, and the model
/// predicts as the fit on the distinct anchors (same span of features).
#[test]
fn repeated_anchors_fall_back_to_the_whitened_path() {
    use okr_linalg::profile;
    let n = 60;
    let (x, y, xt) = (random_rows(n, 3, 5), label_sets(n, 6, 6), random_rows(7, 3, 8));
    let distinct: Vec<usize> = (0..12).map(|i| 5 * i).collect();
    let repeated: Vec<usize> = distinct.iter().copied().chain([5, 20, 35]).collect();
    for lambda in [1e-3, 1e-9] {
        let fit = |anchors: &[usize]| {
            let params = Nystroem::params(Gaussian::new(0.8).unwrap(), Gaussian::from_sigma2(2.0).unwrap())
                .anchors(Anchors::Given(anchors.to_vec()))
                .lambda(lambda);
            profile::collect(|| params.fit(&x, &y).unwrap())
        };
        let (model, phases) = fit(&repeated);
        assert!(phases.iter().any(|p| p.name == "whitening (eigen)"), "lambda {lambda}");
        assert_eq!(model.rank(), distinct.len(), "lambda {lambda}");
        let (reference, _) = fit(&distinct);
        let (c, c0) = (model.coefficients(&xt).unwrap(), reference.coefficients(&xt).unwrap());
        assert!(rel_err(&c, &c0) < 1e-6, "lambda {lambda}: rel err {}", rel_err(&c, &c0));
    }
}
