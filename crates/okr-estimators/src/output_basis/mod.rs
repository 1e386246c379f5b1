//! Output bases fitted from training outputs alone, so that any model can
//! regress coordinates and okr decodes them ("bring your own input model";
//! DSOKR, El Ahmad et al. 2024).
//!
//! An [`OutputBasis`] is an orthonormal family of $r$ atoms of the output
//! RKHS $\mathcal H_y$ written over training outputs $U$:
//! $$e_j = \sum_u B_{ju}\,\psi(u), \qquad \langle e_i, e_j \rangle = \delta_{ij}.$$
//! [`transform`](OutputBasis::transform) maps outputs to their coordinates
//! $z(y)_j = \langle e_j, \psi(y)\rangle = (B\,K_y(U, y))_j$, the projection
//! of $\psi(y)$ on the basis; any regressor can learn $x \mapsto z$ with the
//! squared loss, which is then the RKHS loss of the projection. A predicted
//! $\hat z(x)$ stands for $h(x) = \sum_j \hat z_j e_j$ and decodes as
//! $$\hat y(x) = \arg\min_{c} \|h(x) - \psi(c)\|^2
//! = \arg\min_c\; k(c, c) - 2\,\hat z(x)^\top z(c).$$
//!
//! Three kinds ([`BasisKind`]): the exact basis (kernel PCA of the output
//! Gram over the distinct training outputs; at full rank it spans them all,
//! so $Z Z^\top = K_y$ on the training outputs and a kernel ridge regression
//! of $Z$ gives IOKR's scores), a sketched basis (the span of
//! $R_Y\psi(Y)$ for an okr [`Sketch`](crate::sketch::Sketch), SISOKR's
//! output side) and a Nystroem basis (the span of anchor outputs).
//!
//! [`OutputBasis`] is a [`KernelExpansion`] (hence a
//! [`SurrogateModel`](crate::SurrogateModel)) whose inputs are the
//! coordinates ([`DenseRows`] of width $r$, [`InputMap::Coordinates`]) and a
//! [`CoordinateBasis`], so that
//! okr-decode's candidate decoders (tiles, memory budget, precision, tie
//! rule, per-query ranking) score predicted coordinates unchanged.
//!
//! # Example
//! ```
//! use okr_estimators::output_basis::{BasisKind, OutputBasis};
//! use okr_estimators::{LabelSets, Tanimoto};
//! let y = LabelSets::new(4, vec![vec![0], vec![1, 2], vec![0], vec![3], vec![0, 3]])?;
//! let basis = OutputBasis::params(Tanimoto).fit(&y)?;
//! let z = basis.transform(&y)?; // (5, r) coordinates
//! // At full rank the coordinates reproduce the output Gram.
//! let k = okr_estimators::Kernel::gram(&Tanimoto, &y);
//! let zz = z.values() * z.values().transpose();
//! assert!((zz - k).norm_max() < 1e-10);
//! Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod fit;
mod params;

use faer::{Mat, MatMut, MatRef, Par};
use okr_kernels::{DenseRows, Kernel, Linear, Rows};
use okr_surrogate::{
    AtomGram, Atoms, CoordinateBasis, Coordinates, InputMap, KernelExpansion, projected_atom_products_into,
};
use serde::{Deserialize, Serialize};

pub use params::{BasisKind, OutputBasisParams, OutputBasisValidParams};

use crate::{Error, Result};

/// A fitted output basis (see the [module docs](self)).
///
/// Keeps the support outputs $U$ the atoms are written over, the weights
/// $B$ `(r, |U|)`, the kept eigenvalues of the atoms' Gram and the distinct
/// training outputs (the default candidates). Serializable with serde.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OutputBasis<Y, KY> {
    params: OutputBasisValidParams<KY>,
    distinct: Y,
    support: Y,
    #[serde(with = "okr_linalg::serde_mat")]
    weights: Mat<f64>,
    eigenvalues: Vec<f64>,
    /// `(0, r)`: the width of the coordinates, as the expansion's inputs.
    space: DenseRows,
    id: u64,
}

impl<KY> OutputBasis<(), KY> {
    /// Default parameters (exact basis, all components) with the given kernel.
    pub fn params(kernel: KY) -> OutputBasisParams<KY> {
        OutputBasisParams::new(kernel)
    }
}

/// FNV-1a over 64-bit words.
fn fnv(words: impl Iterator<Item = u64>) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for w in words {
        for b in w.to_le_bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

impl<Y: Rows, KY> OutputBasis<Y, KY> {
    fn new(
        params: OutputBasisValidParams<KY>,
        distinct: Y,
        support: Y,
        weights: Mat<f64>,
        eigenvalues: Vec<f64>,
    ) -> Self {
        let mut words = vec![weights.nrows() as u64, weights.ncols() as u64, distinct.n_rows() as u64];
        words.extend(eigenvalues.iter().map(|v| v.to_bits()));
        for j in 0..weights.ncols() {
            words.extend(weights.col(j).iter().map(|v| v.to_bits()));
        }
        let id = fnv(words.into_iter());
        let space = DenseRows::new(Mat::zeros(0, weights.nrows())).expect("no entries to check");
        Self { params, distinct, support, weights, eigenvalues, space, id }
    }

    /// The parameters the basis was fitted with.
    pub fn params_used(&self) -> &OutputBasisValidParams<KY> {
        &self.params
    }
    /// Number of components `r` (coordinates per output).
    pub fn n_components(&self) -> usize {
        self.weights.nrows()
    }
    /// The outputs $U$ the atoms are written over (support of the sketch,
    /// anchors, or the distinct training outputs).
    pub fn support(&self) -> &Y {
        &self.support
    }
    /// The weights $B$ `(r, |U|)`: $e_j = \sum_u B_{ju}\psi(u)$.
    pub fn weights(&self) -> MatRef<'_, f64> {
        self.weights.as_ref()
    }
    /// The kept eigenvalues of the atoms' Gram, non-increasing (for the exact
    /// basis: the leading eigenvalues of $K_y$ over the distinct outputs).
    pub fn eigenvalues(&self) -> &[f64] {
        &self.eigenvalues
    }
    /// The id tagging this basis' coordinates (a hash of its weights).
    pub fn id(&self) -> u64 {
        self.id
    }
}

impl<Y: Rows, KY: Kernel<Y>> OutputBasis<Y, KY> {
    /// The coordinates $z(y) = B\,K_y(U, y)$ `(y.n_rows(), r)` of outputs,
    /// tagged with this basis, computed in tiles of outputs (the Gram
    /// temporary stays within 64 MiB).
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] for outputs of another width (dimension,
    /// number of labels).
    pub fn transform(&self, y: &Y) -> Result<Coordinates> {
        let mut z = Mat::zeros(y.n_rows(), self.n_components());
        self.transform_into(y, z.as_mut(), Par::rayon(0))?;
        Coordinates::of_basis(z, self.id)
    }

    /// As [`transform`](Self::transform), into `dst` `(y.n_rows(), r)`.
    ///
    /// # Errors
    /// As [`transform`](Self::transform).
    ///
    /// # Panics
    /// If `dst` is not `(y.n_rows(), r)`.
    #[track_caller]
    pub fn transform_into(&self, y: &Y, dst: MatMut<'_, f64>, par: Par) -> Result<()> {
        projected_atom_products_into(
            &self.params.kernel,
            &self.support,
            y,
            self.weights.as_ref(),
            dst.transpose_mut(),
            par,
        )
    }
}

impl<Y: Rows, KY: Kernel<Y>> KernelExpansion<DenseRows, Y> for OutputBasis<Y, KY> {
    type InputKernel = Linear;
    type OutputKernel = KY;

    /// Unused: the coefficients are the coordinates.
    fn input_kernel(&self) -> &Linear {
        &Linear
    }
    fn output_kernel(&self) -> &KY {
        &self.params.kernel
    }
    /// No rows, `r` columns: the width coordinates must have.
    fn expansion_inputs(&self) -> &DenseRows {
        &self.space
    }
    fn input_map(&self) -> InputMap<'_> {
        InputMap::Coordinates
    }
    /// $e_j = \sum_u B_{ju}\psi(u)$, orthonormal.
    fn atoms(&self) -> Atoms<'_, Y> {
        Atoms { outputs: &self.support, weights: Some(self.weights.as_ref()), gram: AtomGram::Identity }
    }
    fn training_outputs(&self) -> &Y {
        &self.distinct
    }
    fn coordinates_into(&self, x: &DenseRows, mut dst: MatMut<'_, f64>) -> Result<()> {
        let got = x.as_mat().ncols();
        if got != self.n_components() {
            return Err(Error::ShapeMismatch {
                what: "coordinate columns vs basis components",
                expected: self.n_components(),
                got,
            });
        }
        dst.copy_from(x.as_mat());
        Ok(())
    }
}

impl<Y: Rows, KY: Kernel<Y>> CoordinateBasis<Y> for OutputBasis<Y, KY> {
    fn basis_id(&self) -> u64 {
        self.id
    }
    fn distinct_outputs(&self) -> &Y {
        &self.distinct
    }
}
