use faer::linalg::matmul::dot::inner_prod;
use faer::{Col, ColMut, ColRef, Conj, unzip, zip};

use crate::{Error, Result};

/// A twice-differentiable objective $f: \mathbb{R}^n \to \mathbb{R}$ for
/// [`tron`], given by its value, gradient and Hessian-vector product.
///
/// Call protocol (LIBLINEAR's): [`grad`](Self::grad) is only called at the
/// point of the last [`fun`](Self::fun) call, and [`hv`](Self::hv) uses the
/// curvature of the last `grad` point. An implementation should therefore
/// cache what `hv` needs (e.g. second derivatives of a loss) in `grad`, never
/// in `fun`: `fun` is also evaluated at trial points that TRON may reject.
///
/// # Example
/// A separable quadratic $f(w) = \sum_i \tfrac{c_i}{2} (w_i - 1)^2$:
/// ```
/// use faer::{Col, ColMut, ColRef};
/// use okr_linalg::{TronObjective, TronParams, tron};
///
/// struct Quad(Vec<f64>);
/// impl TronObjective for Quad {
///     fn dim(&self) -> usize { self.0.len() }
///     fn fun(&mut self, w: ColRef<'_, f64>) -> f64 {
///         (0..self.dim()).map(|i| 0.5 * self.0[i] * (w[i] - 1.0).powi(2)).sum()
///     }
///     fn grad(&mut self, w: ColRef<'_, f64>, mut g: ColMut<'_, f64>) {
///         for i in 0..self.dim() { g[i] = self.0[i] * (w[i] - 1.0); }
///     }
///     fn hv(&self, s: ColRef<'_, f64>, mut out: ColMut<'_, f64>) {
///         for i in 0..self.dim() { out[i] = self.0[i] * s[i]; }
///     }
/// }
///
/// let mut obj = Quad(vec![1.0, 10.0, 100.0]);
/// let mut w = Col::zeros(3);
/// let info = tron(&mut obj, w.as_mut(), TronParams::default().eps(1e-8).max_iter(50).max_cg_iter(10))?;
/// assert!((0..3).all(|i| (w[i] - 1.0).abs() < 1e-6));
/// assert!(info.iterations >= 1);
/// Ok::<(), okr_linalg::Error>(())
/// ```
pub trait TronObjective {
    /// Dimension $n$ of the variable.
    fn dim(&self) -> usize;

    /// Returns $f(w)$.
    fn fun(&mut self, w: ColRef<'_, f64>) -> f64;

    /// Writes $\nabla f(w)$ into `g`, for the `w` of the last [`fun`](Self::fun)
    /// call, and caches the curvature used by [`hv`](Self::hv).
    fn grad(&mut self, w: ColRef<'_, f64>, g: ColMut<'_, f64>);

    /// Writes $\nabla^2 f(w) \, s$ into `out`, at the `w` of the last
    /// [`grad`](Self::grad) call. Must be symmetric positive semi-definite.
    fn hv(&self, s: ColRef<'_, f64>, out: ColMut<'_, f64>);
}

/// Parameters of [`tron`] (LIBLINEAR's trust-region Newton method).
///
/// | Name | Default | Purpose | Range |
/// |---|---|---|---|
/// | `eps` | `1e-2` | stop when $\lVert\nabla f(w)\rVert \le \mathrm{eps}\,\lVert\nabla f(w_0)\rVert$ | `>= 0` |
/// | `max_iter` | `10` | Newton iterations (accepted steps) | `>= 1` |
/// | `max_cg_iter` | `20` | Hessian-vector products per Steihaug CG solve | `>= 1` |
/// | `cg_tol` | `0.1` | inner CG stops when $\lVert r\rVert \le \mathrm{cg\_tol}\,\lVert\nabla f\rVert$ | `(0, 1)` |
///
/// # Example
/// ```
/// let p = okr_linalg::TronParams::default().eps(1e-4).max_iter(5).max_cg_iter(30);
/// assert_eq!((p.eps, p.max_iter, p.max_cg_iter), (1e-4, 5, 30));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TronParams {
    /// Relative gradient-norm tolerance.
    pub eps: f64,
    /// Maximum number of Newton iterations.
    pub max_iter: usize,
    /// Maximum number of CG iterations per Newton iteration.
    pub max_cg_iter: usize,
    /// Relative residual at which the inner CG stops.
    pub cg_tol: f64,
}

impl Default for TronParams {
    fn default() -> Self {
        Self { eps: 1e-2, max_iter: 10, max_cg_iter: 20, cg_tol: 0.1 }
    }
}

impl TronParams {
    /// Sets the relative gradient-norm tolerance.
    ///
    /// # Example
    /// ```
    /// assert_eq!(okr_linalg::TronParams::default().eps(1e-6).eps, 1e-6);
    /// ```
    pub fn eps(mut self, eps: f64) -> Self {
        self.eps = eps;
        self
    }

    /// Sets the maximum number of Newton iterations.
    ///
    /// # Example
    /// ```
    /// assert_eq!(okr_linalg::TronParams::default().max_iter(3).max_iter, 3);
    /// ```
    pub fn max_iter(mut self, max_iter: usize) -> Self {
        self.max_iter = max_iter;
        self
    }

    /// Sets the maximum number of CG iterations per Newton iteration.
    ///
    /// # Example
    /// ```
    /// assert_eq!(okr_linalg::TronParams::default().max_cg_iter(5).max_cg_iter, 5);
    /// ```
    pub fn max_cg_iter(mut self, max_cg_iter: usize) -> Self {
        self.max_cg_iter = max_cg_iter;
        self
    }
}

/// What a [`tron`] run did.
///
/// # Example
/// See [`tron`].
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct TronInfo {
    /// Accepted Newton steps.
    pub iterations: usize,
    /// Hessian-vector products (inner CG iterations) in total.
    pub cg_iterations: usize,
    /// Objective value at the returned point.
    pub fval: f64,
    /// $\lVert\nabla f\rVert$ at the start.
    pub initial_grad_norm: f64,
    /// $\lVert\nabla f\rVert$ at the returned point.
    pub grad_norm: f64,
}

const ETA0: f64 = 1e-4;
const ETA1: f64 = 0.25;
const ETA2: f64 = 0.75;
const SIGMA1: f64 = 0.25;
const SIGMA2: f64 = 0.5;
const SIGMA3: f64 = 4.0;

/// Minimises a smooth convex `obj` by trust-region Newton (TRON; Lin, Weng
/// and Keerthi 2008, as in LIBLINEAR), starting from `w` and leaving the
/// minimiser in `w`.
///
/// Each Newton iteration solves $\nabla^2 f\, s = -\nabla f$ approximately by
/// Steihaug's truncated CG inside $\lVert s\rVert \le \Delta$ (stopping at
/// relative residual `cg_tol`, at the boundary or after `max_cg_iter`
/// products), then accepts the step if the actual reduction is at least
/// $\eta_0 = 10^{-4}$ times the predicted one and updates $\Delta$ by
/// LIBLINEAR's rules ($\eta_1 = 0.25$, $\eta_2 = 0.75$, $\sigma = 0.25, 0.5, 4$).
/// It stops at $\lVert\nabla f(w)\rVert \le \mathrm{eps}\,\lVert\nabla f(w_0)\rVert$,
/// after `max_iter` accepted steps, or when no further progress is measurable
/// (both reductions below $10^{-12} |f|$). Reaching `max_iter` is not an error:
/// TRON is used as an inexact inner solver.
///
/// # Errors
/// [`Error::NonFinite`] if $f$, $\nabla f$ or a Hessian-vector product is NaN
/// or infinite at the start or at an accepted point.
///
/// # Panics
/// If `w.nrows() != obj.dim()`, `eps < 0` or `max_cg_iter == 0`.
///
/// # Example
/// One-dimensional logistic regression $f(w) = \sum_i \log(1 + e^{-y_i x_i w}) + \tfrac12 w^2$:
/// ```
/// use faer::{Col, ColMut, ColRef};
/// use okr_linalg::{TronObjective, TronParams, tron};
///
/// struct Lr { x: Vec<f64>, y: Vec<f64>, d: Vec<f64> }
/// impl TronObjective for Lr {
///     fn dim(&self) -> usize { 1 }
///     fn fun(&mut self, w: ColRef<'_, f64>) -> f64 {
///         let loss: f64 = self.x.iter().zip(&self.y).map(|(x, y)| (1.0 + (-y * x * w[0]).exp()).ln()).sum();
///         loss + 0.5 * w[0] * w[0]
///     }
///     fn grad(&mut self, w: ColRef<'_, f64>, mut g: ColMut<'_, f64>) {
///         g[0] = w[0];
///         for (i, (x, y)) in self.x.iter().zip(&self.y).enumerate() {
///             let s = 1.0 / (1.0 + (-y * x * w[0]).exp());
///             g[0] += (s - 1.0) * y * x;
///             self.d[i] = s * (1.0 - s); // curvature cached at the gradient point
///         }
///     }
///     fn hv(&self, s: ColRef<'_, f64>, mut out: ColMut<'_, f64>) {
///         out[0] = s[0] + self.x.iter().zip(&self.d).map(|(x, d)| d * x * x * s[0]).sum::<f64>();
///     }
/// }
///
/// let mut obj = Lr { x: vec![1.0, 2.0, -1.0, 0.5], y: vec![1.0, 1.0, -1.0, -1.0], d: vec![0.0; 4] };
/// let mut w = Col::zeros(1);
/// let info = tron(&mut obj, w.as_mut(), TronParams::default().eps(1e-6).max_iter(100))?;
/// assert!(info.grad_norm <= 1e-6 * info.initial_grad_norm);
/// assert!(w[0] > 0.0);
/// Ok::<(), okr_linalg::Error>(())
/// ```
#[track_caller]
pub fn tron<O: TronObjective + ?Sized>(obj: &mut O, mut w: ColMut<'_, f64>, params: TronParams) -> Result<TronInfo> {
    let n = obj.dim();
    assert_eq!(w.nrows(), n, "w must have length obj.dim()");
    assert!(params.eps >= 0.0, "TRON needs eps >= 0, got {}", params.eps);
    assert!(params.max_cg_iter >= 1, "TRON needs max_cg_iter >= 1");

    let mut g = Col::<f64>::zeros(n);
    let mut s = Col::<f64>::zeros(n);
    let mut r = Col::<f64>::zeros(n);
    let mut d = Col::<f64>::zeros(n);
    let mut hd = Col::<f64>::zeros(n);
    let mut w_new = Col::<f64>::zeros(n);

    let mut fval = obj.fun(w.as_ref());
    obj.grad(w.as_ref(), g.as_mut());
    let g0 = g.norm_l2();
    if !fval.is_finite() || !g0.is_finite() {
        return Err(Error::NonFinite { what: "TRON objective or gradient at the starting point" });
    }
    let mut info = TronInfo { iterations: 0, cg_iterations: 0, fval, initial_grad_norm: g0, grad_norm: g0 };
    let mut gnorm = g0;
    let mut delta = g0;
    let mut first = true;
    while info.iterations < params.max_iter && gnorm > params.eps * g0 && gnorm > 0.0 {
        info.cg_iterations +=
            steihaug_cg(obj, delta, g.as_ref(), s.as_mut(), r.as_mut(), d.as_mut(), hd.as_mut(), params)?;
        zip!(w_new.as_mut(), w.as_ref(), s.as_ref()).for_each(|unzip!(wn, w, s)| *wn = *w + *s);
        let gs = dot(g.as_ref(), s.as_ref());
        let prered = -0.5 * (gs - dot(s.as_ref(), r.as_ref()));
        let fnew = obj.fun(w_new.as_ref());
        let actred = fval - fnew;
        let snorm = s.norm_l2();
        if first {
            delta = delta.min(snorm);
            first = false;
        }
        let alpha = if fnew - fval - gs <= 0.0 { SIGMA3 } else { SIGMA1.max(-0.5 * gs / (fnew - fval - gs)) };
        if !fnew.is_finite() || actred < ETA0 * prered {
            delta = (alpha.max(SIGMA1) * snorm).min(SIGMA2 * delta);
        } else if actred < ETA1 * prered {
            delta = (SIGMA1 * delta).max((alpha * snorm).min(SIGMA2 * delta));
        } else if actred < ETA2 * prered {
            delta = (SIGMA1 * delta).max((alpha * snorm).min(SIGMA3 * delta));
        } else {
            delta = delta.max((alpha * snorm).min(SIGMA3 * delta));
        }
        if fnew.is_finite() && actred > ETA0 * prered {
            w.copy_from(&w_new);
            fval = fnew;
            obj.grad(w.as_ref(), g.as_mut());
            gnorm = g.norm_l2();
            if !gnorm.is_finite() {
                return Err(Error::NonFinite { what: "TRON gradient" });
            }
            info.iterations += 1;
        }
        // No measurable progress left (LIBLINEAR's guards).
        if fval < -1e32 || (actred.abs() <= 0.0 && prered <= 0.0) {
            break;
        }
        if actred.abs() <= 1e-12 * fval.abs() && prered.abs() <= 1e-12 * fval.abs() {
            break;
        }
        if delta <= 0.0 || !delta.is_finite() {
            break;
        }
    }
    // Keep the last `fun` call at the returned point so that a caller reading
    // cached quantities (or calling `grad`) sees the accepted iterate.
    info.fval = obj.fun(w.as_ref());
    info.grad_norm = gnorm;
    Ok(info)
}

/// Steihaug's truncated CG for $\nabla^2 f\, s = -g$ inside $\lVert s\rVert \le \Delta$.
/// Leaves the step in `s` and the residual $-g - \nabla^2 f\, s$ in `r`;
/// returns the number of Hessian-vector products.
#[allow(clippy::too_many_arguments)]
fn steihaug_cg<O: TronObjective + ?Sized>(
    obj: &O,
    delta: f64,
    g: ColRef<'_, f64>,
    mut s: ColMut<'_, f64>,
    mut r: ColMut<'_, f64>,
    mut d: ColMut<'_, f64>,
    mut hd: ColMut<'_, f64>,
    params: TronParams,
) -> Result<usize> {
    s.fill(0.0);
    zip!(r.as_mut(), g).for_each(|unzip!(r, g)| *r = -*g);
    d.copy_from(r.as_ref());
    let mut rtr = dot(r.as_ref(), r.as_ref());
    let cgtol = params.cg_tol * g.norm_l2();
    let mut it = 0;
    while rtr.sqrt() > cgtol && it < params.max_cg_iter {
        it += 1;
        obj.hv(d.as_ref(), hd.as_mut());
        let dhd = dot(d.as_ref(), hd.as_ref());
        if !dhd.is_finite() {
            return Err(Error::NonFinite { what: "TRON Hessian-vector product" });
        }
        let mut alpha = rtr / dhd;
        // A direction of zero (or, through rounding, negative) curvature goes to the boundary.
        let to_boundary = dhd <= 0.0;
        if !to_boundary {
            zip!(s.as_mut(), d.as_ref()).for_each(|unzip!(s, d)| *s += alpha * *d);
        }
        if to_boundary || s.norm_l2() > delta {
            if !to_boundary {
                zip!(s.as_mut(), d.as_ref()).for_each(|unzip!(s, d)| *s -= alpha * *d);
            }
            let std = dot(s.as_ref(), d.as_ref());
            let sts = dot(s.as_ref(), s.as_ref());
            let dtd = dot(d.as_ref(), d.as_ref());
            let dsq = delta * delta;
            let rad = (std * std + dtd * (dsq - sts)).max(0.0).sqrt();
            alpha = if std >= 0.0 { (dsq - sts) / (std + rad) } else { (rad - std) / dtd };
            zip!(s.as_mut(), d.as_ref()).for_each(|unzip!(s, d)| *s += alpha * *d);
            zip!(r.as_mut(), hd.as_ref()).for_each(|unzip!(r, hd)| *r -= alpha * *hd);
            break;
        }
        zip!(r.as_mut(), hd.as_ref()).for_each(|unzip!(r, hd)| *r -= alpha * *hd);
        let rnew = dot(r.as_ref(), r.as_ref());
        let beta = rnew / rtr;
        zip!(d.as_mut(), r.as_ref()).for_each(|unzip!(d, r)| *d = *r + beta * *d);
        rtr = rnew;
    }
    Ok(it)
}

fn dot(a: ColRef<'_, f64>, b: ColRef<'_, f64>) -> f64 {
    inner_prod(a.transpose(), Conj::No, b, Conj::No)
}

#[cfg(test)]
mod tests {
    use super::*;
    use faer::Mat;
    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// $f(w) = \tfrac12 w^\top A w - b^\top w$ with a dense SPD `A`.
    struct Quadratic {
        a: Mat<f64>,
        b: Col<f64>,
    }

    impl TronObjective for Quadratic {
        fn dim(&self) -> usize {
            self.b.nrows()
        }
        fn fun(&mut self, w: ColRef<'_, f64>) -> f64 {
            let aw = &self.a * w;
            0.5 * dot(w, aw.as_ref()) - dot(self.b.as_ref(), w)
        }
        fn grad(&mut self, w: ColRef<'_, f64>, mut g: ColMut<'_, f64>) {
            g.copy_from(&self.a * w - &self.b);
        }
        fn hv(&self, s: ColRef<'_, f64>, mut out: ColMut<'_, f64>) {
            out.copy_from(&self.a * s);
        }
    }

    /// L2-regularised logistic regression with curvature cached in `grad`;
    /// `fun_calls_since_grad` checks the call protocol.
    struct Logistic {
        x: Mat<f64>,
        y: Vec<f64>,
        lambda: f64,
        curv: Vec<f64>,
        last_fun: Option<Col<f64>>,
    }

    impl Logistic {
        fn margins(&self, w: ColRef<'_, f64>) -> Col<f64> {
            &self.x * w
        }
    }

    impl TronObjective for Logistic {
        fn dim(&self) -> usize {
            self.x.ncols()
        }
        fn fun(&mut self, w: ColRef<'_, f64>) -> f64 {
            self.last_fun = Some(w.to_owned());
            let z = self.margins(w);
            let loss: f64 = (0..self.y.len())
                .map(|i| {
                    let t = self.y[i] * z[i];
                    if t >= 0.0 { (-t).exp().ln_1p() } else { -t + t.exp().ln_1p() }
                })
                .sum();
            loss + 0.5 * self.lambda * dot(w, w)
        }
        fn grad(&mut self, w: ColRef<'_, f64>, mut g: ColMut<'_, f64>) {
            assert_eq!(self.last_fun.as_ref().map(|c| c.as_ref()), Some(w), "grad must follow fun at the same point");
            let z = self.margins(w);
            let mut coef = Col::<f64>::zeros(self.y.len());
            for i in 0..self.y.len() {
                let sig = 1.0 / (1.0 + (-self.y[i] * z[i]).exp());
                coef[i] = (sig - 1.0) * self.y[i];
                self.curv[i] = sig * (1.0 - sig);
            }
            g.copy_from(self.x.transpose() * &coef + self.lambda * w);
        }
        fn hv(&self, s: ColRef<'_, f64>, mut out: ColMut<'_, f64>) {
            let mut xs = &self.x * s;
            for i in 0..self.y.len() {
                xs[i] *= self.curv[i];
            }
            out.copy_from(self.x.transpose() * &xs + self.lambda * s);
        }
    }

    #[test]
    fn quadratic_reaches_the_linear_solve() {
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        for n in [1, 3, 10, 40] {
            let m = Mat::from_fn(n, n, |_, _| rng.random::<f64>() - 0.5);
            let a = &m * m.transpose() + Mat::<f64>::identity(n, n) * 0.1;
            let b = Col::from_fn(n, |_| rng.random::<f64>() - 0.5);
            let exact = a.llt(faer::Side::Lower).unwrap();
            let x_star = faer::linalg::solvers::Solve::solve(&exact, &b);
            let mut obj = Quadratic { a, b };
            let mut w = Col::zeros(n);
            let info =
                tron(&mut obj, w.as_mut(), TronParams::default().eps(1e-8).max_iter(500).max_cg_iter(4 * n)).unwrap();
            let err = (&w - &x_star).norm_l2() / x_star.norm_l2();
            // TRON also stops when the reductions fall below 1e-12 |f| (LIBLINEAR's guard),
            // which bounds the attainable accuracy.
            assert!(err < 1e-5, "n = {n}: relative error {err}, {info:?}");
        }
    }

    #[test]
    fn logistic_gradient_vanishes_and_objective_decreases() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        for (n, d) in [(20, 3), (200, 15)] {
            let x = Mat::from_fn(n, d, |_, _| rng.random::<f64>() * 2.0 - 1.0);
            let w_true = Col::from_fn(d, |_| rng.random::<f64>() * 4.0 - 2.0);
            let z = &x * &w_true;
            let y: Vec<f64> =
                (0..n).map(|i| if z[i] + 0.3 * (rng.random::<f64>() - 0.5) > 0.0 { 1.0 } else { -1.0 }).collect();
            let mut obj = Logistic { x, y, lambda: 0.5, curv: vec![0.0; n], last_fun: None };
            let mut w = Col::zeros(d);
            let f0 = obj.fun(w.as_ref());
            let info = tron(&mut obj, w.as_mut(), TronParams::default().eps(1e-6).max_iter(100)).unwrap();
            assert!(info.fval < f0);
            let mut g = Col::zeros(d);
            obj.fun(w.as_ref());
            obj.grad(w.as_ref(), g.as_mut());
            assert!(g.norm_l2() <= 1e-6 * info.initial_grad_norm * 1.0001, "{info:?}");
            // Perturbations do not decrease the objective (a minimum, not a saddle).
            for j in 0..d {
                for h in [1e-3, -1e-3] {
                    let mut wp = w.clone();
                    wp[j] += h;
                    assert!(obj.fun(wp.as_ref()) >= info.fval - 1e-12);
                }
            }
        }
    }

    #[test]
    fn max_iter_limits_accepted_steps() {
        let n = 30;
        let a = Mat::from_fn(n, n, |i, j| if i == j { 1.0 + (i * i) as f64 } else { 0.0 });
        let mut obj = Quadratic { a, b: Col::from_fn(n, |_| 1.0) };
        let mut w = Col::zeros(n);
        let info = tron(&mut obj, w.as_mut(), TronParams::default().eps(0.0).max_iter(2).max_cg_iter(1)).unwrap();
        assert!(info.iterations <= 2);
        assert!(info.cg_iterations >= 1);
        assert!(info.fval < 0.0);
    }
}
