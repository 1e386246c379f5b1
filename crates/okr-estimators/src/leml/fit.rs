use std::borrow::Cow;
use std::time::Instant;

use faer::{Col, Mat, Par};
use okr_kernels::{CsrRows, Rows};
use okr_linalg::{Cholesky, JitterPolicy};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use super::labels::Targets;
use super::loss::Loss;
use super::objective::{BilinearObjective, FullSquaredObjective, Omega, StepInfo, StepSolver, minimize, slice};
use super::params::LemlValidParams;
use super::sparse::{Csr, FeatureMap, IdentityMap, SparseDesign, dot, gemm, view};
use super::{IterationLog, Leml};
use crate::core::checks;
use crate::{Error, Fit, FitFrom, Result};
use okr_surrogate::progress;

/// Training labels in both orientations: samples x labels for the W-step,
/// labels x samples for the H-step.
pub(crate) enum LabelData {
    /// Positives (value 1) of fully observed labels.
    Full { y: Csr, yt: Csr },
    /// Observed entries with values.
    Partial { obs: Csr, obs_t: Csr },
}

impl LabelData {
    pub fn new(targets: Targets<'_>) -> Self {
        match targets {
            Targets::Full(y) => {
                let y = Csr::from_label_sets(y, 1.0);
                let yt = y.transpose();
                LabelData::Full { y, yt }
            }
            Targets::Partial(p) => LabelData::Partial { obs: p.obs.clone(), obs_t: p.obs.transpose() },
        }
    }

    pub fn n_labels(&self) -> usize {
        match self {
            LabelData::Full { y, .. } => y.ncols,
            LabelData::Partial { obs, .. } => obs.ncols,
        }
    }

    /// Ω of the W-step (samples x labels).
    fn omega(&self, loss: Loss) -> Omega<'_> {
        match self {
            LabelData::Full { y, .. } => dense(y, loss),
            LabelData::Partial { obs, .. } => Omega::sparse(Cow::Borrowed(obs)),
        }
    }

    /// Ω of the H-step (labels x samples).
    fn omega_t(&self, loss: Loss) -> Omega<'_> {
        match self {
            LabelData::Full { yt, .. } => dense(yt, loss),
            LabelData::Partial { obs_t, .. } => Omega::sparse(Cow::Borrowed(obs_t)),
        }
    }

    /// Score above which a label is on: the midpoint of the encoding.
    pub fn threshold(&self, loss: Loss) -> f64 {
        match self {
            LabelData::Full { .. } => {
                if loss == Loss::Squared {
                    0.5
                } else {
                    0.0
                }
            }
            LabelData::Partial { obs, .. } => {
                let lo = obs.values.iter().copied().fold(f64::INFINITY, f64::min);
                let hi = obs.values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                if lo.is_finite() { 0.5 * (lo + hi) } else { 0.0 }
            }
        }
    }

    /// Logistic and squared hinge need ±1 values.
    pub fn check(&self, loss: Loss) -> Result<()> {
        if let LabelData::Partial { obs, .. } = self
            && loss != Loss::Squared
            && let Some(v) = obs.values.iter().find(|v| v.abs() != 1.0)
        {
            return Err(Error::InvalidParameter {
                name: "observed label value",
                value: v.to_string(),
                expected: "+1 or -1 for the logistic and squared hinge losses",
            });
        }
        Ok(())
    }
}

fn dense(pos: &Csr, loss: Loss) -> Omega<'_> {
    let (pos_val, neg_val) = if loss == Loss::Squared { (1.0, 0.0) } else { (1.0, -1.0) };
    Omega::Dense { pos: Cow::Borrowed(pos), pos_val, neg_val }
}

/// Whether the W-step of the full-label squared loss is cheaper through
/// $G = X^\top X$: per Hessian product $2 d^2 k + 2 d k^2$ flops against
/// $4\,\mathrm{nnz}(X) k + 2 n k^2$ (and $G$ costs $O(d^2)$ memory).
pub(crate) fn gram_is_cheaper(design: &SparseDesign, k: usize) -> bool {
    let (n, d) = (design.n_samples() as f64, design.n_features() as f64);
    let k = k as f64;
    design.n_features() <= 8192 && 2.0 * d * d * k + 2.0 * d * k * k < 4.0 * design.nnz() as f64 * k + 2.0 * n * k * k
}

/// The fixed parts of one alternating minimisation: data, loss, penalty,
/// rank and inner solvers.
pub(crate) struct Problem<'a> {
    pub design: &'a SparseDesign,
    pub labels: &'a LabelData,
    pub loss: Loss,
    pub lambda: f64,
    pub k: usize,
    pub solver: StepSolver,
    /// $X^\top X$ for the full-label squared-loss W-step, when cheaper.
    pub gram: Option<&'a Mat<f64>>,
}

impl Problem<'_> {
    /// One W-step from `w` (row-major `(d, k)`), `h` fixed.
    pub fn w_step(&self, h: &[f64], w: &mut Col<f64>) -> Result<StepInfo> {
        let (design, k, lambda, loss) = (self.design, self.k, self.lambda, self.loss);
        match (self.labels, loss) {
            (LabelData::Full { y, .. }, Loss::Squared) => {
                let mut obj = FullSquaredObjective::from_csr(design, y, h, k, lambda, self.gram);
                minimize(&mut obj, w, loss, self.solver)
            }
            _ => {
                let mut obj = BilinearObjective::new(design, h, k, self.labels.omega(loss), loss, lambda);
                minimize(&mut obj, w, loss, self.solver)
            }
        }
    }

    /// One H-step: `A = XW`, then the closed form (squared loss, full labels),
    /// one Cholesky per label (squared loss, missing labels), or TRON on the
    /// joint problem over all labels (logistic, squared hinge). The joint problem
    /// decouples by label, so it has the per-label minimisers of the paper.
    pub fn h_step(&self, w: &[f64], h: &mut Col<f64>) -> Result<StepInfo> {
        let (design, labels, loss, lambda, k, solver) =
            (self.design, self.labels, self.loss, self.lambda, self.k, self.solver);
        let n = design.n_samples();
        let l = labels.n_labels();
        let mut a = vec![0.0; n * k];
        design.mul(w, k, &mut a);
        match (labels, loss) {
            (LabelData::Full { yt, .. }, Loss::Squared) => {
                // H = Y^T A (A^T A + lambda I)^{-1}
                let mut g = Mat::<f64>::zeros(k, k);
                gemm(g.as_mut(), view(&a, n, k).transpose(), view(&a, n, k));
                for t in 0..k {
                    g[(t, t)] += lambda;
                }
                let (chol, _) = Cholesky::factor(g.as_ref(), JitterPolicy::with_lambda(lambda))?;
                let mut r = vec![0.0; l * k];
                yt.mul_dense(&a, k, &mut r);
                let sol = chol.solve(view(&r, l, k).transpose(), faer::get_global_parallelism()); // (k, L)
                let hs = super::objective::slice_mut(h.as_mut());
                for j in 0..l {
                    for t in 0..k {
                        hs[j * k + t] = sol[(t, j)];
                    }
                }
                Ok(StepInfo::default())
            }
            (LabelData::Partial { obs_t, .. }, Loss::Squared) => {
                let hs = super::objective::slice_mut(h.as_mut());
                hs.par_chunks_mut(k).enumerate().try_for_each(|(j, hj)| -> Result<()> {
                    let range = obs_t.indptr[j]..obs_t.indptr[j + 1];
                    let m = range.len();
                    let aj = Mat::from_fn(m, k, |r, t| a[obs_t.indices[range.start + r] * k + t]);
                    let yj = Mat::from_fn(m, 1, |r, _| obs_t.values[range.start + r]);
                    let mut g = Mat::<f64>::zeros(k, k);
                    faer::linalg::matmul::matmul(
                        g.as_mut(),
                        faer::Accum::Replace,
                        aj.transpose(),
                        aj.as_ref(),
                        1.0,
                        Par::Seq,
                    );
                    for t in 0..k {
                        g[(t, t)] += lambda;
                    }
                    let rhs = aj.transpose() * &yj;
                    let (chol, _) = Cholesky::factor_in_place(g, JitterPolicy::with_lambda(lambda), Par::Seq)?;
                    let sol = chol.solve(rhs.as_ref(), Par::Seq);
                    for t in 0..k {
                        hj[t] = sol[(t, 0)];
                    }
                    Ok(())
                })?;
                Ok(StepInfo::default())
            }
            _ => {
                let ident = IdentityMap(l);
                let mut obj = BilinearObjective::new(&ident, &a, k, labels.omega_t(loss), loss, lambda);
                minimize(&mut obj, h, loss, solver)
            }
        }
    }

    /// $J_\Omega(W, H) = \sum_\Omega \ell(Y_{ij}, x_i^\top W h_j) + \tfrac\lambda2 (\lVert W\rVert_F^2 + \lVert H\rVert_F^2)$.
    pub fn objective(&self, w: &Col<f64>, h: &Col<f64>) -> f64 {
        use okr_linalg::TronObjective;
        let (design, labels, loss, lambda, k) = (self.design, self.labels, self.loss, self.lambda, self.k);
        let hs = slice(h.as_ref());
        let data_and_w = match (labels, loss) {
            (LabelData::Full { y, .. }, Loss::Squared) => {
                FullSquaredObjective::from_csr(design, y, hs, k, lambda, None).fun(w.as_ref())
            }
            _ => BilinearObjective::new(design, hs, k, labels.omega(loss), loss, lambda).fun(w.as_ref()),
        };
        data_and_w + 0.5 * lambda * dot(hs, hs)
    }
}

impl<'a> Fit<CsrRows, Targets<'a>> for LemlValidParams {
    type Object = Leml;

    /// Fits LEML on sparse features `x` `(n_samples, n_features)` and
    /// `targets` (full or partial labels). See [`LemlValidParams::fit_with_callback`].
    ///
    /// # Errors
    /// As [`LemlValidParams::fit_with_callback`].
    fn fit(&self, x: &CsrRows, targets: Targets<'a>) -> Result<Leml> {
        self.fit_with_callback(x, targets, |_, _| {})
    }
}

impl<'a> FitFrom<CsrRows, Targets<'a>> for LemlValidParams {
    /// Continues `previous` for `max_iter` more alternating iterations from
    /// its $W$ and $H$ (the W-step is warm-started from $W$, the H-step
    /// depends on $W$ alone), so that $k$ iterations then $k$ more equal
    /// $2k$ iterations exactly. The history continues `previous`'s (the
    /// stopping rule `tol` compares with its last objective).
    ///
    /// # Errors
    /// As [`LemlValidParams::fit_with_callback`]; [`Error::ShapeMismatch`]
    /// when `x` has another number of features, the targets another number
    /// of labels, or `previous` another rank.
    fn fit_from(&self, previous: &Leml, x: &CsrRows, targets: Targets<'a>) -> Result<Leml> {
        self.fit_impl(x, targets, Some(previous), &mut |_, _| {})
    }
}

impl LemlValidParams {
    /// Fits LEML by alternating minimisation, calling `callback` after every
    /// alternating iteration with its log and the current model (for example
    /// to record test metrics per iteration).
    ///
    /// Starts from $W = 0$ and $H \sim U[0, 1)$ (seeded), then repeats a
    /// W-step (CG for the squared loss, TRON otherwise, warm-started) and an
    /// H-step. Each step lowers $J_\Omega$ when solved to its tolerance.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] if `x` and `targets` differ in samples,
    /// [`Error::Empty`] for no samples, features or labels,
    /// [`Error::InvalidParameter`] for a rank above the number of labels,
    /// [`Error::InvalidParameter`] for non-±1 observed values with the
    /// logistic or squared hinge loss, and linear algebra failures.
    pub fn fit_with_callback(
        &self,
        x: &CsrRows,
        targets: Targets<'_>,
        mut callback: impl FnMut(&IterationLog, &Leml),
    ) -> Result<Leml> {
        self.fit_impl(x, targets, None, &mut callback)
    }

    /// As [`fit_with_callback`](Self::fit_with_callback), continuing
    /// `previous` when given (see [`FitFrom`]).
    ///
    /// # Errors
    /// As [`fit_with_callback`](Self::fit_with_callback) and [`FitFrom::fit_from`].
    pub fn fit_from_with_callback(
        &self,
        previous: Option<&Leml>,
        x: &CsrRows,
        targets: Targets<'_>,
        mut callback: impl FnMut(&IterationLog, &Leml),
    ) -> Result<Leml> {
        self.fit_impl(x, targets, previous, &mut callback)
    }

    fn fit_impl(
        &self,
        x: &CsrRows,
        targets: Targets<'_>,
        previous: Option<&Leml>,
        callback: &mut dyn FnMut(&IterationLog, &Leml),
    ) -> Result<Leml> {
        let (n, d, l, k) = (x.n_rows(), x.n_features(), targets.n_labels(), self.rank);
        if targets.n_samples() != n {
            return Err(Error::ShapeMismatch {
                what: "label rows (one per sample)",
                expected: n,
                got: targets.n_samples(),
            });
        }
        if n == 0 {
            return Err(Error::Empty { what: "training set" });
        }
        if d == 0 || l == 0 {
            return Err(Error::Empty { what: if d == 0 { "feature set" } else { "label set" } });
        }
        checks::at_most("rank", k, l, "at most the number of labels (H is labels x rank)")?;
        let labels = LabelData::new(targets);
        labels.check(self.loss)?;
        let design = SparseDesign::new(x);
        let gram = (self.gram
            && self.loss == Loss::Squared
            && matches!(labels, LabelData::Full { .. })
            && gram_is_cheaper(&design, k))
        .then(|| design.gram());
        let (mut w, mut h, mut history) = match previous {
            Some(prev) => {
                for (what, expected, got) in [
                    ("input features of a continued fit", prev.n_features, d),
                    ("labels of a continued fit", prev.n_labels, l),
                    ("rank of a continued fit", prev.params.rank, k),
                ] {
                    if expected != got {
                        return Err(Error::ShapeMismatch { what, expected, got });
                    }
                }
                let w = Col::from_fn(d * k, |i| prev.w[i]);
                let h = Col::from_fn(l * k, |i| prev.h[i]);
                (w, h, prev.history.clone())
            }
            None => {
                let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
                let w = Col::<f64>::zeros(d * k);
                let h = Col::from_fn(l * k, |_| rng.random::<f64>());
                (w, h, Vec::new())
            }
        };
        let first = history.last().map_or(0, |p| p.iteration);
        let elapsed = history.last().map_or(0.0, |p| p.seconds);
        let problem = Problem {
            design: &design,
            labels: &labels,
            loss: self.loss,
            lambda: self.lambda,
            k,
            solver: self.solver(),
            gram: gram.as_ref(),
        };
        let threshold = labels.threshold(self.loss);
        let start = Instant::now();
        let mut model = Leml {
            params: *self,
            n_features: d,
            n_labels: l,
            w: Vec::new(),
            h: Vec::new(),
            threshold,
            history: Vec::new(),
        };
        for iteration in first + 1..=first + self.max_iter {
            let ws = problem.w_step(slice(h.as_ref()), &mut w)?;
            let hs = problem.h_step(slice(w.as_ref()), &mut h)?;
            let log = IterationLog {
                iteration,
                objective: problem.objective(&w, &h),
                seconds: elapsed + start.elapsed().as_secs_f64(),
                w_hessian_products: ws.hessian_products,
                h_hessian_products: hs.hessian_products,
                w_hv_seconds: ws.hv_seconds,
                h_hv_seconds: hs.hv_seconds,
            };
            let previous = history.last().map(|p| p.objective);
            if progress::observed() {
                let message = format!("leml, objective {:.6e}", log.objective);
                progress::report(iteration, first + self.max_iter, &message);
            }
            history.push(log);
            model.w = slice(w.as_ref()).to_vec();
            model.h = slice(h.as_ref()).to_vec();
            callback(&log, &model);
            if let (Some(tol), Some(prev)) = (self.tol, previous)
                && prev - log.objective <= tol * prev.abs()
            {
                break;
            }
        }
        model.history = history;
        Ok(model)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::leml::PartialLabels;
    use okr_kernels::LabelSets;

    fn lcg(seed: u64) -> impl FnMut() -> f64 {
        let mut s = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        move || {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((s >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
        }
    }

    fn random_problem(n: usize, d: usize, l: usize, seed: u64) -> (CsrRows, LabelSets) {
        let mut r = lcg(seed);
        let rows = (0..n).map(|_| (0..d).filter(|_| r() > 0.2).map(|j| (j, 0.5 + 0.1 * j as f64)).collect()).collect();
        let x = CsrRows::from_rows(d, rows).unwrap();
        let sets = (0..n).map(|_| (0..l).filter(|_| r() > 0.4).collect()).collect();
        (x, LabelSets::new(l, sets).unwrap())
    }

    fn tight() -> StepSolver {
        StepSolver {
            cg: okr_linalg::CgParams::default().tol(1e-12).max_iter(10_000),
            tron: okr_linalg::TronParams::default().eps(1e-10).max_iter(200).max_cg_iter(500),
        }
    }

    /// The W-step of the squared loss with full labels solves the Sylvester
    /// equation $X^\top X W H^\top H + \lambda W = X^\top Y H$ (spec 2.5).
    #[test]
    fn w_step_matches_the_sylvester_closed_form() {
        for (n, d, l, k, seed) in [(12, 5, 4, 2, 1), (30, 8, 6, 3, 2), (9, 12, 5, 4, 3)] {
            let (x, y) = random_problem(n, d, l, seed);
            let design = SparseDesign::new(&x);
            let labels = LabelData::new(Targets::Full(&y));
            let mut r = lcg(seed + 10);
            let h: Vec<f64> = (0..l * k).map(|_| r()).collect();
            let lambda = 0.3;
            let xd = x.to_dense();
            let yd = y.to_indicator();
            let hm = view(&h, l, k).to_owned();
            let xtx = xd.transpose() * &xd;
            let hth = hm.transpose() * &hm;
            let (sig, p) = okr_linalg::eigh(xtx.as_ref()).unwrap().into_parts();
            let (mu, q) = okr_linalg::eigh(hth.as_ref()).unwrap().into_parts();
            let c = p.transpose() * (xd.transpose() * &yd * &hm) * &q;
            let scaled = Mat::from_fn(d, k, |a, b| c[(a, b)] / (sig[a] * mu[b] + lambda));
            let w_star = &p * scaled * q.transpose();
            for gram in [false, true] {
                let g = gram.then(|| design.gram());
                let mut w = Col::zeros(d * k);
                let problem = Problem {
                    design: &design,
                    labels: &labels,
                    loss: Loss::Squared,
                    lambda,
                    k,
                    solver: tight(),
                    gram: g.as_ref(),
                };
                problem.w_step(&h, &mut w).unwrap();
                let got = view(slice(w.as_ref()), d, k).to_owned();
                let err = (&got - &w_star).norm_max() / w_star.norm_max();
                assert!(err < 1e-8, "n={n} d={d} gram={gram}: {err}");
            }
        }
    }

    /// H-steps: the closed form (full) and per-label Cholesky (partial)
    /// against naive normal equations, and full vs partial on a full Ω.
    #[test]
    fn h_step_closed_forms_match_normal_equations() {
        let (n, d, l, k) = (15, 6, 5, 3);
        let (x, y) = random_problem(n, d, l, 4);
        let design = SparseDesign::new(&x);
        let mut r = lcg(5);
        let w: Vec<f64> = (0..d * k).map(|_| r()).collect();
        let lambda = 0.7;
        let a = x.to_dense() * view(&w, d, k);
        let yd = y.to_indicator();
        let naive = {
            let g = a.transpose() * &a + Mat::<f64>::identity(k, k) * lambda;
            let ginv = faer::linalg::solvers::DenseSolveCore::inverse(&g.llt(faer::Side::Lower).unwrap());
            yd.transpose() * &a * ginv
        };
        let full = LabelData::new(Targets::Full(&y));
        let mut h = Col::zeros(l * k);
        Problem { design: &design, labels: &full, loss: Loss::Squared, lambda, k, solver: tight(), gram: None }
            .h_step(&w, &mut h)
            .unwrap();
        let got = view(slice(h.as_ref()), l, k).to_owned();
        assert!((&got - &naive).norm_max() < 1e-10);
        // Partial with every entry observed ({0, 1} values) gives the same H.
        let all = PartialLabels::new(l, (0..n).map(|i| (0..l).map(|j| (j, yd[(i, j)])).collect()).collect()).unwrap();
        let part = LabelData::new(Targets::Partial(&all));
        let mut h2 = Col::zeros(l * k);
        Problem { design: &design, labels: &part, loss: Loss::Squared, lambda, k, solver: tight(), gram: None }
            .h_step(&w, &mut h2)
            .unwrap();
        assert!((&h2 - &h).norm_max() < 1e-10);
        // Partial with a random Ω: per-label normal equations on Ω_j.
        let some = PartialLabels::sample(&y, 0.5, -1.0, 9).unwrap();
        let part = LabelData::new(Targets::Partial(&some));
        let mut h3 = Col::zeros(l * k);
        Problem { design: &design, labels: &part, loss: Loss::Squared, lambda, k, solver: tight(), gram: None }
            .h_step(&w, &mut h3)
            .unwrap();
        for j in 0..l {
            let mut g = Mat::<f64>::identity(k, k) * lambda;
            let mut rhs = Mat::<f64>::zeros(k, 1);
            for i in 0..n {
                if let Some((_, v)) = some.row(i).find(|e| e.0 == j) {
                    for s in 0..k {
                        rhs[(s, 0)] += v * a[(i, s)];
                        for t in 0..k {
                            g[(s, t)] += a[(i, s)] * a[(i, t)];
                        }
                    }
                }
            }
            let hj = faer::linalg::solvers::DenseSolveCore::inverse(&g.llt(faer::Side::Lower).unwrap()) * rhs;
            for t in 0..k {
                assert!((h3[j * k + t] - hj[(t, 0)]).abs() < 1e-10);
            }
        }
        // Logistic H-step: the gradient of the H problem vanishes.
        let lr = LabelData::new(Targets::Partial(&some));
        let mut h4 = Col::zeros(l * k);
        Problem { design: &design, labels: &lr, loss: Loss::Logistic, lambda, k, solver: tight(), gram: None }
            .h_step(&w, &mut h4)
            .unwrap();
        for j in 0..l {
            let mut grad = vec![0.0; k];
            for i in 0..n {
                if let Some((_, v)) = some.row(i).find(|e| e.0 == j) {
                    let z: f64 = (0..k).map(|t| a[(i, t)] * h4[j * k + t]).sum();
                    let d1 = Loss::Logistic.derivative(v, z);
                    (0..k).for_each(|t| grad[t] += d1 * a[(i, t)]);
                }
            }
            (0..k).for_each(|t| assert!((grad[t] + lambda * h4[j * k + t]).abs() < 1e-6));
        }
    }
}
