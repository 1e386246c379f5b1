use faer::linalg::triangular_solve::{solve_lower_triangular_in_place, solve_upper_triangular_in_place};
use faer::{Mat, MatMut, MatRef, Par};

use super::Cholesky;

impl Cholesky {
    /// Solves $(L L^\top) X = B$ in place: `rhs` holds $B$ on entry and $X$ on exit.
    ///
    /// Costs $2 n^2 k$ flops for `k` right-hand sides, done as blocked
    /// triangular solves (GEMM-rich for large `k`).
    ///
    /// # Panics
    /// If `rhs.nrows() != self.dim()`.
    #[track_caller]
    pub fn solve_in_place(&self, mut rhs: MatMut<'_, f64>, par: Par) {
        assert_eq!(rhs.nrows(), self.dim(), "right-hand side has the wrong number of rows");
        let l = self.l();
        solve_lower_triangular_in_place(l, rhs.as_mut(), par);
        solve_upper_triangular_in_place(l.transpose(), rhs.as_mut(), par);
    }

    /// Returns $X = (L L^\top)^{-1} B$.
    ///
    /// # Panics
    /// If `rhs.nrows() != self.dim()`.
    #[track_caller]
    pub fn solve(&self, rhs: MatRef<'_, f64>, par: Par) -> Mat<f64> {
        let mut x = rhs.to_owned();
        self.solve_in_place(x.as_mut(), par);
        x
    }
}
