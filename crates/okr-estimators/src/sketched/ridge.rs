//! The input side's ridge system $B = A^\top A + n\lambda\, R K R^\top$
//! `(m, m)` of the sketched and Nystroem fits, with $A = K R^\top$ `(n, m)`
//! ($A = K_{nm}$, $R K R^\top = K_{mm}$ for Nystroem), applied as
//! $B^{-1}$ (or its pseudo-inverse) to right-hand sides $A^\top T$.

use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, MatRef, Par};
use okr_linalg::{Cholesky, JitterPolicy, profile};

use super::fit::{pivoted_cholesky_or_none, pivots_pass};
use crate::{Error, Result};

/// Smallest relative Cholesky pivot of $B$, $\min L_{ii}^2 / \max L_{ii}^2$,
/// for which $B^{-1}$ is applied directly (see [`RidgeSystem`]).
///
/// The pivots $L_{ii}^2$ are Schur complements of $B$, so they lie in
/// $[\lambda_{\min}(B), \lambda_{\max}(B)]$ and the ratio is at least
/// $1/\kappa(B)$: a cheap necessary condition for $\kappa(B) < 10^{10}$.
/// Measured on Nystroem problems (600 points uniform in $[-1, 1]^3$, 50 or
/// 150 anchors, Gaussian kernels $e^{-\gamma \lVert x - x' \rVert^2}$ with
/// $\gamma \in \{0.1, 0.5, 2, 8\}$, $\lambda$ from $10^{-1}$ to
/// $10^{-12}$): the direct and whitened paths' test predictions differed by
/// at most $5 \cdot 10^{-9}$ (relative) where the ratio was in
/// $[10^{-10}, 10^{-8}]$, by $2 \cdot 10^{-7}$ at $2 \cdot 10^{-11}$ and by
/// $10^{-6}$ or more below; where a tiny $\lambda$ lets $A^\top A$ dominate,
/// the ratio levels off near $2 \cdot 10^{-8}$ and the two paths differ by
/// up to $6 \cdot 10^{-8}$, the accuracy both have there.
pub(crate) const DIRECT_PIVOT_RTOL: f64 = 1e-10;

/// Where the ridge system finds $R K R^\top$ `(m, m)`.
pub(crate) enum SketchGram<'a> {
    /// Held (the sketched fits' streamed sum): $B$ is formed in a third
    /// `m x m` buffer beside $A^\top A$ and it.
    Held(Mat<f64>),
    /// Built on demand (Nystroem's $K_{mm}$ from the anchors, $O(m^2 d)$):
    /// $B$ is formed in the built buffer, so only two `m x m` matrices are
    /// alive until the whitening fallback needs a second build.
    Built(&'a dyn Fn() -> Mat<f64>),
}

impl SketchGram<'_> {
    /// $R K R^\top$ for the whitening path.
    fn into_matrix(self) -> Mat<f64> {
        match self {
            SketchGram::Held(g) => g,
            SketchGram::Built(build) => build(),
        }
    }
}

/// $B^{-1}$ for $B = A^\top A + n\lambda\, R K R^\top$ `(m, m)` (or the
/// pseudo-inverse of the sketched estimator on the range of $R K R^\top$),
/// by one of two paths.
///
/// **Direct.** One Cholesky factorization $B = L L^\top$ ($m^3/3$ flops)
/// and two triangular solves per right-hand side ($2 m^2 k$ for `k`).
/// Taken when that factorization succeeds without jitter and its pivots
/// satisfy $\min L_{ii}^2 > \tau \max L_{ii}^2$ with
/// $\tau = \max($[`DIRECT_PIVOT_RTOL`]$, \mathrm{rtol})$.
///
/// **Whitened** (the stable Nystroem form, the fallback): with a whitening
/// $\Phi$ `(m, r)` of $R K R^\top$ ($\Phi^\top R K R^\top \Phi = I_r$ on
/// its numerical range) and the (implicit) features $F = A \Phi$ `(n, r)`,
/// $$K R^\top B^\dagger R = F (F^\top F + n\lambda I_r)^{-1} \Phi^\top R.$$
/// The `r x r` system is shifted by $n\lambda I$, so it is well conditioned
/// where $B$ (condition number up to about $\kappa(R K R^\top)$ times
/// $1 + \lVert K \rVert / (n\lambda)$) is not. $\Phi = L_K^{-\top}$ from a
/// Cholesky factor $R K R^\top = L_K L_K^\top$ when its pivots satisfy
/// $\min L_{ii}^2 > \mathrm{rtol} \max L_{ii}^2$ ($m^3/3$), otherwise
/// $\Phi = V_r \operatorname{diag}(w_r^{-1/2})$ from an eigendecomposition
/// dropping eigenvalues at or below `rtol * max` (the poster's
/// pseudo-inverse). $F$ is never formed: $F^\top F = \Phi^\top (A^\top A)
/// \Phi$ ($2 m^3$ with a Cholesky $\Phi$) and $F^\top T = \Phi^\top (A^\top
/// T)$; a right-hand side costs $4 m^2 k$.
///
/// With a Cholesky whitening the two paths are equal in exact arithmetic,
/// $\Phi (\Phi^\top A^\top A \Phi + n\lambda I)^{-1} \Phi^\top =
/// (A^\top A + n\lambda L_K L_K^\top)^{-1} = B^{-1}$, and the direct one
/// costs $m^3/3 + 2 m^2 k$ flops instead of $8 m^3/3 + 4 m^2 k$. When
/// $R K R^\top$ has eigenvalues below `rtol * max` but $B$ passes the pivot
/// test (a large $\lVert K \rVert / (n\lambda)$), the direct path keeps
/// those directions: it returns the estimator's $B^{-1}$ rather than the
/// truncated pseudo-inverse.
pub(crate) enum RidgeSystem {
    /// $B = L L^\top$.
    Direct(Cholesky),
    /// $\Phi$ and the Cholesky factor of $F^\top F + n\lambda I_r$.
    Whitened { whitening: Whitening, chol: Cholesky },
}

/// A whitening $\Phi$ of $R K R^\top$ (see [`RidgeSystem`]).
pub(crate) enum Whitening {
    /// $\Phi = L^{-\top}$.
    Cholesky(Cholesky),
    /// $\Phi$ explicit.
    Eigen(Mat<f64>),
}

impl Whitening {
    /// Columns of $\Phi$ (the rank kept).
    fn rank(&self) -> usize {
        match self {
            Whitening::Cholesky(c) => c.dim(),
            Whitening::Eigen(phi) => phi.ncols(),
        }
    }

    /// Rows of $\Phi$ (the sketch size).
    fn dim(&self) -> usize {
        match self {
            Whitening::Cholesky(c) => c.dim(),
            Whitening::Eigen(phi) => phi.nrows(),
        }
    }

    /// $\Phi = L^{-\top}$ when the Cholesky pivots of `rkr` satisfy
    /// $\min L_{ii}^2 > \mathrm{rtol} \max L_{ii}^2$, otherwise
    /// $V_r \operatorname{diag}(w_r^{-1/2})$ from an eigendecomposition.
    pub(crate) fn new(rkr: MatRef<'_, f64>, rtol: f64, lambda: f64) -> Result<Self> {
        let m = rkr.nrows() as f64;
        let mut phase = profile::phase("whitening (Cholesky)", m * m * m / 3.0);
        Ok(match pivoted_cholesky_or_none(rkr, rtol, lambda) {
            Some(c) => Whitening::Cholesky(c),
            None => {
                // The failed Cholesky and an eigendecomposition: no flop count claimed.
                phase.set_flops(0.0);
                drop(phase);
                let _p = profile::phase("whitening (eigen)", 0.0);
                let e = okr_linalg::eigh(rkr)?;
                let w = e.values();
                let top = w.first().copied().unwrap_or(0.0);
                let r = if top > 0.0 { w.iter().take_while(|&&v| v > rtol * top).count() } else { 0 };
                if r == 0 {
                    return Err(Error::ZeroRank { what: "R_X K_X R_X^T", tol: rtol });
                }
                let v = e.vectors();
                Whitening::Eigen(Mat::from_fn(v.nrows(), r, |i, j| v[(i, j)] / w[j].sqrt()))
            }
        })
    }

    /// $\Phi^\top M$ `(r, k)` for `atm` $= M$ `(m, k)`, in place for a
    /// Cholesky whitening.
    fn apply_transpose(&self, mut atm: Mat<f64>) -> Mat<f64> {
        let par = Par::rayon(0);
        match self {
            Whitening::Cholesky(c) => {
                faer::linalg::triangular_solve::solve_lower_triangular_in_place(c.l(), atm.as_mut(), par);
                atm
            }
            Whitening::Eigen(phi) => {
                let mut out = Mat::zeros(phi.ncols(), atm.ncols());
                matmul(out.as_mut(), Accum::Replace, phi.transpose(), atm.as_ref(), 1.0, par);
                out
            }
        }
    }
}

#[cfg(test)]
thread_local! {
    /// Set by tests that compare the direct path with the whitening path.
    static WHITENED_ONLY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f` with the direct path disabled on this thread (tests only).
#[cfg(test)]
pub(crate) fn whitened_only<T>(f: impl FnOnce() -> T) -> T {
    WHITENED_ONLY.with(|w| w.set(true));
    let out = f();
    WHITENED_ONLY.with(|w| w.set(false));
    out
}

fn direct_allowed() -> bool {
    #[cfg(test)]
    {
        !WHITENED_ONLY.with(|w| w.get())
    }
    #[cfg(not(test))]
    {
        true
    }
}

impl RidgeSystem {
    /// From $A = K R^\top$ `(n, m)` and $R K R^\top$ (the in-memory
    /// reference fits); `form_phase` names the forming of $B$ in profiles.
    pub(crate) fn new(
        a: MatRef<'_, f64>,
        gram: SketchGram<'_>,
        form_phase: &'static str,
        ridge: f64,
        lambda: f64,
        rtol: f64,
    ) -> Result<Self> {
        let ata = okr_linalg::crossprod(a, Par::rayon(0));
        Self::from_cross_product(ata, gram, form_phase, ridge, lambda, rtol)
    }

    /// From the cross-product $A^\top A$ `(m, m)` (symmetric) and
    /// $R K R^\top$: the direct path when it passes its pivot test,
    /// otherwise the whitened one. Peak memory: three `m x m` matrices
    /// (two on the direct path with a [`SketchGram::Built`] Gram).
    pub(crate) fn from_cross_product(
        ata: Mat<f64>,
        gram: SketchGram<'_>,
        form_phase: &'static str,
        ridge: f64,
        lambda: f64,
        rtol: f64,
    ) -> Result<Self> {
        if direct_allowed()
            && let Some(chol) = Self::direct(&ata, &gram, form_phase, ridge, lambda, rtol.max(DIRECT_PIVOT_RTOL))
        {
            return Ok(RidgeSystem::Direct(chol));
        }
        let whitening = {
            let rkr = gram.into_matrix();
            Whitening::new(rkr.as_ref(), rtol, lambda)?
        };
        Self::from_whitened(whitening, ata, ridge, lambda)
    }

    /// $B = A^\top A + \mathrm{ridge}\, R K R^\top$ factored without jitter,
    /// if its pivots pass `pivot_rtol`.
    fn direct(
        ata: &Mat<f64>,
        gram: &SketchGram<'_>,
        form_phase: &'static str,
        ridge: f64,
        lambda: f64,
        pivot_rtol: f64,
    ) -> Option<Cholesky> {
        let m = ata.nrows();
        let mut b = match gram {
            SketchGram::Held(g) => g.clone(),
            SketchGram::Built(build) => build(),
        };
        {
            // Only the lower triangle is read by the factorization: one
            // multiply-add per entry of it.
            let _p = profile::phase(form_phase, (m * (m + 1)) as f64);
            for j in 0..m {
                let (bj, aj) = (b.col_mut(j).subrows_mut(j, m - j), ata.col(j).subrows(j, m - j));
                for (v, &a) in bj.iter_mut().zip(aj.iter()) {
                    *v = a + ridge * *v;
                }
            }
        }
        let mf = m as f64;
        let mut phase = profile::phase("system Cholesky", mf * mf * mf / 3.0);
        let no_jitter = JitterPolicy { max_attempts: 0, ..JitterPolicy::with_lambda(lambda) };
        let chol = Cholesky::factor_in_place(b, no_jitter, Par::rayon(0))
            .ok()
            .map(|(c, _)| c)
            .filter(|c| pivots_pass(c, pivot_rtol));
        if chol.is_none() {
            // A rejected attempt: its time stays in the phase, its flops are
            // not claimed (the whitened system's Cholesky follows).
            phase.set_flops(0.0);
        }
        chol
    }

    /// From a whitening of $R K R^\top$ and the cross-product $A^\top A$
    /// `(m, m)`, which is overwritten: with a Cholesky whitening no further
    /// `m x m` matrix is allocated besides the factorization's copy, so a
    /// streamed caller can drop $R K R^\top$ before accumulating $A^\top A$.
    fn from_whitened(whitening: Whitening, ata: Mat<f64>, ridge: f64, lambda: f64) -> Result<Self> {
        let par = Par::rayon(0);
        let (m, r) = (ata.nrows() as f64, whitening.rank() as f64);
        let forming = profile::phase(
            "system Phi^T A^T A Phi",
            match &whitening {
                // Two triangular solves with m right-hand sides.
                Whitening::Cholesky(_) => 2.0 * m * m * m,
                // Two GEMMs: (r x m)(m x m) and (r x m)(m x r).
                Whitening::Eigen(_) => 2.0 * r * m * m + 2.0 * r * r * m,
            },
        );
        // F^T F = Phi^T (A^T A) Phi: whiten the columns, then the rows (A^T A
        // is symmetric, so half^T = (A^T A) Phi).
        let half = whitening.apply_transpose(ata);
        // Phi^T (A^T A) Phi = Phi^T half^T: whiten the transposed view in place.
        let mut system = match &whitening {
            Whitening::Cholesky(c) => {
                let mut half = half;
                faer::linalg::triangular_solve::solve_lower_triangular_in_place(
                    c.l(),
                    half.as_mut().transpose_mut(),
                    par,
                );
                half
            }
            Whitening::Eigen(phi) => {
                let mut out = Mat::zeros(phi.ncols(), phi.ncols());
                matmul(out.as_mut(), Accum::Replace, phi.transpose(), half.transpose(), 1.0, par);
                out
            }
        };
        okr_linalg::products::symmetrize_in_place(system.as_mut());
        drop(forming);
        for j in 0..system.nrows() {
            system[(j, j)] += ridge;
        }
        let _p = profile::phase("system Cholesky", r * r * r / 3.0);
        let (chol, _) = Cholesky::factor_in_place(system, JitterPolicy::with_lambda(lambda), par)?;
        Ok(RidgeSystem::Whitened { whitening, chol })
    }

    /// Rank kept: `m` on the direct path, the whitening's rank otherwise.
    pub(crate) fn rank(&self) -> usize {
        match self {
            RidgeSystem::Direct(c) => c.dim(),
            RidgeSystem::Whitened { chol, .. } => chol.dim(),
        }
    }

    /// $B^{-1} M$ `(m, k)` for `atm` $= M$ `(m, k)` (on the whitened path
    /// $\Phi (F^\top F + n\lambda I)^{-1} \Phi^\top M$): applied to $A^\top T$
    /// it gives the coefficients of the right-hand side's atoms over the
    /// sketch's rows.
    pub(crate) fn solve(&self, mut atm: Mat<f64>) -> Mat<f64> {
        let par = Par::rayon(0);
        let (m, k) = (atm.nrows() as f64, atm.ncols() as f64);
        match self {
            RidgeSystem::Direct(c) => {
                let _p = profile::phase("solves", 2.0 * m * m * k);
                c.solve_in_place(atm.as_mut(), par);
                atm
            }
            RidgeSystem::Whitened { whitening, chol } => {
                let r = whitening.rank() as f64;
                let ft_right = {
                    let _p = profile::phase(
                        "solves",
                        match whitening {
                            Whitening::Cholesky(_) => m * m * k,
                            Whitening::Eigen(_) => 2.0 * r * m * k,
                        },
                    );
                    whitening.apply_transpose(atm)
                };
                Self::core(whitening, chol, ft_right)
            }
        }
    }

    /// $\Phi (F^\top F + n\lambda I)^{-1} M$ `(m, k)` for `ft_right` $= M$ `(r, k)`.
    fn core(whitening: &Whitening, chol: &Cholesky, mut ft_right: Mat<f64>) -> Mat<f64> {
        let par = Par::rayon(0);
        let (r, k, m) = (ft_right.nrows() as f64, ft_right.ncols() as f64, whitening.dim() as f64);
        // Two triangular solves with the r x r factor, then Phi: a triangular
        // solve with L^T (m x m) or a GEMM with the explicit m x r Phi.
        let phi_flops = match whitening {
            Whitening::Cholesky(_) => m * m * k,
            Whitening::Eigen(_) => 2.0 * m * r * k,
        };
        let _p = profile::phase("solves", 2.0 * r * r * k + phi_flops);
        chol.solve_in_place(ft_right.as_mut(), par);
        match whitening {
            Whitening::Cholesky(c) => {
                faer::linalg::triangular_solve::solve_upper_triangular_in_place(
                    c.l().transpose(),
                    ft_right.as_mut(),
                    par,
                );
                ft_right
            }
            Whitening::Eigen(phi) => {
                let mut out = Mat::zeros(phi.nrows(), ft_right.ncols());
                matmul(out.as_mut(), Accum::Replace, phi.as_ref(), ft_right.as_ref(), 1.0, par);
                out
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use faer::Mat;
    use okr_kernels::{DenseRows, Gaussian, LabelSets};
    use proptest::prelude::*;
    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::*;
    use crate::nystroem::Anchors;
    use crate::sketch::{SketchKind, SketchSpec};
    use crate::{Fit, Nystroem, SketchedIokr, SurrogateModel};

    fn rows(n: usize, d: usize, seed: u64) -> DenseRows {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        DenseRows::new(Mat::from_fn(n, d, |_, _| rng.random_range(-1.0..1.0))).unwrap()
    }

    /// One to three labels out of `n_labels` per row (repeats across rows).
    fn label_sets(n: usize, n_labels: usize, seed: u64) -> LabelSets {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let sets = (0..n)
            .map(|_| {
                let mut s: Vec<usize> = (0..rng.random_range(1..4)).map(|_| rng.random_range(0..n_labels)).collect();
                s.sort_unstable();
                s.dedup();
                s
            })
            .collect();
        LabelSets::new(n_labels, sets).unwrap()
    }

    fn rel(a: MatRef<'_, f64>, b: MatRef<'_, f64>) -> f64 {
        (a - b).norm_max() / b.norm_max().max(f64::MIN_POSITIVE)
    }

    /// `f`'s value and the names of the phases it marked.
    fn with_phases<T>(f: impl FnOnce() -> T) -> (T, Vec<&'static str>) {
        let (value, phases) = profile::collect(f);
        (value, phases.iter().map(|p| p.name).collect())
    }

    /// A diagonal system is its own oracle: pivots `b_ii`. Just above the
    /// relative threshold the direct path is taken, just below the
    /// whitened one, and both give `B^{-1} M`.
    #[test]
    fn pivot_threshold_chooses_the_path_and_both_solve() {
        let m = 4;
        let rhs = Mat::from_fn(m, 3, |i, j| (i + 2 * j) as f64 - 1.5);
        for (small, direct) in [(3.0 * DIRECT_PIVOT_RTOL, true), (0.3 * DIRECT_PIVOT_RTOL, false)] {
            // B = A^T A + ridge K with A^T A = diag(1, 0.5, 0.25, 0) and
            // K = diag(1, 1, 1, small / ridge): pivots 1 + ridge, ..., small.
            let ridge = 1e-3;
            let ata = Mat::from_fn(m, m, |i, j| if i == j && i < 3 { 0.5f64.powi(i as i32) } else { 0.0 });
            let k = Mat::from_fn(m, m, |i, j| {
                if i != j {
                    0.0
                } else if i < 3 {
                    1.0
                } else {
                    small / ridge
                }
            });
            let b_diag: Vec<f64> = (0..m).map(|i| ata[(i, i)] + ridge * k[(i, i)]).collect();
            let sys = RidgeSystem::from_cross_product(ata, SketchGram::Held(k), "form", ridge, 1e-3, 1e-14).unwrap();
            assert_eq!(matches!(sys, RidgeSystem::Direct(_)), direct, "pivot {small}");
            assert_eq!(sys.rank(), m);
            let oracle = Mat::from_fn(m, 3, |i, j| rhs[(i, j)] / b_diag[i]);
            let got = sys.solve(rhs.clone());
            assert!(rel(got.as_ref(), oracle.as_ref()) < 1e-12, "pivot {small}: {got:?}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

        /// Nystroem KRR on well-conditioned random problems: the direct
        /// path is taken, and it gives the whitened path's weights and
        /// test coefficients to 1e-8.
        #[test]
        fn nystroem_direct_equals_whitened(
            n in 30usize..120,
            m_frac in 0.1f64..0.5,
            lambda_exp in -4i32..-1,
            chunk in 7usize..64,
            seed in 0u64..1000,
        ) {
            let (x, y, xt) = (rows(n, 6, seed), label_sets(n, 7, seed + 1), rows(9, 6, seed + 2));
            let m = ((n as f64 * m_frac) as usize).max(2);
            let params = Nystroem::params(Gaussian::new(0.4).unwrap(), Gaussian::from_sigma2(2.0).unwrap())
                .anchors(Anchors::Uniform(m))
                .lambda(10f64.powi(lambda_exp))
                .seed(seed);
            let params = crate::ParamGuard::check(params).unwrap();
            let (direct, names) = with_phases(|| params.fit_with_chunk_rows(&x, &y, chunk).unwrap());
            prop_assert!(names.contains(&"system B = A^T A + ridge K_mm"), "{names:?}");
            prop_assert!(!names.iter().any(|p| p.starts_with("whitening")), "{names:?}");
            let (whitened, names) = whitened_only(|| with_phases(|| params.fit_with_chunk_rows(&x, &y, chunk).unwrap()));
            prop_assert!(names.contains(&"whitening (Cholesky)"), "{names:?}");
            prop_assert_eq!(direct.rank(), whitened.rank());
            let (cd, cw) = (direct.coefficients(&xt).unwrap(), whitened.coefficients(&xt).unwrap());
            prop_assert!(rel(cd.as_ref(), cw.as_ref()) < 1e-8, "coefficients {}", rel(cd.as_ref(), cw.as_ref()));
            let (wd, ww) = (direct.weights(), whitened.weights());
            prop_assert!(rel(wd, ww) < 1e-8, "weights {}", rel(wd, ww));
        }

        /// SIOKR / SISOKR (uniform or Gaussian input sketch, with and
        /// without a Gaussian output sketch): the direct path gives the
        /// whitened path's input map and test coefficients to 1e-8.
        #[test]
        fn sketched_direct_equals_whitened(
            n in 40usize..120,
            m_x in 4usize..20,
            gaussian_input in any::<bool>(),
            m_y in proptest::option::of(3usize..10),
            lambda_exp in -4i32..-1,
            seed in 0u64..1000,
        ) {
            let (x, y, xt) = (rows(n, 6, seed), label_sets(n, 7, seed + 1), rows(9, 6, seed + 2));
            let input = if gaussian_input { SketchKind::Gaussian } else { SketchKind::Uniform };
            let params = SketchedIokr::params(Gaussian::new(0.4).unwrap(), Gaussian::from_sigma2(2.0).unwrap())
                .lambda(10f64.powi(lambda_exp))
                .input_sketch(Some(SketchSpec::new(input, m_x)))
                .output_sketch(m_y.map(|m| SketchSpec::new(SketchKind::Gaussian, m)))
                .seed(seed);
            let params = crate::ParamGuard::check(params).unwrap();
            let (direct, names) = with_phases(|| params.fit(&x, &y).unwrap());
            prop_assert!(names.contains(&"system B = A^T A + ridge R K R^T"), "{names:?}");
            prop_assert!(!names.iter().any(|p| p.starts_with("whitening")), "{names:?}");
            let (whitened, names) = whitened_only(|| with_phases(|| params.fit(&x, &y).unwrap()));
            prop_assert!(names.contains(&"whitening (Cholesky)"), "{names:?}");
            let (cd, cw) = (direct.coefficients(&xt).unwrap(), whitened.coefficients(&xt).unwrap());
            prop_assert!(rel(cd.as_ref(), cw.as_ref()) < 1e-8, "coefficients {}", rel(cd.as_ref(), cw.as_ref()));
            let (zd, zw) = (direct.input_map(), whitened.input_map());
            prop_assert!(rel(zd, zw) < 1e-8, "input map {}", rel(zd, zw));
        }
    }
}
