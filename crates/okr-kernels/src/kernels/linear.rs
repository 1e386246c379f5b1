//! The linear kernel.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::{DotKernel, impl_dot_kernel};

/// The linear kernel $k(x, y) = \langle x, y \rangle = \sum_f x_f y_f$.
///
/// On [`LabelSets`](crate::LabelSets) it counts the common labels,
/// $|A \cap B|$. Blocks are one GEMM (dense rows) or one sparse product (CSR
/// rows, label sets) per tile.
///
/// # Example
/// ```
/// use okr_kernels::{DenseRows, Kernel, Linear};
/// let x = DenseRows::from_rows(&[vec![1.0, 2.0], vec![3.0, -1.0]])?;
/// let k = Linear::new().gram(&x);
/// assert_eq!(k[(0, 1)], 1.0);
/// assert_eq!(k[(1, 1)], 10.0);
/// Ok::<(), okr_kernels::Error>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Linear;

impl Linear {
    /// The linear kernel (it has no parameters).
    pub fn new() -> Self {
        Self
    }
}

impl fmt::Display for Linear {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("linear")
    }
}

impl DotKernel for Linear {
    const IDENTITY: bool = true;

    #[inline(always)]
    fn transform(&self, dot: f64, _: f64, _: f64) -> f64 {
        dot
    }

    fn self_value(&self, na: f64) -> f64 {
        na
    }
}

impl_dot_kernel!(Linear);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CsrRows, Kernel, LabelSets};

    #[test]
    fn linear_on_sets_counts_common_labels() {
        let y = LabelSets::new(4, vec![vec![0, 1, 3], vec![1, 3], vec![]]).unwrap();
        let k = Linear.gram(&y);
        assert_eq!((k[(0, 1)], k[(0, 0)], k[(2, 2)], k[(1, 2)]), (2.0, 3.0, 0.0, 0.0));
        assert_eq!(Linear.diag(&y), vec![3.0, 2.0, 0.0]);
    }

    #[test]
    fn linear_on_csr_matches_dense_formula() {
        let x = CsrRows::from_rows(3, vec![vec![(0, 2.0), (2, 1.0)], vec![(2, -3.0)]]).unwrap();
        assert_eq!(Linear.eval(&x, 0, &x, 1), -3.0);
        assert_eq!(Linear.gram_block(&x, &x)[(0, 1)], -3.0);
        assert_eq!(Linear.to_string(), "linear");
    }
}
