//! SELF + HS: the Hilbert-Schmidt (independent tasks) baseline of Luise et
//! al. 2019, Table 1, on the masked multitask data of [`masked`](super::masked).
//!
//! Each task $t$ (for rankings: a pair of items $a < b$ with target
//! $r_b - r_a$) is a ridge regression over the users $U_t$ that observe it,
//! $$w_t = \arg\min_w \frac1{n_t}\sum_{u\in U_t}(x_u^\top w - y_{ut})^2 + \lambda\|w\|^2
//! = (X_U^\top X_U + n_t\lambda I)^{-1}X_U^\top y_U,\qquad n_t = |U_t|,$$
//! which is the squared-loss surrogate with a Hilbert-Schmidt penalty on the
//! operator $G$: no structure shared between tasks (the trace-norm model of
//! [`masked`](super::masked) is the low-rank alternative). A task nobody
//! observes gets $w_t = 0$, the minimiser of its (empty) loss plus penalty.
//!
//! When $n_t < d$ the same solution is computed in the dual,
//! $w_t = X_U^\top(X_UX_U^\top + n_t\lambda I)^{-1}y_U$, an $n_t\times n_t$
//! eigendecomposition instead of $d\times d$. One eigendecomposition per task
//! serves every $\lambda$ of a path ([`SelfHs::fit_lambda_path`]).

#![allow(clippy::needless_range_loop)]

use faer::{Mat, MatRef};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::masked::TaskEntries;
use crate::{Error, ParamGuard, Result};

/// Validated SELF + HS hyper-parameters; the only type with `fit`.
///
/// | Name | Default | Purpose | Range |
/// |---|---|---|---|
/// | `lambda` | `1.0` | per-task ridge, system $X_U^\top X_U + n_t\lambda I$ | `(0, inf)` |
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SelfHsValidParams {
    lambda: f64,
}

/// SELF + HS hyper-parameters (builder; setters store, [`ParamGuard::check`] validates).
///
/// # Example
/// ```
/// use faer::Mat;
/// use okr_estimators::ParamGuard;
/// use okr_estimators::trace_norm::SelfHs;
/// use okr_estimators::trace_norm::masked::TaskEntries;
/// // Three users with two features, two tasks; task 1 is observed by nobody.
/// let x = Mat::from_fn(3, 2, |i, j| (i + j) as f64);
/// let entries = TaskEntries::from_users(2, vec![vec![(0, 1.0)], vec![(0, 2.0)], vec![]])?;
/// let model = SelfHs::params().lambda(0.1).check()?.fit(x.as_ref(), &entries)?;
/// assert_eq!(model.score(x.as_ref(), 2, 1), 0.0);
/// assert!(SelfHs::params().lambda(0.0).check().is_err());
/// Ok::<(), okr_estimators::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SelfHsParams(SelfHsValidParams);

/// A fitted SELF + HS model: one weight vector per task.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SelfHs {
    lambda: f64,
    /// $W = [w_1, \dots, w_T]$ `(d, n_tasks)`.
    #[serde(with = "okr_linalg::serde_mat")]
    weights: Mat<f64>,
    n_dual: usize,
}

impl SelfHsValidParams {
    /// Ridge $\lambda$.
    pub fn lambda(&self) -> f64 {
        self.lambda
    }

    /// Fits every task on the users' features `x` `(n_users, d)` and the
    /// observed entries.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] when `x` has not one row per user of
    /// `entries`; [`Error::Linalg`] when a decomposition fails.
    pub fn fit(&self, x: MatRef<'_, f64>, entries: &TaskEntries) -> Result<SelfHs> {
        let mut models = fit_path(x, entries, &[self.lambda])?;
        Ok(models.pop().expect("one lambda, one model"))
    }
}

impl SelfHsParams {
    /// Parameters with `lambda = 1.0`.
    pub fn new() -> Self {
        Self(SelfHsValidParams { lambda: 1.0 })
    }

    /// Sets the ridge $\lambda$.
    pub fn lambda(mut self, lambda: f64) -> Self {
        self.0.lambda = lambda;
        self
    }
}

impl Default for SelfHsParams {
    fn default() -> Self {
        Self::new()
    }
}

impl ParamGuard for SelfHsParams {
    type Checked = SelfHsValidParams;
    type Error = Error;

    fn check_ref(&self) -> Result<&SelfHsValidParams> {
        crate::core::checks::positive("lambda", self.0.lambda)?;
        Ok(&self.0)
    }

    fn check(self) -> Result<SelfHsValidParams> {
        self.check_ref()?;
        Ok(self.0)
    }
}

impl SelfHs {
    /// Default parameters (see [`SelfHsParams`]).
    pub fn params() -> SelfHsParams {
        SelfHsParams::new()
    }

    /// One model per ridge of `lambdas`, from one eigendecomposition per task.
    ///
    /// # Errors
    /// As [`SelfHsValidParams::fit`]; [`Error::InvalidParameter`] for a ridge
    /// that is not finite and `> 0`.
    pub fn fit_lambda_path(x: MatRef<'_, f64>, entries: &TaskEntries, lambdas: &[f64]) -> Result<Vec<SelfHs>> {
        for &l in lambdas {
            SelfHs::params().lambda(l).check()?;
        }
        fit_path(x, entries, lambdas)
    }

    /// The ridge the model was fitted with.
    pub fn lambda(&self) -> f64 {
        self.lambda
    }

    /// The task weights $W$ `(d, n_tasks)`.
    pub fn weights(&self) -> MatRef<'_, f64> {
        self.weights.as_ref()
    }

    /// Number of tasks solved in the dual form ($n_t < d$).
    pub fn n_dual_tasks(&self) -> usize {
        self.n_dual
    }

    /// The estimate $x_u^\top w_t$ for row `u` of `x` `(n, d)` and task `t`.
    ///
    /// # Panics
    /// If `x.ncols() != d`, `u >= x.nrows()` or `t >= n_tasks`.
    #[track_caller]
    pub fn score(&self, x: MatRef<'_, f64>, u: usize, t: usize) -> f64 {
        assert_eq!(x.ncols(), self.weights.nrows(), "features must have d columns");
        (0..x.ncols()).map(|k| x[(u, k)] * self.weights[(k, t)]).sum()
    }

    /// All estimates $XW$ `(n, n_tasks)` for features `x` `(n, d)`.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] when `x` has not `d` columns.
    pub fn predict(&self, x: MatRef<'_, f64>) -> Result<Mat<f64>> {
        if x.ncols() != self.weights.nrows() {
            return Err(Error::ShapeMismatch {
                what: "feature columns",
                expected: self.weights.nrows(),
                got: x.ncols(),
            });
        }
        Ok(x * &self.weights)
    }
}

fn fit_path(x: MatRef<'_, f64>, entries: &TaskEntries, lambdas: &[f64]) -> Result<Vec<SelfHs>> {
    if x.nrows() != entries.n_users() {
        return Err(Error::ShapeMismatch { what: "feature rows (users)", expected: entries.n_users(), got: x.nrows() });
    }
    let (d, n_tasks) = (x.ncols(), entries.n_tasks());
    // Transpose the entries: per task, (user, value).
    let by_task = entries_by_task(entries);
    // Per task: one weight column per lambda, and whether the dual was used.
    let per_task: Vec<(Vec<Vec<f64>>, bool)> =
        by_task.par_iter().map(|obs| solve_task(x, obs, lambdas)).collect::<Result<_>>()?;
    let n_dual = per_task.iter().filter(|t| t.1).count();
    Ok(lambdas
        .iter()
        .enumerate()
        .map(|(li, &lambda)| SelfHs { lambda, weights: Mat::from_fn(d, n_tasks, |k, t| per_task[t].0[li][k]), n_dual })
        .collect())
}

/// Per task: the observations `(user, value)` of every task.
fn entries_by_task(entries: &TaskEntries) -> Vec<Vec<(usize, f64)>> {
    let mut by_task: Vec<Vec<(usize, f64)>> = vec![Vec::new(); entries.n_tasks()];
    for u in 0..entries.n_users() {
        let (tasks, vals) = entries.user(u);
        for (&t, &v) in tasks.iter().zip(vals) {
            by_task[t as usize].push((u, v));
        }
    }
    by_task
}

/// One task's weight column per lambda (length `d` each), and whether the dual form was used.
fn solve_task(x: MatRef<'_, f64>, obs: &[(usize, f64)], lambdas: &[f64]) -> Result<(Vec<Vec<f64>>, bool)> {
    let d = x.ncols();
    let nt = obs.len();
    if nt == 0 {
        return Ok((lambdas.iter().map(|_| vec![0.0; d]).collect(), false));
    }
    let y = Mat::from_fn(nt, 1, |i, _| obs[i].1);
    let xu = Mat::from_fn(nt, d, |i, f| x[(obs[i].0, f)]);
    let dual = nt < d;
    let (gram, rhs) = if dual { (&xu * xu.transpose(), y) } else { (xu.transpose() * &xu, xu.transpose() * &y) };
    let e = okr_linalg::eigh(gram.as_ref())?;
    let projected = e.vectors().transpose() * &rhs;
    let columns = lambdas
        .iter()
        .map(|&l| {
            let ridge = nt as f64 * l;
            let z = Mat::from_fn(projected.nrows(), 1, |k, _| projected[(k, 0)] / (e.values()[k].max(0.0) + ridge));
            let solved = e.vectors() * z;
            let w = if dual { xu.transpose() * &solved } else { solved };
            (0..d).map(|k| w[(k, 0)]).collect()
        })
        .collect();
    Ok((columns, dual))
}

/// The SELF + HS estimates $x_q^\top w_t(\lambda)$ at the queries `(row of
/// x_query, task)`, for every ridge of `lambdas`, without the `(d, n_tasks)`
/// weight matrix: the tasks are solved `chunk` at a time (in parallel within a
/// chunk), each chunk's queries scored, then its weights dropped. Memory is
/// `O(chunk d |lambdas| + |queries| |lambdas|)` beside the entries, against
/// `O(d n_tasks |lambdas|)` for [`SelfHs::fit_lambda_path`] followed by
/// [`SelfHs::score`] (13 GB per lambda on MovieLens 100K's item pairs); the
/// values are the same (same per-task solve).
///
/// Returns one vector per lambda, aligned with `queries`.
///
/// # Errors
/// [`Error::ShapeMismatch`] when `x` has not one row per user of `entries`,
/// or `x_query` not `d` columns; [`Error::InvalidParameter`] for a ridge that
/// is not finite and `> 0` or `chunk == 0`; [`Error::Linalg`] when a decomposition fails.
///
/// # Panics
/// If a query's row is `>= x_query.nrows()` or its task `>= entries.n_tasks()`.
///
/// # Example
/// ```
/// use faer::Mat;
/// use okr_estimators::trace_norm::SelfHs;
/// use okr_estimators::trace_norm::masked::TaskEntries;
/// use okr_estimators::trace_norm::score_lambda_path_chunked;
/// let x = Mat::from_fn(4, 2, |i, j| (i + 2 * j) as f64 / 4.0);
/// let entries = TaskEntries::from_users(3, vec![vec![(0, 1.0)], vec![(0, 2.0), (1, -1.0)], vec![(1, 0.5)], vec![]])?;
/// let scores = score_lambda_path_chunked(x.as_ref(), &entries, &[0.1, 1.0], x.as_ref(), &[(3, 0), (0, 1), (1, 2)], 1)?;
/// let full = SelfHs::fit_lambda_path(x.as_ref(), &entries, &[0.1, 1.0])?;
/// assert!((scores[1][0] - full[1].score(x.as_ref(), 3, 0)).abs() < 1e-12);
/// assert_eq!(scores[0][2], 0.0); // task 2: observed by nobody
/// Ok::<(), okr_estimators::Error>(())
/// ```
pub fn score_lambda_path_chunked(
    x: MatRef<'_, f64>,
    entries: &TaskEntries,
    lambdas: &[f64],
    x_query: MatRef<'_, f64>,
    queries: &[(usize, usize)],
    chunk: usize,
) -> Result<Vec<Vec<f64>>> {
    for &l in lambdas {
        SelfHs::params().lambda(l).check()?;
    }
    if chunk == 0 {
        return Err(Error::InvalidParameter { name: "chunk", value: "0".into(), expected: ">= 1" });
    }
    if x.nrows() != entries.n_users() {
        return Err(Error::ShapeMismatch { what: "feature rows (users)", expected: entries.n_users(), got: x.nrows() });
    }
    if x_query.ncols() != x.ncols() {
        return Err(Error::ShapeMismatch { what: "query feature columns", expected: x.ncols(), got: x_query.ncols() });
    }
    let n_tasks = entries.n_tasks();
    // Queries grouped by task (counting sort): order[start[t]..start[t + 1]].
    let mut start = vec![0usize; n_tasks + 1];
    for &(q, t) in queries {
        assert!(q < x_query.nrows() && t < n_tasks, "query ({q}, {t}) out of range");
        start[t + 1] += 1;
    }
    for t in 0..n_tasks {
        start[t + 1] += start[t];
    }
    let mut fill = start.clone();
    let mut order = vec![0usize; queries.len()];
    for (i, &(_, t)) in queries.iter().enumerate() {
        order[fill[t]] = i;
        fill[t] += 1;
    }
    let by_task = entries_by_task(entries);
    let mut out = vec![vec![0.0; queries.len()]; lambdas.len()];
    let d = x.ncols();
    for c0 in (0..n_tasks).step_by(chunk) {
        let c1 = (c0 + chunk).min(n_tasks);
        // Per task of the chunk: (query index, score per lambda); weights dropped after scoring.
        let scored: Vec<Vec<(usize, Vec<f64>)>> = (c0..c1)
            .into_par_iter()
            .map(|t| -> Result<Vec<(usize, Vec<f64>)>> {
                let qs = &order[start[t]..start[t + 1]];
                if qs.is_empty() || by_task[t].is_empty() {
                    return Ok(Vec::new());
                }
                let (w, _) = solve_task(x, &by_task[t], lambdas)?;
                Ok(qs
                    .iter()
                    .map(|&i| {
                        let q = queries[i].0;
                        (i, w.iter().map(|wl| (0..d).map(|k| x_query[(q, k)] * wl[k]).sum()).collect())
                    })
                    .collect())
            })
            .collect::<Result<_>>()?;
        for (i, s) in scored.into_iter().flatten() {
            for (li, v) in s.into_iter().enumerate() {
                out[li][i] = v;
            }
        }
    }
    Ok(out)
}

impl crate::persist::Validate for SelfHs {
    fn validate(&self) -> std::result::Result<(), crate::persist::Invalid> {
        use crate::persist::{ensure, finite};
        ensure(self.lambda.is_finite() && self.lambda > 0.0, || format!("SELF + HS lambda {}", self.lambda))?;
        ensure(self.weights.ncols() >= 1, || "SELF + HS model has no task".into())?;
        ensure(self.n_dual <= self.weights.ncols(), || "SELF + HS counts more dual tasks than tasks".into())?;
        finite("SELF + HS weights", self.weights.as_ref())
    }
}
