//! The masked multitask variant for per-user ranking with missing pairs
//! (spec 2.3-2.4). The paper's Appendix A.2 is missing; two reconstructions.
//!
//! **R2 (primary, [`MaskedTraceNorm`])**: every pair of items $t = (a, b)$,
//! $a < b$, is a task whose target for user $u$ is $y_{ut} = r_{ub} - r_{ua}$,
//! observed only on a mask $\Omega$. With explicit input features $X$ `(n, d)`
//! (the paper uses a linear kernel), $A \in \mathbb R^{d\times r}$ and the task
//! factor $B \in \mathbb R^{T\times r}$:
//! $$\min_{A,B}\ \tfrac12\sum_{(u,t)\in\Omega}\big((XA)_u\cdot B_t - y_{ut}\big)^2 + \tfrac\lambda2(\|A\|_F^2 + \|B\|_F^2),$$
//! i.e. trace norm $\lambda\|AB^\top\|_*$ on the $d\times T$ task matrix, with
//! uniform weights over observed entries (the authors' code; the paper's (17)
//! weights $1/(T n_t)$ are the alternative we do not use). Solved by L-BFGS;
//! a gradient costs $O(|\Omega| r + n d r)$, and $W = XAB^\top$ is never formed.
//!
//! **R1 ([`zero_filled_pair_gram`])**: zero-fill the unobserved pairs of each
//! user's embedding and run the vector-valued Algorithm 1 with the output Gram
//! $k_y(u, u') = |O|\sum_{a\in O} r_{ua}r_{u'a} - (\sum_{a\in O} r_{ua})(\sum_{a\in O} r_{u'a})$,
//! $O$ = items both users rated. It biases unobserved pairs to 0; we keep R2 for the experiments.
// Index loops mirror the matrix formulas (pairs a < b, entries (i, j)).
#![allow(clippy::needless_range_loop)]

use faer::Mat;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// Observed task entries per user, compressed by user (CSR): user `u` has
/// entries `indptr[u]..indptr[u + 1]` of `task` and `value`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskEntries {
    n_tasks: usize,
    indptr: Vec<usize>,
    task: Vec<u32>,
    value: Vec<f64>,
}

impl TaskEntries {
    /// Builds entries from per-user lists of `(task, value)`.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] for a task index `>= n_tasks`; [`Error::InvalidParameter`] for a non-finite value.
    ///
    /// # Example
    /// ```
    /// use okr_estimators::trace_norm::masked::TaskEntries;
    /// let e = TaskEntries::from_users(3, vec![vec![(0, 1.0)], vec![], vec![(2, -1.0), (1, 0.5)]])?;
    /// assert_eq!((e.n_users(), e.n_entries()), (3, 3));
    /// Ok::<(), okr_estimators::Error>(())
    /// ```
    pub fn from_users(n_tasks: usize, users: Vec<Vec<(usize, f64)>>) -> Result<Self> {
        let mut indptr = Vec::with_capacity(users.len() + 1);
        indptr.push(0);
        let total = users.iter().map(Vec::len).sum();
        let (mut task, mut value) = (Vec::with_capacity(total), Vec::with_capacity(total));
        for u in users {
            for (t, v) in u {
                if t >= n_tasks || t > u32::MAX as usize {
                    return Err(Error::ShapeMismatch { what: "task index bound", expected: n_tasks, got: t });
                }
                if !v.is_finite() {
                    return Err(Error::InvalidParameter {
                        name: "task value",
                        value: format!("{v}"),
                        expected: "finite",
                    });
                }
                task.push(t as u32);
                value.push(v);
            }
            indptr.push(task.len());
        }
        Ok(Self { n_tasks, indptr, task, value })
    }
    /// Number of users (rows).
    pub fn n_users(&self) -> usize {
        self.indptr.len() - 1
    }
    /// Number of tasks (columns).
    pub fn n_tasks(&self) -> usize {
        self.n_tasks
    }
    /// Number of observed entries $|\Omega|$.
    pub fn n_entries(&self) -> usize {
        self.task.len()
    }
    /// The entries of user `u` as `(tasks, values)`.
    pub fn user(&self, u: usize) -> (&[u32], &[f64]) {
        let r = self.indptr[u]..self.indptr[u + 1];
        (&self.task[r.clone()], &self.value[r])
    }
}

/// A fitted R2 masked multitask trace-norm model: $W_{ut} = (x_u A)\cdot B_t$.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MaskedTraceNorm {
    #[serde(with = "okr_linalg::serde_mat")]
    a: Mat<f64>,
    #[serde(with = "okr_linalg::serde_mat")]
    b: Mat<f64>,
    objective: f64,
    n_iter: usize,
}

/// Options of [`MaskedTraceNorm::fit`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MaskedOptions {
    /// $\lambda$ (unnormalized sum convention of the objective above).
    pub lambda: f64,
    /// Rank $r$.
    pub rank: usize,
    /// L-BFGS iteration budget.
    pub max_iter: usize,
    /// Stop when the relative objective decrease is below this for 5 iterations.
    pub rel_tol: f64,
    /// Scale of the i.i.d. Gaussian initialization (relative to unit rows).
    pub init_scale: f64,
    /// Seed of the initialization.
    pub seed: u64,
}

impl Default for MaskedOptions {
    fn default() -> Self {
        Self { lambda: 1.0, rank: 10, max_iter: 500, rel_tol: 1e-7, init_scale: 0.1, seed: 0 }
    }
}

/// Objective and gradient at `(A, B)` packed in `theta` = [vec(A); vec(B)] (column-major).
fn value_grad(x: &Mat<f64>, e: &TaskEntries, lambda: f64, d: usize, r: usize, theta: &[f64], grad: &mut [f64]) -> f64 {
    let n = x.nrows();
    let t = e.n_tasks();
    let a = faer::MatRef::from_column_major_slice(&theta[..d * r], d, r);
    let b = faer::MatRef::from_column_major_slice(&theta[d * r..], t, r);
    let z = x * a; // (n, r)
    let bt = b.transpose().to_owned(); // (r, T): task rows contiguous
    // Per-user chunks: residuals -> gZ rows and a private gB^T accumulator.
    let chunk = n.div_ceil(rayon::current_num_threads().max(1) * 4).max(1);
    let (loss, gz_rows, gbt) = (0..n)
        .into_par_iter()
        .chunks(chunk)
        .map(|users| {
            let mut gbt = vec![0.0; r * t];
            let mut rows = Vec::with_capacity(users.len());
            let mut loss = 0.0;
            for u in users {
                let zu: Vec<f64> = (0..r).map(|c| z[(u, c)]).collect();
                let mut gz = vec![0.0; r];
                let (tasks, vals) = e.user(u);
                for (&tk, &y) in tasks.iter().zip(vals) {
                    let col = bt.col(tk as usize);
                    let mut pred = 0.0;
                    for c in 0..r {
                        pred += zu[c] * col[c];
                    }
                    let res = pred - y;
                    loss += 0.5 * res * res;
                    let g = &mut gbt[tk as usize * r..(tk as usize + 1) * r];
                    for c in 0..r {
                        gz[c] += res * col[c];
                        g[c] += res * zu[c];
                    }
                }
                rows.push((u, gz));
            }
            (loss, rows, gbt)
        })
        .collect::<Vec<_>>()
        .into_iter()
        // Combined in chunk order, not by rayon's adaptive `reduce`: the same
        // rounding in every run.
        .fold((0.0, Vec::new(), vec![0.0; r * t]), |mut acc, part| {
            acc.0 += part.0;
            acc.1.extend(part.1);
            acc.2.iter_mut().zip(&part.2).for_each(|(a, b)| *a += b);
            acc
        });
    let mut gz = Mat::<f64>::zeros(n, r);
    for (u, row) in gz_rows {
        for c in 0..r {
            gz[(u, c)] = row[c];
        }
    }
    let ga = x.transpose() * &gz;
    let mut reg = 0.0;
    for c in 0..r {
        for i in 0..d {
            grad[c * d + i] = ga[(i, c)] + lambda * a[(i, c)];
            reg += a[(i, c)] * a[(i, c)];
        }
        for k in 0..t {
            grad[d * r + c * t + k] = gbt[k * r + c] + lambda * b[(k, c)];
            reg += b[(k, c)] * b[(k, c)];
        }
    }
    loss + 0.5 * lambda * reg
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

impl MaskedTraceNorm {
    /// Fits R2 by L-BFGS (memory 10, backtracking Armijo line search from
    /// step 1) from a seeded Gaussian initialization, or from `warm` (a
    /// previous model of the same shape, e.g. along a $\lambda$ path).
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] when `x` and `entries` have different numbers
    /// of users; [`Error::InvalidParameter`] for `lambda <= 0` or `rank = 0`.
    ///
    /// # Example
    /// ```
    /// use faer::Mat;
    /// use okr_estimators::trace_norm::masked::{MaskedOptions, MaskedTraceNorm, TaskEntries};
    /// let x = Mat::from_fn(6, 2, |i, j| if j == 0 { i as f64 / 6.0 } else { 1.0 });
    /// // Task 0 target 2 x_u0, observed for all users; task 1 for half of them.
    /// let users = (0..6).map(|u| { let mut v = vec![(0, 2.0 * u as f64 / 6.0)]; if u % 2 == 0 { v.push((1, -1.0)); } v }).collect();
    /// let e = TaskEntries::from_users(2, users)?;
    /// let model = MaskedTraceNorm::fit(&x, &e, &MaskedOptions { lambda: 1e-3, rank: 2, ..Default::default() }, None)?;
    /// assert!((model.predict(x.as_ref(), 3, 0) - 1.0).abs() < 0.05);
    /// Ok::<(), okr_estimators::Error>(())
    /// ```
    pub fn fit(x: &Mat<f64>, entries: &TaskEntries, opts: &MaskedOptions, warm: Option<&Self>) -> Result<Self> {
        if x.nrows() != entries.n_users() {
            return Err(Error::ShapeMismatch {
                what: "users in features vs entries",
                expected: x.nrows(),
                got: entries.n_users(),
            });
        }
        if !(opts.lambda.is_finite() && opts.lambda > 0.0) {
            return Err(Error::InvalidParameter {
                name: "lambda",
                value: format!("{}", opts.lambda),
                expected: "a finite number > 0",
            });
        }
        if opts.rank == 0 {
            return Err(Error::InvalidParameter { name: "rank", value: "0".into(), expected: "an integer >= 1" });
        }
        let (d, r, t) = (x.ncols(), opts.rank, entries.n_tasks());
        let dim = d * r + t * r;
        let mut theta = match warm {
            Some(w) if w.a.nrows() == d && w.a.ncols() == r && w.b.nrows() == t => {
                let mut v = Vec::with_capacity(dim);
                for c in 0..r {
                    v.extend(w.a.col(c).iter());
                }
                for c in 0..r {
                    v.extend(w.b.col(c).iter());
                }
                v
            }
            _ => {
                use rand::{RngExt, SeedableRng};
                let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(opts.seed);
                (0..dim)
                    .map(|_| {
                        let u1: f64 = 1.0 - rng.random::<f64>();
                        let u2: f64 = rng.random::<f64>();
                        opts.init_scale * (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
                    })
                    .collect()
            }
        };
        let mut g = vec![0.0; dim];
        let mut f = value_grad(x, entries, opts.lambda, d, r, &theta, &mut g);
        let mem = 10;
        let (mut s_hist, mut y_hist): (Vec<Vec<f64>>, Vec<Vec<f64>>) = (Vec::new(), Vec::new());
        let mut stalled = 0;
        let mut iters = opts.max_iter;
        let mut g_new = vec![0.0; dim];
        for it in 0..opts.max_iter {
            // Two-loop recursion: direction = -H g.
            let mut q = g.clone();
            let mut alphas = Vec::with_capacity(s_hist.len());
            for (s, y) in s_hist.iter().zip(&y_hist).rev() {
                let rho = 1.0 / dot(y, s);
                let al = rho * dot(s, &q);
                q.iter_mut().zip(y).for_each(|(qi, yi)| *qi -= al * yi);
                alphas.push((al, rho));
            }
            if let (Some(s), Some(y)) = (s_hist.last(), y_hist.last()) {
                let gamma = dot(s, y) / dot(y, y);
                q.iter_mut().for_each(|v| *v *= gamma);
            } else {
                let gn = dot(&g, &g).sqrt().max(f64::MIN_POSITIVE);
                q.iter_mut().for_each(|v| *v /= gn);
            }
            for ((s, y), (al, rho)) in s_hist.iter().zip(&y_hist).zip(alphas.into_iter().rev()) {
                let be = rho * dot(y, &q);
                q.iter_mut().zip(s).for_each(|(qi, si)| *qi += (al - be) * si);
            }
            let mut slope = -dot(&g, &q);
            if slope >= 0.0 {
                // Not a descent direction: restart from steepest descent.
                s_hist.clear();
                y_hist.clear();
                q.clone_from(&g);
                slope = -dot(&g, &g);
            }
            let mut step = 1.0;
            let mut trial = vec![0.0; dim];
            let f_new = loop {
                trial.iter_mut().zip(theta.iter().zip(&q)).for_each(|(t, (th, qi))| *t = th - step * qi);
                let fv = value_grad(x, entries, opts.lambda, d, r, &trial, &mut g_new);
                if fv <= f + 1e-4 * step * slope || step < 1e-20 {
                    break fv;
                }
                step *= 0.5;
            };
            if step < 1e-20 {
                iters = it;
                break;
            }
            let s: Vec<f64> = trial.iter().zip(&theta).map(|(a, b)| a - b).collect();
            let y: Vec<f64> = g_new.iter().zip(&g).map(|(a, b)| a - b).collect();
            if dot(&s, &y) > 1e-12 * dot(&y, &y).sqrt() * dot(&s, &s).sqrt() {
                s_hist.push(s);
                y_hist.push(y);
                if s_hist.len() > mem {
                    s_hist.remove(0);
                    y_hist.remove(0);
                }
            }
            std::mem::swap(&mut theta, &mut trial);
            std::mem::swap(&mut g, &mut g_new);
            let rel = (f - f_new).abs() / f.abs().max(f64::MIN_POSITIVE);
            f = f_new;
            if okr_surrogate::progress::observed() {
                okr_surrogate::progress::report(
                    it + 1,
                    opts.max_iter,
                    &format!("masked trace norm, objective {f:.6e}"),
                );
            }
            stalled = if rel < opts.rel_tol { stalled + 1 } else { 0 };
            if stalled >= 5 {
                iters = it + 1;
                break;
            }
        }
        let a = Mat::from_fn(d, r, |i, c| theta[c * d + i]);
        let b = Mat::from_fn(t, r, |k, c| theta[d * r + c * t + k]);
        Ok(Self { a, b, objective: f, n_iter: iters })
    }

    /// A model from given factors, e.g. a spectral start for [`fit`](Self::fit)'s
    /// `warm`: the truncated SVD $U S V^\top$ of a per-task ridge solution split as
    /// $A = U S^{1/2}$, $B = V S^{1/2}$ (spec 1.7).
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] when `a` and `b` have different numbers of columns.
    pub fn from_factors(a: Mat<f64>, b: Mat<f64>) -> Result<Self> {
        if a.ncols() != b.ncols() {
            return Err(Error::ShapeMismatch { what: "factor ranks", expected: a.ncols(), got: b.ncols() });
        }
        Ok(Self { a, b, objective: f64::NAN, n_iter: 0 })
    }

    /// Input factor $A$ `(d, r)`.
    pub fn a(&self) -> faer::MatRef<'_, f64> {
        self.a.as_ref()
    }
    /// Task factor $B$ `(T, r)`.
    pub fn b(&self) -> faer::MatRef<'_, f64> {
        self.b.as_ref()
    }
    /// Final objective.
    pub fn objective(&self) -> f64 {
        self.objective
    }
    /// L-BFGS iterations run.
    pub fn n_iter(&self) -> usize {
        self.n_iter
    }
    /// The user embeddings $Z = XA$ `(n, r)`; the prediction for (user, task) is $Z_u\cdot B_t$.
    pub fn embed(&self, x: faer::MatRef<'_, f64>) -> Mat<f64> {
        x * &self.a
    }
    /// The prediction $W_{ut} = x_u A B_t^\top$ for row `u` of `x` and task `t`.
    ///
    /// # Panics
    /// If `u` or `t` is out of range or `x` has another width.
    pub fn predict(&self, x: faer::MatRef<'_, f64>, u: usize, t: usize) -> f64 {
        let z = x.row(u) * &self.a;
        (0..self.a.ncols()).map(|c| z[c] * self.b[(t, c)]).sum()
    }
}

/// The R1 output Gram of zero-filled pair embeddings: for users `u`, `u'`
/// with ratings `ratings[u]` (`(item, rating)` lists),
/// $\sum_{a<b;\,a,b\in O}(r_{ub}-r_{ua})(r_{u'b}-r_{u'a}) = |O|\sum_{a\in O} r_{ua}r_{u'a} - (\sum_{a\in O} r_{ua})(\sum_{a\in O} r_{u'a})$,
/// $O$ the items both rated. Costs $O(n^2\cdot$ ratings per user$)$.
///
/// # Example
/// ```
/// use okr_estimators::trace_norm::masked::zero_filled_pair_gram;
/// let g = zero_filled_pair_gram(3, &[vec![(0, 1.0), (1, 3.0)], vec![(0, 2.0), (1, 1.0), (2, 5.0)]]);
/// assert_eq!(g[(0, 1)], (3.0 - 1.0) * (1.0 - 2.0)); // one shared pair (0, 1)
/// ```
pub fn zero_filled_pair_gram(n_items: usize, ratings: &[Vec<(usize, f64)>]) -> Mat<f64> {
    let n = ratings.len();
    let dense: Vec<Vec<Option<f64>>> = ratings
        .iter()
        .map(|r| {
            let mut v = vec![None; n_items];
            for &(i, x) in r {
                v[i] = Some(x);
            }
            v
        })
        .collect();
    let mut g = Mat::zeros(n, n);
    for u in 0..n {
        for w in 0..=u {
            let (mut cnt, mut su, mut sw, mut suw) = (0.0, 0.0, 0.0, 0.0);
            for &(i, ru) in &ratings[u] {
                if let Some(rw) = dense[w][i] {
                    cnt += 1.0;
                    su += ru;
                    sw += rw;
                    suw += ru * rw;
                }
            }
            let v = cnt * suw - su * sw;
            g[(u, w)] = v;
            g[(w, u)] = v;
        }
    }
    g
}

impl crate::persist::Validate for MaskedTraceNorm {
    fn validate(&self) -> std::result::Result<(), crate::persist::Invalid> {
        use crate::persist::{ensure, finite};
        ensure(self.a.ncols() >= 1 && self.a.ncols() == self.b.ncols(), || {
            format!("masked trace-norm factors of ranks {} and {}", self.a.ncols(), self.b.ncols())
        })?;
        finite("masked trace-norm input factor", self.a.as_ref())?;
        finite("masked trace-norm task factor", self.b.as_ref())
    }
}
