//! [`Validate`] for the fitted autoencoders: the shapes the forward passes
//! of `transform` / `encode` multiply together.

use faer::Mat;
use okr_kernels::{KernelSpec, Rows};

use super::network::Layer;
use super::{K2ae, K2aeOnRows, Kae, LayerKernel};
use crate::persist::{self, Check, Invalid, Validate, ensure};

/// Resolved, valid layer kernels and finite non-negative ridges.
fn layers(what: &str, layers: &[Layer]) -> Check {
    ensure(layers.len() >= 2, || format!("{what} has {} layers (at least 2)", layers.len()))?;
    for (l, layer) in layers.iter().enumerate() {
        ensure(layer.kernel != LayerKernel::GaussianMedian, || format!("{what} layer {} kernel is unresolved", l + 1))?;
        layer.kernel.check("kernel").map_err(|e| Invalid(format!("{what} layer {}: {e}", l + 1)))?;
        ensure(layer.lambda.is_finite() && layer.lambda >= 0.0, || format!("{what} layer {} ridge", l + 1))?;
    }
    Ok(())
}

/// Layer `l` maps `n` training rows through `phi` `(n, w)` and its square
/// operator `(w, w)` to a `(n, w)` representation; returns `w`.
fn layer_map(what: &str, layer: &Layer, phi: &Mat<f64>, n: usize) -> Result<usize, Invalid> {
    let w = phi.ncols();
    persist::matrix(what, phi.as_ref(), n, w)?;
    if let Some(op) = &layer.operator {
        persist::matrix(what, op.0.as_ref(), w, w)?;
    }
    Ok(w)
}

fn code_layer(what: &str, code_layer: usize, n_layers: usize) -> Check {
    ensure((1..n_layers).contains(&code_layer), || format!("{what} code layer {code_layer} of {n_layers}"))
}

impl Validate for Kae {
    fn validate(&self) -> Result<(), Invalid> {
        let n_layers = self.layers.len();
        layers("KAE", &self.layers)?;
        code_layer("KAE", self.code_layer, n_layers)?;
        ensure(self.phis.len() == n_layers && self.codes.len() == n_layers - 1, || {
            format!(
                "KAE has {} coefficient and {} code matrices for {n_layers} layers",
                self.phis.len(),
                self.codes.len()
            )
        })?;
        let (n, d) = (self.x_train.nrows(), self.x_train.ncols());
        ensure(n > 0 && d > 0, || "KAE has no training rows or features".into())?;
        persist::finite("KAE training inputs", self.x_train.as_ref())?;
        for l in 0..n_layers {
            let w = layer_map("KAE coefficients", &self.layers[l], &self.phis[l], n)?;
            if l + 1 < n_layers {
                persist::matrix("KAE training codes", self.codes[l].as_ref(), n, w)?;
            } else {
                ensure(w == d, || format!("KAE reconstructs {w} features of {d}"))?;
            }
        }
        Ok(())
    }
}

impl Validate for K2ae {
    fn validate(&self) -> Result<(), Invalid> {
        let n_layers = self.layers.len();
        layers("K2AE", &self.layers)?;
        code_layer("K2AE", self.code_layer, n_layers)?;
        ensure(self.phis.len() == n_layers - 1 && self.codes.len() == n_layers - 1, || {
            format!(
                "K2AE has {} coefficient and {} code matrices for {n_layers} layers",
                self.phis.len(),
                self.codes.len()
            )
        })?;
        let n = self.train_diag.len();
        ensure(n > 0, || "K2AE has no training samples".into())?;
        persist::finite_slice("K2AE training diagonal", &self.train_diag)?;
        for l in 0..n_layers - 1 {
            let w = layer_map("K2AE coefficients", &self.layers[l], &self.phis[l], n)?;
            persist::matrix("K2AE training codes", self.codes[l].as_ref(), n, w)?;
        }
        persist::cholesky("K2AE last-layer factor", &self.chol_w, n)?;
        persist::matrix("K2AE N_L", self.n_l.as_ref(), n, n)
    }
}

impl<R: Rows> Validate for K2aeOnRows<R, KernelSpec> {
    fn validate(&self) -> Result<(), Invalid> {
        self.model.validate()?;
        persist::rows("K2AE training rows", &self.x_train, self.model.n_samples())?;
        persist::kernel_fits("K2AE input kernel", &self.kernel, &self.x_train)
    }
}
