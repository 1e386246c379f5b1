//! What the Python estimators need from a fitted okr model, behind one
//! object-safe trait ([`Predictor`]) so that the module handles every
//! (estimator, input container, output container) combination alike.

use std::borrow::Cow;
use std::marker::PhantomData;

use faer::{Mat, MatRef, Par};
use okr_decode::{CandidateDecoder, Decoded};
use okr_estimators::{Iokr, Kde, Nystroem, ReducedRankIokr, SketchedIokr, SurrogateModel, TraceNorm};
use okr_kernels::{CsrRows, DenseRows, Kernel, KernelSpec, LabelSets, Rows};
use pyo3::PyResult;

use crate::convert::Inputs;
use crate::errors::to_py;

/// Input containers a model can be fitted on, read from [`Inputs`] of
/// either kind: a dense model densifies sparse test rows, a sparse model
/// compresses dense ones (each a copy of the test batch only).
pub trait FromInputs: Rows + 'static {
    /// The rows of `x` as this container.
    fn from_inputs(x: &Inputs) -> PyResult<Cow<'_, Self>>;
}

impl FromInputs for DenseRows {
    fn from_inputs(x: &Inputs) -> PyResult<Cow<'_, Self>> {
        match x {
            Inputs::Dense(d) => Ok(Cow::Borrowed(d)),
            Inputs::Sparse(s) => Ok(Cow::Owned(DenseRows::new(s.to_dense()).map_err(to_py)?)),
        }
    }
}

impl FromInputs for CsrRows {
    fn from_inputs(x: &Inputs) -> PyResult<Cow<'_, Self>> {
        match x {
            Inputs::Sparse(s) => Ok(Cow::Borrowed(s)),
            Inputs::Dense(d) => Ok(Cow::Owned(CsrRows::from_dense(d.as_mat()).map_err(to_py)?)),
        }
    }
}

/// Output containers, read as a matrix (label sets as 0/1 indicators).
pub trait OutputMatrix: Rows + 'static {
    /// `(n_rows, dim)`.
    fn to_matrix(&self) -> Mat<f64>;
}

impl OutputMatrix for LabelSets {
    fn to_matrix(&self) -> Mat<f64> {
        self.to_indicator()
    }
}

impl OutputMatrix for DenseRows {
    fn to_matrix(&self) -> Mat<f64> {
        self.as_mat().to_owned()
    }
}

/// A fitted kernel-output model seen through its outputs: candidates to
/// decode (the distinct training outputs), and its atoms written over
/// training outputs (`atom_j = sum_i B_ji psi(y_i)`) for label scores.
pub trait Surrogate<X: Rows, Y: Rows>: SurrogateModel<X, Y> + 'static {
    /// The distinct training outputs, in first-occurrence order.
    fn candidates(&self) -> &Y;
    /// The outputs the atoms are combinations of.
    fn atom_outputs(&self) -> &Y;
    /// `B` `(n_atoms, n_atom_outputs)`; `None` for the identity.
    fn atom_weights(&self) -> Option<MatRef<'_, f64>>;
    /// `(requested, used)` rank of low-rank models.
    fn ranks(&self) -> Option<(usize, usize)> {
        None
    }
}

impl<X: Rows + 'static, Y: Rows + 'static> Surrogate<X, Y> for Iokr<X, Y, KernelSpec, KernelSpec>
where
    KernelSpec: Kernel<X> + Kernel<Y>,
{
    fn candidates(&self) -> &Y {
        self.atoms()
    }
    fn atom_outputs(&self) -> &Y {
        self.atoms()
    }
    fn atom_weights(&self) -> Option<MatRef<'_, f64>> {
        None
    }
}

macro_rules! projected {
    ($($model:ident),*) => {$(
        impl<X: Rows + 'static, Y: Rows + 'static> Surrogate<X, Y> for $model<X, Y, KernelSpec, KernelSpec>
        where
            KernelSpec: Kernel<X> + Kernel<Y>,
        {
            fn candidates(&self) -> &Y {
                self.distinct_outputs()
            }
            fn atom_outputs(&self) -> &Y {
                self.distinct_outputs()
            }
            fn atom_weights(&self) -> Option<MatRef<'_, f64>> {
                Some(self.encoder())
            }
            fn ranks(&self) -> Option<(usize, usize)> {
                Some(projected!(@ranks self, $model))
            }
        }
    )*};
    (@ranks $s:ident, TraceNorm) => { ($s.params_used().rank(), $s.n_atoms()) };
    (@ranks $s:ident, $other:ident) => { ($s.requested_rank(), $s.rank()) };
}
projected!(ReducedRankIokr, Kde, TraceNorm);

impl<X: Rows + 'static, Y: Rows + 'static> Surrogate<X, Y> for SketchedIokr<X, Y, KernelSpec, KernelSpec>
where
    KernelSpec: Kernel<X> + Kernel<Y>,
{
    fn candidates(&self) -> &Y {
        self.distinct_outputs()
    }
    fn atom_outputs(&self) -> &Y {
        SketchedIokr::atom_outputs(self)
    }
    fn atom_weights(&self) -> Option<MatRef<'_, f64>> {
        SketchedIokr::atom_weights(self)
    }
}

impl<X: Rows + 'static, Y: Rows + 'static> Surrogate<X, Y> for Nystroem<X, Y, KernelSpec, KernelSpec>
where
    KernelSpec: Kernel<X> + Kernel<Y>,
{
    fn candidates(&self) -> &Y {
        self.distinct_outputs()
    }
    fn atom_outputs(&self) -> &Y {
        self.distinct_outputs()
    }
    fn atom_weights(&self) -> Option<MatRef<'_, f64>> {
        None
    }
}

/// The object-safe face of a fitted model.
pub trait Predictor: Send + Sync {
    /// Top-`k` candidates per test row (indices into [`candidates`](Predictor::candidates),
    /// best first) with their scores `k(c, c) - 2 <h(x), psi(c)>` (lower is better).
    fn decode(&self, x: &Inputs, k: usize) -> PyResult<Decoded>;
    /// `h(x)` read with a linear output kernel: `C B Y` `(n_test, dim)`
    /// (label scores for label sets; the kernel ridge prediction for vectors).
    fn label_scores(&self, x: &Inputs) -> PyResult<Mat<f64>>;
    /// The candidates as a matrix `(n_candidates, dim)`.
    fn candidates(&self) -> Mat<f64>;
    /// Number of atoms (the width of the coefficients).
    fn n_atoms(&self) -> usize;
    /// `(requested, used)` rank of low-rank models.
    fn ranks(&self) -> Option<(usize, usize)>;
}

/// A fitted model `M` on inputs `X` and outputs `Y`.
pub struct Fitted<M, X, Y> {
    pub model: M,
    _types: PhantomData<fn() -> (X, Y)>,
}

impl<M, X, Y> Fitted<M, X, Y> {
    pub fn new(model: M) -> Self {
        Self { model, _types: PhantomData }
    }
}

impl<M, X, Y> Predictor for Fitted<M, X, Y>
where
    M: Surrogate<X, Y>,
    X: FromInputs,
    Y: OutputMatrix,
{
    fn decode(&self, x: &Inputs, k: usize) -> PyResult<Decoded> {
        let x = X::from_inputs(x)?;
        CandidateDecoder::new().top_k(k).decode(&self.model, x.as_ref(), self.model.candidates()).map_err(to_py)
    }

    fn label_scores(&self, x: &Inputs) -> PyResult<Mat<f64>> {
        let x = X::from_inputs(x)?;
        let mut coef = Mat::zeros(x.n_rows(), self.model.n_atoms());
        self.model.coefficients_into(x.as_ref(), coef.as_mut(), Par::rayon(0)).map_err(to_py)?;
        let outputs = self.model.atom_outputs().to_matrix();
        Ok(match self.model.atom_weights() {
            None => &coef * &outputs,
            Some(b) => &coef * (b * &outputs),
        })
    }

    fn candidates(&self) -> Mat<f64> {
        self.model.candidates().to_matrix()
    }

    fn n_atoms(&self) -> usize {
        self.model.n_atoms()
    }

    fn ranks(&self) -> Option<(usize, usize)> {
        self.model.ranks()
    }
}
