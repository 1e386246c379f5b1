//! The subproblems of LEML's alternating minimisation as matrix-free
//! objectives for okr-linalg's CG and TRON.
//!
//! With one factor fixed, $J_\Omega(W, H)$ is a regularised linear model in
//! the other: the W-step has "instances" $\tilde x_{ij} = h_j \otimes x_i$
//! (eq. 7 of Yu et al. 2014). Its gradient and Hessian-vector product are
//! never formed through $\tilde x_{ij}$:
//!
//! - [`BilinearObjective`] (Algorithm 1, any loss, any Ω):
//!   $\nabla = X^\top D H + \lambda W$, $\nabla^2 S = X^\top U H + \lambda S$ with
//!   $D_{ij} = \ell'(Y_{ij}, a_i^\top h_j)$, $U_{ij} = \ell''_{ij}\, b_i^\top h_j$,
//!   $A = XW$, $B = XS$; cost $O((\mathrm{nnz}(X) + |\Omega| + d) k)$.
//! - [`FullSquaredObjective`] (Algorithm 2, squared loss, full labels):
//!   $\nabla = X^\top (X W H^\top H - Y H) + \lambda W$,
//!   $\nabla^2 S = X^\top X S H^\top H + \lambda S$; cost
//!   $O((\mathrm{nnz}(X) + \mathrm{nnz}(Y)) k + (n + L) k^2)$, independent of $nL$.
//!   When $d \le n$ the product is $X^\top X (S M)$ through the fused
//!   [`SparseDesign::gram_mul`], which never forms the `(n, k)` block $X S$.
//!
//! Variables are the coefficient matrix `(n_features, k)` stored row-major in
//! a column vector of length `n_features * k`.

use std::borrow::Cow;

use faer::{Col, ColMut, ColRef, Mat};
use okr_kernels::LabelSets;
use okr_linalg::{CgParams, LinearOperator, TronObjective, TronParams};
use rayon::prelude::*;

use super::labels::PartialLabels;
use super::loss::Loss;
use super::sparse::{Csr, FeatureMap, SparseDesign, dot, gemm, view, view_mut};
use crate::Result;

pub(crate) fn slice(c: ColRef<'_, f64>) -> &[f64] {
    c.try_as_col_major().expect("okr works on contiguous vectors").as_slice()
}

pub(crate) fn slice_mut(c: ColMut<'_, f64>) -> &mut [f64] {
    c.try_as_col_major_mut().expect("okr works on contiguous vectors").as_slice_mut()
}

/// Entries per partial sum of a loss total.
const SUM_CHUNK: usize = 4096;

/// The sum of per-chunk partial sums in chunk order: the same rounding for
/// any thread count and any run.
fn ordered_sum(parts: Vec<f64>) -> f64 {
    parts.iter().sum()
}

/// The observed entries of a label matrix `(n, L)`.
#[derive(Debug, Clone)]
pub(crate) enum Omega<'a> {
    /// Observed entries with their values; `rows[p]` is the row of entry `p`.
    Sparse { obs: Cow<'a, Csr>, rows: Vec<usize> },
    /// All `n·L` entries: `pos_val` at the stored positives, `neg_val` elsewhere.
    Dense { pos: Cow<'a, Csr>, pos_val: f64, neg_val: f64 },
}

impl<'a> Omega<'a> {
    pub fn sparse(obs: Cow<'a, Csr>) -> Self {
        let rows = obs.row_of_entries();
        Omega::Sparse { obs, rows }
    }
}

/// Algorithm 1 of Yu et al. (2014): the W-step objective
/// $g(W) = \sum_{(i,j) \in \Omega} \ell(Y_{ij}, x_i^\top W h_j) + \tfrac{\lambda}{2} \lVert W \rVert_F^2$
/// for any loss and any observed set Ω, with `H` fixed.
///
/// `fun` caches $A = XW$ and the scores on Ω; `grad` caches the curvature
/// $\ell''_{ij}$ at the accepted iterate (TRON calls `grad` only there), which
/// every `hv` reuses. With the identity as `X` ([`IdentityMap`](super::IdentityMap))
/// and the roles of samples and labels swapped, this is also the H-step.
///
/// # Example
/// ```
/// use faer::Col;
/// use okr_estimators::leml::{BilinearObjective, Loss, PartialLabels, SparseDesign};
/// use okr_kernels::CsrRows;
/// use okr_linalg::TronObjective;
/// let x = SparseDesign::new(&CsrRows::from_rows(2, vec![vec![(0, 1.0)], vec![(1, 2.0)]])?);
/// let y = PartialLabels::new(2, vec![vec![(0, 1.0)], vec![(1, -1.0)]])?;
/// let h = [1.0, 0.0, 0.0, 1.0]; // H = I (L = k = 2)
/// let mut obj = BilinearObjective::partial(&x, &h, 2, &y, Loss::Squared, 1.0);
/// let w = Col::zeros(4);
/// assert_eq!(obj.fun(w.as_ref()), 1.0); // two residuals of size 1, halved
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct BilinearObjective<'a, F: FeatureMap> {
    x: &'a F,
    h: &'a [f64],
    k: usize,
    n_labels: usize,
    omega: Omega<'a>,
    loss: Loss,
    lambda: f64,
    a: Vec<f64>,
    z: Vec<f64>,
    curv: Vec<f64>,
}

impl<'a, F: FeatureMap> BilinearObjective<'a, F> {
    pub(crate) fn new(x: &'a F, h: &'a [f64], k: usize, omega: Omega<'a>, loss: Loss, lambda: f64) -> Self {
        let n = x.n_samples();
        let (n_labels, nz) = match &omega {
            Omega::Sparse { obs, .. } => (obs.ncols, obs.nnz()),
            Omega::Dense { pos, .. } => (pos.ncols, n * pos.ncols),
        };
        assert_eq!(h.len(), n_labels * k, "H must be (n_labels, k)");
        Self { x, h, k, n_labels, omega, loss, lambda, a: vec![0.0; n * k], z: vec![0.0; nz], curv: vec![0.0; nz] }
    }

    /// The objective on the observed entries of `y` (Ω = its pattern), with
    /// `h` `(n_labels, k)` row-major.
    ///
    /// # Panics
    /// If `h.len() != y.n_labels() * k` or the sample counts differ.
    #[track_caller]
    pub fn partial(x: &'a F, h: &'a [f64], k: usize, y: &'a PartialLabels, loss: Loss, lambda: f64) -> Self {
        assert_eq!(x.n_samples(), y.n_samples(), "X and Y must have the same samples");
        Self::new(x, h, k, Omega::sparse(Cow::Borrowed(&y.obs)), loss, lambda)
    }

    /// The objective on all `n·L` entries of `y`: value `pos_val` for the
    /// positives and `neg_val` elsewhere (`1`/`0` for the squared loss, `±1`
    /// for logistic and squared hinge).
    ///
    /// # Panics
    /// If `h.len() != y.n_labels() * k` or the sample counts differ.
    #[track_caller]
    pub fn full(x: &'a F, h: &'a [f64], k: usize, y: &LabelSets, loss: Loss, lambda: f64) -> Self {
        let pos = Csr::from_label_sets(y, 1.0);
        assert_eq!(x.n_samples(), pos.nrows, "X and Y must have the same samples");
        let (pos_val, neg_val) = if loss == Loss::Squared { (1.0, 0.0) } else { (1.0, -1.0) };
        Self::new(x, h, k, Omega::Dense { pos: Cow::Owned(pos), pos_val, neg_val }, loss, lambda)
    }

    /// `out (n, k) -> values on Ω`: the sampled products $c_i^\top h_j$.
    fn sampled_scores(&self, c: &[f64], out: &mut [f64]) {
        let (k, h) = (self.k, self.h);
        match &self.omega {
            Omega::Sparse { obs, rows } => {
                out.par_iter_mut().with_min_len(1024).enumerate().for_each(|(p, o)| {
                    let (i, j) = (rows[p], obs.indices[p]);
                    *o = dot(&c[i * k..(i + 1) * k], &h[j * k..(j + 1) * k]);
                });
            }
            Omega::Dense { .. } => {
                let n = self.x.n_samples();
                gemm(view_mut(out, n, self.n_labels), view(c, n, k), view(h, self.n_labels, k).transpose());
            }
        }
    }

    /// `vals on Ω -> (n, k)`: $V H$ for the sparse (or dense) matrix `V` on Ω.
    fn omega_times_h(&self, vals: &[f64], out: &mut [f64]) {
        match &self.omega {
            Omega::Sparse { obs, .. } => obs.mul_dense_with_values(vals, self.h, self.k, out),
            Omega::Dense { .. } => {
                let n = self.x.n_samples();
                gemm(view_mut(out, n, self.k), view(vals, n, self.n_labels), view(self.h, self.n_labels, self.k));
            }
        }
    }

    /// Applies `f(y, z)` to every entry of Ω, writing into `out`.
    fn map_omega(&self, z: &[f64], out: &mut [f64], f: impl Fn(f64, f64) -> f64 + Sync) {
        match &self.omega {
            Omega::Sparse { obs, .. } => {
                out.par_iter_mut().with_min_len(1024).zip(z).zip(&obs.values).for_each(|((o, &z), &y)| *o = f(y, z));
            }
            Omega::Dense { pos, pos_val, neg_val } => {
                let l = self.n_labels;
                out.par_chunks_mut(l).with_min_len(16).zip(z.par_chunks(l)).enumerate().for_each(|(i, (o, zr))| {
                    for (o, &z) in o.iter_mut().zip(zr) {
                        *o = f(*neg_val, z);
                    }
                    for &j in &pos.indices[pos.indptr[i]..pos.indptr[i + 1]] {
                        o[j] = f(*pos_val, zr[j]);
                    }
                });
            }
        }
    }
}

impl<F: FeatureMap> TronObjective for BilinearObjective<'_, F> {
    fn dim(&self) -> usize {
        self.x.n_features() * self.k
    }

    fn fun(&mut self, w: ColRef<'_, f64>) -> f64 {
        let w = slice(w);
        let mut a = std::mem::take(&mut self.a);
        let mut z = std::mem::take(&mut self.z);
        self.x.mul(w, self.k, &mut a);
        self.sampled_scores(&a, &mut z);
        let loss = self.loss;
        // Partial sums over fixed index ranges, added in index order: rayon's
        // `sum` splits adaptively, so its rounding (and TRON's path) changed
        // from run to run and with the thread count.
        let total: f64 = match &self.omega {
            Omega::Sparse { obs, .. } => ordered_sum(
                z.par_chunks(SUM_CHUNK)
                    .zip(obs.values.par_chunks(SUM_CHUNK))
                    .map(|(zc, yc)| zc.iter().zip(yc).map(|(&z, &y)| loss.value(y, z)).sum())
                    .collect(),
            ),
            Omega::Dense { pos, pos_val, neg_val } => {
                let l = self.n_labels.max(1);
                let rows_per_chunk = SUM_CHUNK.div_ceil(l);
                ordered_sum(
                    z.par_chunks(rows_per_chunk * l)
                        .enumerate()
                        .map(|(c, zc)| {
                            let mut s = 0.0;
                            for (r, zr) in zc.chunks(l).enumerate() {
                                let i = c * rows_per_chunk + r;
                                s += zr.iter().map(|&z| loss.value(*neg_val, z)).sum::<f64>();
                                for &j in &pos.indices[pos.indptr[i]..pos.indptr[i + 1]] {
                                    s += loss.value(*pos_val, zr[j]) - loss.value(*neg_val, zr[j]);
                                }
                            }
                            s
                        })
                        .collect(),
                )
            }
        };
        self.a = a;
        self.z = z;
        total + 0.5 * self.lambda * dot(w, w)
    }

    fn grad(&mut self, w: ColRef<'_, f64>, g: ColMut<'_, f64>) {
        let (w, g) = (slice(w), slice_mut(g));
        let loss = self.loss;
        let mut d = vec![0.0; self.z.len()];
        self.map_omega(&self.z, &mut d, |y, z| loss.derivative(y, z));
        let mut curv = std::mem::take(&mut self.curv);
        self.map_omega(&self.z, &mut curv, |y, z| loss.second_derivative(y, z));
        self.curv = curv;
        let mut dh = vec![0.0; self.x.n_samples() * self.k];
        self.omega_times_h(&d, &mut dh);
        self.x.tmul(&dh, self.k, g);
        for (g, w) in g.iter_mut().zip(w) {
            *g += self.lambda * w;
        }
    }

    fn hv(&self, s: ColRef<'_, f64>, out: ColMut<'_, f64>) {
        let (s, out) = (slice(s), slice_mut(out));
        let mut b = vec![0.0; self.x.n_samples() * self.k];
        self.x.mul(s, self.k, &mut b);
        let mut u = vec![0.0; self.z.len()];
        self.sampled_scores(&b, &mut u);
        u.par_iter_mut().with_min_len(1024).zip(&self.curv).for_each(|(u, c)| *u *= c);
        self.omega_times_h(&u, &mut b);
        self.x.tmul(&b, self.k, out);
        for (o, s) in out.iter_mut().zip(s) {
            *o += self.lambda * s;
        }
    }
}

/// Algorithm 2 of Yu et al. (2014): the W-step objective for the squared loss
/// with all labels observed ({0, 1} targets),
/// $g(W) = \tfrac12 \lVert Y - X W H^\top \rVert_F^2 + \tfrac{\lambda}{2} \lVert W \rVert_F^2$,
/// evaluated as $\tfrac12 \lVert Y\rVert_F^2 - \langle A, YH\rangle + \tfrac12 \langle A M, A\rangle + \tfrac\lambda2 \lVert W\rVert^2$
/// with $A = XW$, $M = H^\top H$ (both `YH` and `M` computed once).
///
/// With a precomputed Gram matrix $G = X^\top X$ (worth it when `d` is small,
/// e.g. Delicious with `d = 500`), products are taken in feature space:
/// $\nabla^2 S = G S M + \lambda S$, cost $O(d^2 k + d k^2)$ per call.
///
/// # Example
/// ```
/// use faer::Col;
/// use okr_estimators::leml::{FullSquaredObjective, SparseDesign};
/// use okr_kernels::{CsrRows, LabelSets};
/// use okr_linalg::TronObjective;
/// let x = SparseDesign::new(&CsrRows::from_rows(2, vec![vec![(0, 1.0)], vec![(1, 2.0)]])?);
/// let y = LabelSets::new(2, vec![vec![0], vec![0, 1]])?;
/// let mut obj = FullSquaredObjective::new(&x, &y, &[1.0, 0.0, 0.0, 1.0], 2, 0.5, None);
/// assert_eq!(obj.fun(Col::zeros(4).as_ref()), 1.5); // half the three positives
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct FullSquaredObjective<'a> {
    x: &'a SparseDesign,
    k: usize,
    lambda: f64,
    m: Vec<f64>,
    yh: Vec<f64>,
    yy: f64,
    gram: Option<(&'a Mat<f64>, Vec<f64>)>,
    resid: Vec<f64>,
}

impl<'a> FullSquaredObjective<'a> {
    /// Sets up the W-step for fixed `h` `(n_labels, k)` row-major; `gram`
    /// is $X^\top X$ when the feature-space products should be used.
    ///
    /// # Panics
    /// If the shapes of `x`, `y`, `h` and `gram` disagree.
    #[track_caller]
    pub fn new(
        x: &'a SparseDesign,
        y: &LabelSets,
        h: &[f64],
        k: usize,
        lambda: f64,
        gram: Option<&'a Mat<f64>>,
    ) -> Self {
        Self::from_csr(x, &Csr::from_label_sets(y, 1.0), h, k, lambda, gram)
    }

    #[track_caller]
    pub(crate) fn from_csr(
        x: &'a SparseDesign,
        y: &Csr,
        h: &[f64],
        k: usize,
        lambda: f64,
        gram: Option<&'a Mat<f64>>,
    ) -> Self {
        let (n, d, l) = (x.n_samples(), x.n_features(), y.ncols);
        assert_eq!(y.nrows, n, "X and Y must have the same samples");
        assert_eq!(h.len(), l * k, "H must be (n_labels, k)");
        let mut m = vec![0.0; k * k];
        gemm(view_mut(&mut m, k, k), view(h, l, k).transpose(), view(h, l, k));
        let mut yh = vec![0.0; n * k];
        y.mul_dense(h, k, &mut yh);
        let yy = y.values.iter().map(|v| v * v).sum();
        let gram = gram.map(|g| {
            assert_eq!((g.nrows(), g.ncols()), (d, d), "the Gram matrix must be (d, d)");
            let mut xtyh = vec![0.0; d * k];
            x.tmul(&yh, k, &mut xtyh);
            (g, xtyh)
        });
        let resid = vec![0.0; if gram.is_some() { d * k } else { n * k }];
        Self { x, k, lambda, m, yh, yy, gram, resid }
    }

    fn times_m(&self, a: &[f64], rows: usize, out: &mut [f64]) {
        gemm(view_mut(out, rows, self.k), view(a, rows, self.k), view(&self.m, self.k, self.k));
    }
}

impl TronObjective for FullSquaredObjective<'_> {
    fn dim(&self) -> usize {
        self.x.n_features() * self.k
    }

    fn fun(&mut self, w: ColRef<'_, f64>) -> f64 {
        let w = slice(w);
        let (n, d, k) = (self.x.n_samples(), self.x.n_features(), self.k);
        let reg = 0.5 * self.lambda * dot(w, w);
        match &self.gram {
            None => {
                let mut a = vec![0.0; n * k];
                self.x.mul(w, k, &mut a);
                let mut am = vec![0.0; n * k];
                self.times_m(&a, n, &mut am);
                let val = 0.5 * self.yy - dot(&a, &self.yh) + 0.5 * dot(&am, &a);
                for (r, (am, yh)) in self.resid.iter_mut().zip(am.iter().zip(&self.yh)) {
                    *r = am - yh;
                }
                val + reg
            }
            Some((g, xtyh)) => {
                let mut gw = vec![0.0; d * k];
                gemm(view_mut(&mut gw, d, k), g.as_ref(), view(w, d, k));
                let mut gwm = vec![0.0; d * k];
                self.times_m(&gw, d, &mut gwm);
                let val = 0.5 * self.yy - dot(w, xtyh) + 0.5 * dot(&gwm, w);
                let mut resid = std::mem::take(&mut self.resid);
                for (r, (a, b)) in resid.iter_mut().zip(gwm.iter().zip(xtyh)) {
                    *r = a - b;
                }
                self.resid = resid;
                val + reg
            }
        }
    }

    fn grad(&mut self, w: ColRef<'_, f64>, g: ColMut<'_, f64>) {
        let (w, g) = (slice(w), slice_mut(g));
        match &self.gram {
            None => self.x.tmul(&self.resid, self.k, g),
            Some(_) => g.copy_from_slice(&self.resid),
        }
        for (g, w) in g.iter_mut().zip(w) {
            *g += self.lambda * w;
        }
    }

    fn hv(&self, s: ColRef<'_, f64>, out: ColMut<'_, f64>) {
        let (s, out) = (slice(s), slice_mut(out));
        let (n, d, k) = (self.x.n_samples(), self.x.n_features(), self.k);
        match &self.gram {
            // Xᵀ X (S M) fused, or Xᵀ ((X S) M): M on the smaller side.
            None if d <= n => {
                let mut sm = vec![0.0; d * k];
                self.times_m(s, d, &mut sm);
                self.x.gram_mul(&sm, k, out);
            }
            None => {
                let mut xs = vec![0.0; n * k];
                self.x.mul(s, k, &mut xs);
                let mut b = vec![0.0; n * k];
                self.times_m(&xs, n, &mut b);
                self.x.tmul(&b, k, out);
            }
            Some((g, _)) => {
                let mut gs = vec![0.0; d * k];
                gemm(view_mut(&mut gs, d, k), g.as_ref(), view(s, d, k));
                self.times_m(&gs, d, out);
            }
        }
        for (o, s) in out.iter_mut().zip(s) {
            *o += self.lambda * s;
        }
    }
}

/// Inner-solver settings of one alternating step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct StepSolver {
    pub cg: CgParams,
    pub tron: TronParams,
}

/// What one W- or H-step cost.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct StepInfo {
    pub hessian_products: usize,
    /// Wall-clock seconds spent inside the Hessian-vector products.
    pub hv_seconds: f64,
}

/// An objective whose Hessian-vector products are timed (wall clock, summed
/// over the calls): the solver's own count of where a step's time goes.
struct TimedHv<'o, O: TronObjective> {
    inner: &'o mut O,
    seconds: std::cell::Cell<f64>,
}

impl<'o, O: TronObjective> TimedHv<'o, O> {
    fn new(inner: &'o mut O) -> Self {
        Self { inner, seconds: std::cell::Cell::new(0.0) }
    }
}

impl<O: TronObjective> TronObjective for TimedHv<'_, O> {
    fn dim(&self) -> usize {
        self.inner.dim()
    }
    fn fun(&mut self, w: ColRef<'_, f64>) -> f64 {
        self.inner.fun(w)
    }
    fn grad(&mut self, w: ColRef<'_, f64>, g: ColMut<'_, f64>) {
        self.inner.grad(w, g)
    }
    fn hv(&self, s: ColRef<'_, f64>, out: ColMut<'_, f64>) {
        let t = std::time::Instant::now();
        self.inner.hv(s, out);
        self.seconds.set(self.seconds.get() + t.elapsed().as_secs_f64());
    }
}

struct HessianOperator<'o, O: TronObjective>(&'o O);

impl<O: TronObjective> LinearOperator for HessianOperator<'_, O> {
    fn dim(&self) -> usize {
        self.0.dim()
    }
    fn apply(&self, x: ColRef<'_, f64>, out: ColMut<'_, f64>) {
        self.0.hv(x, out)
    }
}

/// Minimises `obj` from `w`: one CG solve of the Newton system for the
/// squared loss (the objective is quadratic: Algorithm 3), TRON otherwise.
pub(crate) fn minimize<O: TronObjective>(
    obj: &mut O,
    w: &mut Col<f64>,
    loss: Loss,
    solver: StepSolver,
) -> Result<StepInfo> {
    let mut timed = TimedHv::new(obj);
    let mut info = minimize_untimed(&mut timed, w, loss, solver)?;
    info.hv_seconds = timed.seconds.get();
    Ok(info)
}

fn minimize_untimed<O: TronObjective>(
    obj: &mut O,
    w: &mut Col<f64>,
    loss: Loss,
    solver: StepSolver,
) -> Result<StepInfo> {
    if loss == Loss::Squared {
        obj.fun(w.as_ref());
        let mut g = Col::zeros(w.nrows());
        obj.grad(w.as_ref(), g.as_mut());
        let b = -&g;
        let mut step = Col::zeros(w.nrows());
        let op = HessianOperator(&*obj);
        let hessian_products =
            match okr_linalg::conjugate_gradient_in_place(&op, None, b.as_ref(), step.as_mut(), solver.cg) {
                Ok(info) => info.iterations,
                // An inexact Newton step still lowers the quadratic: keep it.
                Err(okr_linalg::Error::NoConvergence { iterations, .. }) => iterations,
                Err(e) => return Err(e.into()),
            };
        *w += &step;
        Ok(StepInfo { hessian_products, hv_seconds: 0.0 })
    } else {
        let info = okr_linalg::tron(obj, w.as_mut(), solver.tron)?;
        Ok(StepInfo { hessian_products: info.cg_iterations, hv_seconds: 0.0 })
    }
}
