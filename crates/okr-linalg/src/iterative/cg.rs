use faer::linalg::matmul::dot::inner_prod;
use faer::{Col, ColMut, ColRef, Conj, unzip, zip};

use super::LinearOperator;
use crate::{Error, Result};

/// Stopping rule of [`conjugate_gradient`].
///
/// | Name | Default | Purpose | Range |
/// |---|---|---|---|
/// | `tol` | `1e-10` | stop when $\lVert b - A x \rVert_2 \le \mathrm{tol} \, \lVert b \rVert_2$ | `>= 0` |
/// | `max_iter` | `None` = `10 * n` | iterations (operator applications) allowed | any |
///
/// The residual test uses the true residual $b - A x$, recomputed when the
/// cheap recursive one passes, so a returned solution always meets `tol`.
/// In floating point the attainable relative residual is about
/// $\epsilon \, \lVert A \rVert \lVert x \rVert / \lVert b \rVert \le \epsilon \, \kappa(A)$;
/// a smaller `tol` ends in [`Error::NoConvergence`].
///
/// # Example
/// ```
/// use okr_linalg::CgParams;
/// let p = CgParams::default().tol(1e-6).max_iter(200);
/// assert_eq!((p.tol, p.max_iter), (1e-6, Some(200)));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CgParams {
    /// Relative residual tolerance.
    pub tol: f64,
    /// Maximum number of iterations; `None` means `10 * n`.
    pub max_iter: Option<usize>,
}

impl Default for CgParams {
    fn default() -> Self {
        Self { tol: 1e-10, max_iter: None }
    }
}

impl CgParams {
    /// Sets the relative residual tolerance.
    ///
    /// # Example
    /// ```
    /// assert_eq!(okr_linalg::CgParams::default().tol(1e-4).tol, 1e-4);
    /// ```
    pub fn tol(mut self, tol: f64) -> Self {
        self.tol = tol;
        self
    }

    /// Sets the maximum number of iterations.
    ///
    /// # Example
    /// ```
    /// assert_eq!(okr_linalg::CgParams::default().max_iter(7).max_iter, Some(7));
    /// ```
    pub fn max_iter(mut self, max_iter: usize) -> Self {
        self.max_iter = Some(max_iter);
        self
    }
}

/// What a converged [`conjugate_gradient`] run did.
///
/// # Example
/// ```
/// use faer::{Col, Mat};
/// use okr_linalg::{CgParams, conjugate_gradient};
/// let a = Mat::<f64>::identity(3, 3);
/// let (_, info) = conjugate_gradient(&a, Col::from_fn(3, |i| i as f64).as_ref(), None, CgParams::default())?;
/// assert_eq!(info.iterations, 1);
/// assert!(info.relative_residual <= 1e-10);
/// Ok::<(), okr_linalg::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct CgInfo {
    /// Iterations done (each applies the operator once; the final residual
    /// checks add one application per check).
    pub iterations: usize,
    /// True relative residual $\lVert b - A x \rVert_2 / \lVert b \rVert_2$ of
    /// the returned `x` (0 when $b = 0$).
    pub relative_residual: f64,
}

/// Solves $A x = b$ for a symmetric positive definite operator $A$ by the
/// conjugate gradient method.
///
/// Starts from `x0` (zero when `None`) and stops at the first iterate with
/// $\lVert b - A x \rVert_2 \le \mathrm{tol} \, \lVert b \rVert_2$ (see
/// [`CgParams`]). Each iteration applies `op` once and costs $O(n)$ besides;
/// in exact arithmetic CG ends within $n$ iterations, and the error in the
/// $A$-norm shrinks at least like $2 \left(\frac{\sqrt\kappa - 1}{\sqrt\kappa + 1}\right)^k$.
/// If `b = 0` the answer is `x = 0` (for any `x0`).
///
/// # Errors
/// - [`Error::NoConvergence`] after `max_iter` iterations, with the last true
///   relative residual (use [`conjugate_gradient_in_place`] to keep that iterate);
/// - [`Error::NotPositiveDefinite`] if a search direction has $p^\top A p \le 0$;
/// - [`Error::NonFinite`] if `b` or `x0` holds NaN/inf, or `op` returns them.
///
/// # Panics
/// If `b` or `x0` does not have length `op.dim()`, or `params.tol` is negative or NaN.
///
/// # Example
/// ```
/// use faer::{Col, Mat};
/// use okr_linalg::{CgParams, conjugate_gradient};
/// // 1-D Laplacian plus identity: SPD, tridiagonal.
/// let n = 20;
/// let a = Mat::from_fn(n, n, |i, j| if i == j { 3.0 } else if i.abs_diff(j) == 1 { -1.0 } else { 0.0 });
/// let b = Col::from_fn(n, |i| (i as f64).sin());
/// let (x, info) = conjugate_gradient(&a, b.as_ref(), None, CgParams::default())?;
/// assert!((&a * &x - &b).norm_l2() <= 1e-10 * b.norm_l2());
/// assert!(info.iterations <= n);
/// // A warm start close to the solution needs fewer iterations.
/// let (_, warm) = conjugate_gradient(&a, b.as_ref(), Some(x.as_ref()), CgParams::default())?;
/// assert_eq!(warm.iterations, 0);
/// Ok::<(), okr_linalg::Error>(())
/// ```
#[track_caller]
pub fn conjugate_gradient<O: LinearOperator + ?Sized>(
    op: &O,
    b: ColRef<'_, f64>,
    x0: Option<ColRef<'_, f64>>,
    params: CgParams,
) -> Result<(Col<f64>, CgInfo)> {
    let mut x = start(op, x0);
    let info = conjugate_gradient_in_place(op, None, b, x.as_mut(), params)?;
    Ok((x, info))
}

/// Solves $A x = b$ by conjugate gradient preconditioned with `precond`,
/// which applies an SPD approximation $M^{-1} \approx A^{-1}$ (e.g. [`Jacobi`](crate::Jacobi)).
///
/// The iterates minimise the $A$-norm error over the Krylov space of
/// $M^{-1} A$; convergence depends on $\kappa(M^{-1} A)$ instead of $\kappa(A)$.
/// The stopping rule is unchanged: the unpreconditioned relative residual
/// $\lVert b - A x \rVert_2 / \lVert b \rVert_2 \le \mathrm{tol}$.
///
/// # Errors
/// As [`conjugate_gradient`], and [`Error::NotPositiveDefinite`] when
/// $r^\top M^{-1} r \le 0$ (the preconditioner is not positive definite).
///
/// # Panics
/// As [`conjugate_gradient`], and if `precond.dim() != op.dim()`.
///
/// # Example
/// ```
/// use faer::{Col, Mat};
/// use okr_linalg::{CgParams, Jacobi, preconditioned_conjugate_gradient};
/// // Diagonal matrix: Jacobi is the exact inverse, one iteration suffices.
/// let a = Mat::from_fn(5, 5, |i, j| if i == j { 10f64.powi(i as i32) } else { 0.0 });
/// let b = Col::from_fn(5, |_| 1.0);
/// let m = Jacobi::from_matrix(a.as_ref())?;
/// let (x, info) = preconditioned_conjugate_gradient(&a, &m, b.as_ref(), None, CgParams::default())?;
/// assert_eq!(info.iterations, 1);
/// assert!((x[4] - 1e-4).abs() < 1e-18);
/// Ok::<(), okr_linalg::Error>(())
/// ```
#[track_caller]
pub fn preconditioned_conjugate_gradient<O: LinearOperator + ?Sized, P: LinearOperator>(
    op: &O,
    precond: &P,
    b: ColRef<'_, f64>,
    x0: Option<ColRef<'_, f64>>,
    params: CgParams,
) -> Result<(Col<f64>, CgInfo)> {
    let mut x = start(op, x0);
    let info = conjugate_gradient_in_place(op, Some(precond), b, x.as_mut(), params)?;
    Ok((x, info))
}

#[track_caller]
fn start<O: LinearOperator + ?Sized>(op: &O, x0: Option<ColRef<'_, f64>>) -> Col<f64> {
    match x0 {
        Some(x0) => {
            assert_eq!(x0.nrows(), op.dim(), "x0 must have length op.dim()");
            x0.to_owned()
        }
        None => Col::zeros(op.dim()),
    }
}

/// Low-level (preconditioned) conjugate gradient: `x` holds the initial guess
/// on entry and the last iterate on exit, **also when an error is returned**
/// (an inexact Newton step, as in TRON, can use a non-converged iterate).
///
/// `precond = None` is plain CG. An all-zero `x` on entry skips the first
/// operator application. Allocates four work vectors of length `n`.
///
/// # Errors
/// As [`preconditioned_conjugate_gradient`]; on [`Error::NoConvergence`] `x`
/// is the last iterate and `residual` its true relative residual.
///
/// # Panics
/// As [`preconditioned_conjugate_gradient`], and if `x.nrows() != op.dim()`.
///
/// # Example
/// ```
/// use faer::{Col, Mat};
/// use okr_linalg::{CgParams, Error, conjugate_gradient_in_place};
/// let n = 40;
/// let a = Mat::from_fn(n, n, |i, j| if i == j { 1.0 + i as f64 } else { 0.0 });
/// let b = Col::from_fn(n, |_| 1.0);
/// let mut x = Col::zeros(n);
/// // Two iterations are not enough for 40 distinct eigenvalues...
/// let err = conjugate_gradient_in_place(&a, None, b.as_ref(), x.as_mut(), CgParams::default().max_iter(2));
/// assert!(matches!(err, Err(Error::NoConvergence { iterations: 2, .. })));
/// // ...but x holds the iterate, and the next call continues from it.
/// let info = conjugate_gradient_in_place(&a, None, b.as_ref(), x.as_mut(), CgParams::default())?;
/// assert!(info.relative_residual <= 1e-10);
/// Ok::<(), okr_linalg::Error>(())
/// ```
#[track_caller]
pub fn conjugate_gradient_in_place<O: LinearOperator + ?Sized>(
    op: &O,
    precond: Option<&dyn LinearOperator>,
    b: ColRef<'_, f64>,
    mut x: ColMut<'_, f64>,
    params: CgParams,
) -> Result<CgInfo> {
    let n = op.dim();
    assert_eq!(b.nrows(), n, "b must have length op.dim()");
    assert_eq!(x.nrows(), n, "x must have length op.dim()");
    if let Some(m) = precond {
        assert_eq!(m.dim(), n, "the preconditioner must have the operator's dimension");
    }
    let tol = params.tol;
    assert!(tol >= 0.0, "CG needs tol >= 0, got {tol}");
    if b.iter().any(|v| !v.is_finite()) {
        return Err(Error::NonFinite { what: "right-hand side of CG" });
    }
    if x.as_ref().iter().any(|v| !v.is_finite()) {
        return Err(Error::NonFinite { what: "initial guess of CG" });
    }
    let max_iter = params.max_iter.unwrap_or(10 * n);
    let b_norm = b.norm_l2();
    if b_norm == 0.0 {
        x.fill(0.0);
        return Ok(CgInfo { iterations: 0, relative_residual: 0.0 });
    }

    let mut r = Col::<f64>::zeros(n);
    let mut q = Col::<f64>::zeros(n); // A p, and A x for true residuals
    let mut z = Col::<f64>::zeros(n); // M^{-1} r
    let mut p = Col::<f64>::zeros(n);

    // r = b - A x (r = b when x = 0: no operator application needed).
    let mut res = if x.as_ref().iter().all(|&v| v == 0.0) {
        r.copy_from(b);
        1.0
    } else {
        true_residual(op, b, x.as_ref(), r.as_mut(), q.as_mut(), b_norm)?
    };
    if res <= tol {
        return Ok(CgInfo { iterations: 0, relative_residual: res });
    }

    let mut rz = precondition(precond, r.as_ref(), z.as_mut())?;
    p.copy_from(&z);
    for k in 1..=max_iter {
        op.apply(p.as_ref(), q.as_mut());
        let pq = dot(p.as_ref(), q.as_ref());
        if !pq.is_finite() {
            return Err(Error::NonFinite { what: "CG operator output" });
        }
        if pq <= 0.0 {
            let pp = dot(p.as_ref(), p.as_ref());
            return Err(Error::NotPositiveDefinite { what: "CG operator", value: pq / pp });
        }
        let alpha = rz / pq;
        zip!(x.as_mut(), p.as_ref()).for_each(|unzip!(x, p)| *x += alpha * *p);
        zip!(r.as_mut(), q.as_ref()).for_each(|unzip!(r, q)| *r -= alpha * *q);
        res = r.norm_l2() / b_norm;
        if res <= tol {
            // The recursive residual drifts from b - A x in floating point:
            // accept only on the true residual, otherwise continue from it
            // (residual replacement; the search direction is kept).
            res = true_residual(op, b, x.as_ref(), r.as_mut(), q.as_mut(), b_norm)?;
            if res <= tol {
                return Ok(CgInfo { iterations: k, relative_residual: res });
            }
        }
        let rz_new = precondition(precond, r.as_ref(), z.as_mut())?;
        let beta = rz_new / rz;
        rz = rz_new;
        zip!(p.as_mut(), z.as_ref()).for_each(|unzip!(p, z)| *p = *z + beta * *p);
    }
    let residual = true_residual(op, b, x.as_ref(), r.as_mut(), q.as_mut(), b_norm)?;
    Err(Error::NoConvergence { what: "conjugate gradient", iterations: max_iter, residual })
}

fn dot(a: ColRef<'_, f64>, b: ColRef<'_, f64>) -> f64 {
    inner_prod(a.transpose(), Conj::No, b, Conj::No)
}

/// Writes `r = b - A x` and returns `||r|| / ||b||`.
fn true_residual<O: LinearOperator + ?Sized>(
    op: &O,
    b: ColRef<'_, f64>,
    x: ColRef<'_, f64>,
    mut r: ColMut<'_, f64>,
    mut ax: ColMut<'_, f64>,
    b_norm: f64,
) -> Result<f64> {
    op.apply(x, ax.as_mut());
    zip!(r.as_mut(), b, ax.as_ref()).for_each(|unzip!(r, b, ax)| *r = *b - *ax);
    let res = r.norm_l2() / b_norm;
    if res.is_finite() { Ok(res) } else { Err(Error::NonFinite { what: "CG operator output" }) }
}

/// Writes `z = M^{-1} r` and returns `r^T z` (> 0 for an SPD preconditioner).
fn precondition(precond: Option<&dyn LinearOperator>, r: ColRef<'_, f64>, mut z: ColMut<'_, f64>) -> Result<f64> {
    match precond {
        None => {
            z.copy_from(r);
            Ok(dot(r, r))
        }
        Some(m) => {
            m.apply(r, z.as_mut());
            let rz = dot(r, z.as_ref());
            if !rz.is_finite() {
                return Err(Error::NonFinite { what: "CG preconditioner output" });
            }
            if rz <= 0.0 {
                return Err(Error::NotPositiveDefinite { what: "CG preconditioner", value: rz / dot(r, r) });
            }
            Ok(rz)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Jacobi;
    use faer::{Mat, Par};

    fn laplacian(n: usize, shift: f64) -> Mat<f64> {
        Mat::from_fn(n, n, |i, j| {
            if i == j {
                2.0 + shift
            } else if i.abs_diff(j) == 1 {
                -1.0
            } else {
                0.0
            }
        })
    }

    #[test]
    fn solves_spd_systems_of_all_sizes() {
        faer::set_global_parallelism(Par::Seq);
        for n in [1usize, 2, 3, 10, 64] {
            let a = laplacian(n, 0.01);
            let b = Col::from_fn(n, |i| ((i * 7) % 5) as f64 - 2.0 + 0.5);
            let (x, info) = conjugate_gradient(&a, b.as_ref(), None, CgParams::default()).unwrap();
            let res = (&a * &x - &b).norm_l2() / b.norm_l2();
            assert!(res <= 1e-10, "n = {n}: {res}");
            assert!((res - info.relative_residual).abs() <= 1e-14);
            assert!(info.iterations >= 1 && info.iterations <= 10 * n);
        }
    }

    #[test]
    fn zero_rhs_and_empty_system() {
        let a = laplacian(4, 0.0);
        let x0 = Col::from_fn(4, |i| i as f64);
        let (x, info) = conjugate_gradient(&a, Col::zeros(4).as_ref(), Some(x0.as_ref()), CgParams::default()).unwrap();
        assert_eq!((x, info), (Col::zeros(4), CgInfo { iterations: 0, relative_residual: 0.0 }));
        let empty = Mat::<f64>::zeros(0, 0);
        let (x, _) = conjugate_gradient(&empty, Col::zeros(0).as_ref(), None, CgParams::default()).unwrap();
        assert_eq!(x.nrows(), 0);
    }

    #[test]
    fn indefinite_operator_is_reported() {
        let mut a = laplacian(5, 0.0);
        a[(2, 2)] = -10.0;
        let b = Col::from_fn(5, |i| if i == 2 { 1.0 } else { 0.0 });
        let err = conjugate_gradient(&a, b.as_ref(), None, CgParams::default()).unwrap_err();
        assert!(matches!(err, Error::NotPositiveDefinite { value, .. } if value == -10.0), "{err:?}");
    }

    #[test]
    fn non_finite_inputs_are_reported() {
        let a = laplacian(3, 0.0);
        let bad = Col::from_fn(3, |i| if i == 1 { f64::NAN } else { 1.0 });
        let good = Col::from_fn(3, |_| 1.0);
        let p = CgParams::default();
        assert!(matches!(conjugate_gradient(&a, bad.as_ref(), None, p), Err(Error::NonFinite { .. })));
        assert!(matches!(conjugate_gradient(&a, good.as_ref(), Some(bad.as_ref()), p), Err(Error::NonFinite { .. })));
        let mut nan_op = a.clone();
        nan_op[(0, 0)] = f64::NAN;
        assert!(matches!(conjugate_gradient(&nan_op, good.as_ref(), None, p), Err(Error::NonFinite { .. })));
    }

    #[test]
    fn no_convergence_reports_true_residual_and_keeps_iterate() {
        faer::set_global_parallelism(Par::Seq);
        let n = 50;
        let a = laplacian(n, 0.0);
        let b = Col::from_fn(n, |_| 1.0);
        let mut x = Col::zeros(n);
        let err = conjugate_gradient_in_place(&a, None, b.as_ref(), x.as_mut(), CgParams::default().max_iter(3));
        let Err(Error::NoConvergence { iterations: 3, residual, .. }) = err else { panic!("{err:?}") };
        let true_res = (&a * &x - &b).norm_l2() / b.norm_l2();
        // (CG residuals are not monotone: only the A-norm error decreases.)
        assert!((residual - true_res).abs() < 1e-14, "{residual} vs {true_res}");
        assert!(residual.is_finite() && residual > 1e-10);
    }

    #[test]
    fn max_iter_zero_with_good_guess_converges() {
        let a = laplacian(3, 1.0);
        let x_true = Col::from_fn(3, |i| i as f64 + 1.0);
        let b = &a * &x_true;
        let (x, info) =
            conjugate_gradient(&a, b.as_ref(), Some(x_true.as_ref()), CgParams::default().max_iter(0)).unwrap();
        assert_eq!((x, info.iterations), (x_true, 0));
    }

    #[test]
    fn jacobi_is_exact_for_diagonal_and_checks_positivity() {
        let a = Mat::from_fn(6, 6, |i, j| if i == j { 10f64.powi(i as i32 - 3) } else { 0.0 });
        let m = Jacobi::from_matrix(a.as_ref()).unwrap();
        let b = Col::from_fn(6, |i| i as f64 + 1.0);
        let (x, info) = preconditioned_conjugate_gradient(&a, &m, b.as_ref(), None, CgParams::default()).unwrap();
        assert_eq!(info.iterations, 1);
        assert!(info.relative_residual <= 1e-14, "{x:?}");
        // A non-SPD "preconditioner" is caught.
        let neg = -Mat::<f64>::identity(6, 6);
        let err = preconditioned_conjugate_gradient(&a, &neg, b.as_ref(), None, CgParams::default()).unwrap_err();
        assert!(matches!(err, Error::NotPositiveDefinite { what: "CG preconditioner", .. }));
    }

    #[test]
    fn dyn_operator_works() {
        let a = laplacian(8, 0.5);
        let op: Box<dyn LinearOperator> = Box::new(a.clone());
        let b = Col::from_fn(8, |i| i as f64);
        let (x, _) = conjugate_gradient(op.as_ref(), b.as_ref(), None, CgParams::default()).unwrap();
        assert!((&a * &x - &b).norm_l2() <= 1e-10 * b.norm_l2());
    }
}
