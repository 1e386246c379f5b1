//! Output kinds beyond label sets: binary fingerprints (`LabelSets` of set
//! bits, Tanimoto and Gaussian-Tanimoto output kernels) and dense vectors
//! (`DenseRows`, Gaussian and linear output kernels) and graphs (`Graphs`, WL
//! subtree output kernel) and rankings (`Rankings`, Kendall and Mallows output
//! kernels, counted pair of items by pair of items), for IOKR, reduced rank,
//! SISOKR and Nystroem, against closed forms computed pair by pair on
//! explicit 0/1 or real vectors (WL label-count histograms for graphs).

use faer::Mat;
use faer::linalg::solvers::Solve;
use okr_decode::CandidateDecoder;
use okr_decode::per_query::{PerQueryDecoder, Query};
use okr_estimators::Fit;
use okr_estimators::nystroem::Anchors;
use okr_estimators::sketch::{SketchKind, SketchSpec};
use okr_estimators::{Iokr, Nystroem, ReducedRankIokr, SketchedIokr, SurrogateModel};
use okr_kernels::{
    DenseRows, Gaussian, GaussianTanimoto, Graph, Graphs, Kernel, LabelSets, Linear, RankingKernel, Rankings, Rows,
    Tanimoto, WlSubtree,
};

type Pair = fn(&[f64], &[f64]) -> f64;
/// Training inputs, training outputs, test inputs, candidates (explicit vectors).
type Data<'a> = (&'a [Vec<f64>], &'a [Vec<f64>], &'a [Vec<f64>], &'a [Vec<f64>]);
/// A model, the closed-form scores it must match and the tolerance.
type Case<'a, Y> = (&'static str, Box<dyn SurrogateModel<DenseRows, Y>>, &'a Mat<f64>, f64);

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(u, v)| u * v).sum()
}
fn sq_dist(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(u, v)| (u - v).powi(2)).sum()
}
fn tanimoto(a: &[f64], b: &[f64]) -> f64 {
    let ab = dot(a, b);
    let den = dot(a, a) + dot(b, b) - ab;
    if den == 0.0 { 1.0 } else { ab / den }
}
fn gauss_tanimoto(a: &[f64], b: &[f64]) -> f64 {
    (-2.0 * 0.7 * (1.0 - tanimoto(a, b))).exp()
}
fn gauss_out(a: &[f64], b: &[f64]) -> f64 {
    (-0.4 * sq_dist(a, b)).exp()
}
fn gauss_in(a: &[f64], b: &[f64]) -> f64 {
    (-0.9 * sq_dist(a, b)).exp()
}

fn vectors(n: usize, d: usize, seed: u64, levels: u64) -> Vec<Vec<f64>> {
    let mut s = seed.wrapping_mul(0x9E3779B97F4A7C15) | 1;
    (0..n)
        .map(|_| {
            (0..d)
                .map(|_| {
                    s ^= s << 13;
                    s ^= s >> 7;
                    s ^= s << 17;
                    (s % levels) as f64 / (levels - 1).max(1) as f64
                })
                .collect()
        })
        .collect()
}

fn dense(v: &[Vec<f64>]) -> DenseRows {
    DenseRows::from_rows(v).unwrap()
}
fn bits(v: &[Vec<f64>]) -> LabelSets {
    let d = v.first().map_or(0, Vec::len);
    LabelSets::new(d, v.iter().map(|r| (0..d).filter(|&f| r[f] == 1.0).collect()).collect()).unwrap()
}

fn pair_mat(k: Pair, a: &[Vec<f64>], b: &[Vec<f64>]) -> Mat<f64> {
    Mat::from_fn(a.len(), b.len(), |i, j| k(&a[i], &b[j]))
}

/// Scores `k(c, c) - 2 A(x) K_Y(Y, C)` for input weights `A` `(n_test, n)`.
fn scores_from_weights(a: Mat<f64>, ky: Pair, y: &[Vec<f64>], c: &[Vec<f64>]) -> Mat<f64> {
    let g = a * pair_mat(ky, y, c);
    Mat::from_fn(g.nrows(), g.ncols(), |t, j| ky(&c[j], &c[j]) - 2.0 * g[(t, j)])
}

/// IOKR: `A = K(xt, X) (K + n lambda I)^{-1}`.
fn iokr_weights(x: &[Vec<f64>], xt: &[Vec<f64>], lambda: f64) -> Mat<f64> {
    let n = x.len();
    let mut k = pair_mat(gauss_in, x, x);
    for i in 0..n {
        k[(i, i)] += n as f64 * lambda;
    }
    k.partial_piv_lu().solve(pair_mat(gauss_in, x, xt)).transpose().to_owned()
}

/// Nystroem: `A = K(xt, X_m) (K_nm^T K_nm + n lambda K_mm)^{-1} K_nm^T`.
fn nystroem_weights(x: &[Vec<f64>], xt: &[Vec<f64>], anchors: &[usize], lambda: f64) -> Mat<f64> {
    let xm: Vec<Vec<f64>> = anchors.iter().map(|&i| x[i].clone()).collect();
    let knm = pair_mat(gauss_in, x, &xm);
    let kmm = pair_mat(gauss_in, &xm, &xm);
    let sys = knm.transpose() * &knm + kmm * (x.len() as f64 * lambda);
    let w = sys.partial_piv_lu().solve(knm.transpose().to_owned());
    pair_mat(gauss_in, xt, &xm) * w
}

fn model_scores<Y: Rows>(model: &dyn SurrogateModel<DenseRows, Y>, xt: &DenseRows, c: &Y) -> Mat<f64> {
    let coef = model.coefficients(xt).unwrap();
    let mut g = Mat::zeros(model.n_atoms(), c.n_rows());
    model.atom_products_into(c, g.as_mut(), faer::Par::Seq).unwrap();
    let s = coef * g;
    let norms = model.output_sq_norms(c);
    Mat::from_fn(s.nrows(), s.ncols(), |t, j| norms[j] - 2.0 * s[(t, j)])
}

fn rel_err(a: &Mat<f64>, b: &Mat<f64>) -> f64 {
    let mut num = 0.0f64;
    let mut den = 0.0f64;
    for j in 0..a.ncols() {
        for i in 0..a.nrows() {
            num = num.max((a[(i, j)] - b[(i, j)]).abs());
            den = den.max(b[(i, j)].abs());
        }
    }
    num / den.max(1e-300)
}

/// Fits the four models with output kernel `ky` on outputs `y`, checks their
/// scores on `c` against the closed forms, and that both decoders pick the
/// closed-form argmin.
#[allow(clippy::too_many_arguments)]
fn check_kind<Y: Rows + 'static, K: Kernel<Y> + Clone + std::fmt::Debug + 'static>(
    kind: &str,
    ky: K,
    ky_pair: Pair,
    (x, y, xt, c): Data<'_>,
    (yr, cr): (Y, Y),
) where
    Iokr<DenseRows, Y, Gaussian, K>: SurrogateModel<DenseRows, Y>,
    ReducedRankIokr<DenseRows, Y, Gaussian, K>: SurrogateModel<DenseRows, Y>,
    SketchedIokr<DenseRows, Y, Gaussian, K>: SurrogateModel<DenseRows, Y>,
    Nystroem<DenseRows, Y, Gaussian, K>: SurrogateModel<DenseRows, Y>,
{
    let lambda = 1e-2;
    let kx = Gaussian::new(0.9).unwrap();
    let (xr, xtr) = (dense(x), dense(xt));
    let n = x.len();
    let anchors: Vec<usize> = (0..n).step_by(2).collect();
    let iokr_want = scores_from_weights(iokr_weights(x, xt, lambda), ky_pair, y, c);
    let nys_want = scores_from_weights(nystroem_weights(x, xt, &anchors, lambda), ky_pair, y, c);
    let identity = Some(SketchSpec::new(SketchKind::Identity, 0));
    let models: Vec<Case<'_, Y>> = vec![
        (
            "iokr",
            Box::new(Iokr::params(kx.clone(), ky.clone()).lambda(lambda).fit(&xr, &yr).unwrap()),
            &iokr_want,
            1e-10,
        ),
        (
            // Full rank with lambda1 = lambda2 is IOKR.
            "reduced-rank",
            Box::new(
                ReducedRankIokr::params(kx.clone(), ky.clone())
                    .rank(n)
                    .lambda1(lambda)
                    .lambda2(lambda)
                    .rank_tolerance(0.0)
                    .fit(&xr, &yr)
                    .unwrap(),
            ),
            &iokr_want,
            1e-7,
        ),
        (
            // Identity sketches on both sides are IOKR.
            "sisokr",
            Box::new(
                SketchedIokr::params(kx.clone(), ky.clone())
                    .lambda(lambda)
                    .input_sketch(identity)
                    .output_sketch(identity)
                    .fit(&xr, &yr)
                    .unwrap(),
            ),
            &iokr_want,
            1e-7,
        ),
        (
            "nystroem",
            Box::new(
                Nystroem::params(kx.clone(), ky.clone())
                    .lambda(lambda)
                    .anchors(Anchors::Given(anchors.clone()))
                    .fit(&xr, &yr)
                    .unwrap(),
            ),
            &nys_want,
            1e-8,
        ),
    ];
    for (name, model, want, tol) in models {
        let got = model_scores(model.as_ref(), &xtr, &cr);
        let err = rel_err(&got, want);
        assert!(err < tol, "{kind} {name}: {err:e}");
        // Decoders pick the closed-form argmin (checked where it is clear).
        let best = CandidateDecoder::new().memory_budget(256).decode(model.as_ref(), &xtr, &cr).unwrap().best();
        let queries: Vec<Query<Y>> =
            (0..xt.len()).map(|t| Query::inline(format!("q{t}"), t, cr.clone(), None)).collect();
        let ranked = PerQueryDecoder::new().memory_budget(256).rank_all(model.as_ref(), &xtr, None, queries).unwrap();
        for t in 0..xt.len() {
            let mut order: Vec<usize> = (0..c.len()).collect();
            order.sort_by(|&a, &b| want[(t, a)].total_cmp(&want[(t, b)]).then(a.cmp(&b)));
            let gap = want[(t, order[1])] - want[(t, order[0])];
            if gap > 1e-6 * (1.0 + want[(t, order[0])].abs()) {
                assert_eq!(best[t], order[0], "{kind} {name} row {t}");
                assert_eq!(ranked[t].positions[0], order[0], "{kind} {name} row {t}");
            }
        }
    }
}

#[test]
fn fingerprint_outputs_with_tanimoto_kernels() {
    faer::set_global_parallelism(faer::Par::Seq);
    let (x, xt) = (vectors(24, 3, 1, 1000), vectors(6, 3, 2, 1000));
    // 0/1 fingerprints of 16 bits; one all-zero candidate (T(0, 0) = 1).
    let y = vectors(24, 16, 3, 2);
    let mut c = vectors(10, 16, 4, 2);
    c[3] = vec![0.0; 16];
    let data = (&x[..], &y[..], &xt[..], &c[..]);
    check_kind("tanimoto", Tanimoto::new(), tanimoto, data, (bits(&y), bits(&c)));
    check_kind("gaussian-tanimoto", GaussianTanimoto::new(0.7).unwrap(), gauss_tanimoto, data, (bits(&y), bits(&c)));
    // The same fingerprints as dense 0/1 rows give the same scores.
    check_kind("tanimoto-dense", Tanimoto::new(), tanimoto, data, (dense(&y), dense(&c)));
}

#[test]
fn dense_vector_outputs_with_gaussian_and_linear_kernels() {
    faer::set_global_parallelism(faer::Par::Seq);
    let (x, xt) = (vectors(24, 3, 5, 1000), vectors(6, 3, 6, 1000));
    let (y, c) = (vectors(24, 4, 7, 1000), vectors(12, 4, 8, 1000));
    let data = (&x[..], &y[..], &xt[..], &c[..]);
    check_kind("gaussian", Gaussian::new(0.4).unwrap(), gauss_out, data, (dense(&y), dense(&c)));
    check_kind("linear", Linear, dot, data, (dense(&y), dense(&c)));
}

/// Random small labelled graphs (3-6 nodes, labels 0-1).
fn random_graphs(n: usize, seed: u64) -> Vec<Graph> {
    let mut s = seed.wrapping_mul(0x9E3779B97F4A7C15) | 1;
    let mut next = |m: u64| {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s % m
    };
    (0..n)
        .map(|_| {
            let nodes = 3 + next(4) as usize;
            let labels: Vec<u32> = (0..nodes).map(|_| next(2) as u32).collect();
            let edges: Vec<(usize, usize)> =
                (0..nodes).flat_map(|u| (u + 1..nodes).map(move |v| (u, v))).filter(|_| next(2) == 0).collect();
            Graph::new(labels, &edges).unwrap()
        })
        .collect()
}

/// WL subtree features by string relabelling: round-t label =
/// `t:(own label | sorted neighbour labels)`, counted over rounds 0..=h, as
/// vectors over the vocabulary of all the graphs given.
fn wl_histograms(graphs: &[Graph], h: usize) -> Vec<Vec<f64>> {
    use std::collections::BTreeMap;
    let counts: Vec<BTreeMap<String, f64>> = graphs
        .iter()
        .map(|g| {
            let mut labels: Vec<String> = g.node_labels().iter().map(|l| format!("0:{l}")).collect();
            let mut count = BTreeMap::new();
            for round in 0..=h {
                if round > 0 {
                    labels = (0..g.n_nodes())
                        .map(|v| {
                            let mut nb: Vec<&str> =
                                g.neighbors(v).iter().map(|&u| labels[u as usize].as_str()).collect();
                            nb.sort_unstable();
                            format!("{round}:({}|{})", labels[v], nb.join(","))
                        })
                        .collect();
                }
                for l in &labels {
                    *count.entry(l.clone()).or_insert(0.0) += 1.0;
                }
            }
            count
        })
        .collect();
    let vocab: Vec<String> =
        counts.iter().flat_map(|c| c.keys().cloned()).collect::<std::collections::BTreeSet<_>>().into_iter().collect();
    counts.iter().map(|c| vocab.iter().map(|w| c.get(w).copied().unwrap_or(0.0)).collect()).collect()
}

#[test]
fn graph_outputs_with_the_wl_subtree_kernel() {
    faer::set_global_parallelism(faer::Par::Seq);
    let (x, xt) = (vectors(20, 3, 9, 1000), vectors(5, 3, 10, 1000));
    let (y, c) = (random_graphs(20, 11), random_graphs(8, 12));
    let all: Vec<Graph> = y.iter().chain(&c).cloned().collect();
    let hist = wl_histograms(&all, 2);
    let (yh, ch) = hist.split_at(y.len());
    let data = (&x[..], yh, &xt[..], ch);
    check_kind("wl-subtree", WlSubtree::new(2), dot, data, (Graphs::new(y.clone()), Graphs::new(c.clone())));
}

/// Discordant item pairs of two rank vectors.
fn discordant(a: &[f64], b: &[f64]) -> f64 {
    let k = a.len();
    let pairs = (0..k).flat_map(|p| (p + 1..k).map(move |q| (p, q)));
    pairs.filter(|&(p, q)| (a[p] < a[q]) != (b[p] < b[q])).count() as f64
}
fn kendall(a: &[f64], b: &[f64]) -> f64 {
    1.0 - 2.0 * discordant(a, b) / (a.len() * (a.len() - 1) / 2) as f64
}
fn mallows(a: &[f64], b: &[f64]) -> f64 {
    (-0.3 * discordant(a, b)).exp()
}

/// Random rank vectors of 5 items (ranks as numbers, 0 = first), with repeats.
fn random_rankings(n: usize, seed: u64) -> Vec<Vec<f64>> {
    vectors(n, 5, seed, 1000)
        .into_iter()
        .map(|v| {
            let mut order: Vec<usize> = (0..5).collect();
            // Coarse scores so that some rankings repeat (atoms are grouped).
            order.sort_by(|&a, &b| ((v[a] * 3.0) as u32).cmp(&((v[b] * 3.0) as u32)).then(a.cmp(&b)));
            let mut r = vec![0.0; 5];
            for (pos, &item) in order.iter().enumerate() {
                r[item] = pos as f64;
            }
            r
        })
        .collect()
}

fn rankings(v: &[Vec<f64>]) -> Rankings {
    Rankings::new(5, v.iter().map(|r| r.iter().map(|&x| x as usize).collect()).collect()).unwrap()
}

#[test]
fn ranking_outputs_with_the_kendall_and_mallows_kernels() {
    faer::set_global_parallelism(faer::Par::Seq);
    let (x, xt) = (vectors(22, 3, 13, 1000), vectors(6, 3, 14, 1000));
    let (y, c) = (random_rankings(22, 15), random_rankings(9, 16));
    let data = (&x[..], &y[..], &xt[..], &c[..]);
    check_kind("kendall", RankingKernel::Kendall, kendall, data, (rankings(&y), rankings(&c)));
    let m = RankingKernel::mallows(0.3).unwrap();
    check_kind("mallows", m, mallows, data, (rankings(&y), rankings(&c)));
}
