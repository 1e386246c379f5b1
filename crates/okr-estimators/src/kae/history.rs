//! The finite KAE fit with snapshots of the model along the iterations, and
//! decoding from the code layer (the paper's Fig. 5a/5b show the encoder and
//! the decoder evolving during fitting).

use faer::{Mat, MatRef};

use super::fit::{self, StopReason, TrainInfo};
use super::network;
use super::params::{KaeParams, KaeValidParams, LastLayer};
use super::{Kae, check_finite, check_widths};
use crate::{Error, ParamGuard, Result};

/// The model at one step of a [`KaeValidParams::fit_with_history`] run.
///
/// `model` has the inner coefficients $\Phi_1..\Phi_{L-1}$ reached after
/// `step` parameter updates (`step = 0` is the initialization) and, with a
/// KRR last layer, $\Phi_L$ solved in closed form at them (spec 1.5), so its
/// encoder, decoder and reconstruction are those of the network at that
/// step. Its [`train_info`](Kae::train_info) holds the objectives evaluated
/// before each of those `step` updates and, as `final_objective`, the
/// objective $J$ at the snapshot's parameters.
#[derive(Debug, Clone)]
pub struct KaeSnapshot {
    /// Number of parameter updates applied before the snapshot.
    pub step: usize,
    /// The network at that step.
    pub model: Kae,
}

impl KaeParams {
    /// Checks the parameters and fits a finite KAE on `x`, keeping snapshots
    /// at the requested steps (see [`KaeValidParams::fit_with_history`]).
    ///
    /// # Errors
    /// As [`KaeValidParams::fit_with_history`], and invalid parameters.
    pub fn fit_with_history(&self, x: MatRef<'_, f64>, steps: &[usize]) -> Result<(Kae, Vec<KaeSnapshot>)> {
        self.check_ref()?.fit_with_history(x, steps)
    }
}

impl KaeValidParams {
    /// Fits a finite KAE on `x` `(n_samples, n_features)` as [`fit`](Self::fit)
    /// does (same seed, same model) and returns, beside it, the model after
    /// each requested number of updates in `steps` (0 = the initialization),
    /// in increasing order without repeats.
    ///
    /// The objective at every step is the fitted model's
    /// `train_info().objective_history`. A step beyond the updates actually
    /// taken (training may stop early by `tol` / `patience`) has no
    /// snapshot; the snapshot at the number of updates taken, when
    /// requested, is the returned model. Each snapshot costs one forward
    /// pass, one KRR solve and an `(n, d_l)` copy per layer.
    ///
    /// # Example
    /// ```
    /// use faer::Mat;
    /// use okr_estimators::kae::Kae;
    /// let x = Mat::from_fn(20, 1, |i, _| if i < 10 { 0.01 * i as f64 } else { 2.0 + 0.01 * i as f64 });
    /// let (model, snaps) = Kae::params().hidden_dims(vec![1]).max_iter(40).tol(0.0).patience(100)
    ///     .fit_with_history(x.as_ref(), &[0, 10, 40])?;
    /// assert_eq!(snaps.iter().map(|s| s.step).collect::<Vec<_>>(), vec![0, 10, 40]);
    /// // The last snapshot is the fitted model; the objective went down.
    /// assert_eq!(snaps[2].model.encode(x.as_ref())?, model.encode(x.as_ref())?);
    /// assert!(snaps[2].model.train_info().final_objective < snaps[0].model.train_info().final_objective);
    /// Ok::<(), okr_estimators::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`fit`](Self::fit).
    pub fn fit_with_history(&self, x: MatRef<'_, f64>, steps: &[usize]) -> Result<(Kae, Vec<KaeSnapshot>)> {
        self.fit_recording(x, &mut |_, _| {}, steps)
    }

    /// The finite KAE fit behind [`fit`](Self::fit), [`fit_with_progress`](Self::fit_with_progress)
    /// and [`fit_with_history`](Self::fit_with_history).
    pub(super) fn fit_recording(
        &self,
        x: MatRef<'_, f64>,
        progress: &mut dyn FnMut(usize, f64),
        steps: &[usize],
    ) -> Result<(Kae, Vec<KaeSnapshot>)> {
        check_finite("training inputs", x)?;
        check_widths(self, x.nrows(), x.ncols())?;
        let first = self.kernel(1).resolve(x);
        let k1 = first.gram(x)?;
        let (layers, mut theta) = fit::initialize(k1.as_ref(), first, self, Some(x.ncols()))?;
        let m = layers.len() - 1;
        if self.last_layer == LastLayer::Gradient {
            let pass = network::forward(k1.as_ref(), &layers, &theta)?;
            let mut rng = <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(self.seed ^ 0x9e37_79b9);
            let mut phi = fit::standard_normal(x.nrows(), x.ncols(), &mut rng);
            let xl = layers[m].apply_op(pass.last_gram() * &phi);
            let rms_out = (network::dot(xl.as_ref(), xl.as_ref()) / (xl.nrows() * xl.ncols()).max(1) as f64).sqrt();
            let rms_x = (network::dot(x, x) / (x.nrows() * x.ncols()).max(1) as f64).sqrt();
            if rms_out > 0.0 {
                phi = Mat::from_fn(phi.nrows(), phi.ncols(), |i, j| phi[(i, j)] * rms_x / rms_out);
            }
            theta.push(phi);
        }
        let mut problem = fit::Problem { k1: k1.as_ref(), layers, head: fit::finite_head(self, x) };
        // Copies only at the requested steps; the training itself is unchanged.
        let mut recorded: Vec<(usize, Vec<Mat<f64>>)> = Vec::new();
        let (info, state) = fit::train(&mut problem, &mut theta, self, None, progress, &mut |step, t| {
            if steps.contains(&step) {
                recorded.push((step, t.to_vec()));
            }
        })?;
        let mut snapshots = Vec::with_capacity(recorded.len());
        for (step, t) in recorded {
            let p = fit::Problem { k1: k1.as_ref(), layers: problem.layers.clone(), head: fit::finite_head(self, x) };
            let info = TrainInfo {
                objective_history: info.objective_history[..step.min(info.objective_history.len())].to_vec(),
                n_iter: step,
                final_objective: f64::NAN,
                stop: StopReason::MaxIter,
            };
            snapshots.push(KaeSnapshot { step, model: assemble(p, t, info, x, self.code_layer())? });
        }
        let mut model = assemble(problem, theta, info, x, self.code_layer())?;
        model.state = Some(state);
        Ok((model, snapshots))
    }

    /// Continues the finite KAE `previous` on `x` for `max_iter` more steps
    /// (a warm start): from its coefficients, its resolved layer kernels and,
    /// for a model fitted in this process, Adam's moments, so that $k$ steps
    /// then $k$ more equal $2k$ steps exactly (with `refresh_every = 1`, or
    /// $k$ a multiple of it; when no stopping rule ends the first fit). The
    /// penalties $\lambda_l$ and the step rule are this parameter set's; the
    /// history and step count continue `previous`'s. A loaded model continues
    /// with fresh Adam moments.
    ///
    /// # Example
    /// ```
    /// use faer::Mat;
    /// use okr_estimators::kae::Kae;
    /// let x = Mat::from_fn(12, 2, |i, j| ((i * 5 + j * 3) % 7) as f64 / 7.0);
    /// let params = |k| Kae::params().max_iter(k).patience(1000);
    /// let once = params(20).fit(x.as_ref())?;
    /// let twice = params(10).fit_from(&params(10).fit(x.as_ref())?, x.as_ref())?;
    /// assert_eq!(twice.coefficients(), once.coefficients());
    /// assert_eq!(twice.train_info(), once.train_info());
    /// Ok::<(), okr_estimators::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`fit`](Self::fit); [`Error::ShapeMismatch`](crate::Error::ShapeMismatch)
    /// when `x` has another shape than `previous`'s training inputs, or the
    /// layers another number or widths.
    pub fn fit_from(&self, previous: &Kae, x: MatRef<'_, f64>) -> Result<Kae> {
        self.fit_from_with_progress(previous, x, &mut |_, _| {})
    }

    /// As [`fit_from`](Self::fit_from), calling `progress(step, objective)` at every step.
    ///
    /// # Errors
    /// As [`fit_from`](Self::fit_from).
    pub fn fit_from_with_progress(
        &self,
        previous: &Kae,
        x: MatRef<'_, f64>,
        progress: &mut dyn FnMut(usize, f64),
    ) -> Result<Kae> {
        check_finite("training inputs", x)?;
        check_widths(self, x.nrows(), x.ncols())?;
        let (n, d) = (previous.x_train.nrows(), previous.x_train.ncols());
        for (what, expected, got) in [
            ("training samples of a continued fit", n, x.nrows()),
            ("input features of a continued fit", d, x.ncols()),
            ("layers of a continued fit", previous.layers.len(), self.n_layers()),
        ] {
            if expected != got {
                return Err(Error::ShapeMismatch { what, expected, got });
            }
        }
        super::check_same_widths(&previous.codes, &self.hidden_dims)?;
        let mut layers = previous.layers.clone();
        for (l, layer) in layers.iter_mut().enumerate() {
            layer.lambda = self.lambda(l + 1);
        }
        let k1 = layers[0].kernel.gram(x)?;
        let m = layers.len() - 1;
        let mut theta = previous.phis.clone();
        if self.last_layer == LastLayer::Krr {
            theta.truncate(m);
        }
        let resume = fit::Resume::after(&previous.info, previous.state.as_ref());
        let mut problem = fit::Problem { k1: k1.as_ref(), layers, head: fit::finite_head(self, x) };
        let (info, state) = fit::train(&mut problem, &mut theta, self, Some(resume), progress, &mut |_, _| {})?;
        let mut model = assemble(problem, theta, info, x, self.code_layer())?;
        model.state = Some(state);
        Ok(model)
    }
}

/// The model at `theta`: the true objective (last layer refreshed), the
/// training codes and, for a KRR head, $\Phi_L$ solved at `theta`.
fn assemble(
    mut problem: fit::Problem<'_>,
    mut theta: Vec<Mat<f64>>,
    mut info: TrainInfo,
    x: MatRef<'_, f64>,
    code_layer: usize,
) -> Result<Kae> {
    let (value, _, pass) = problem.value_and_grad(&theta, true)?;
    info.final_objective = value;
    if let fit::Head::FiniteKrr { phi: Some(phi), .. } = problem.head {
        theta.push(phi);
    }
    Ok(Kae {
        layers: problem.layers,
        phis: theta,
        x_train: x.to_owned(),
        codes: pass.codes,
        code_layer,
        info,
        state: None,
    })
}

impl Kae {
    /// The decoder: maps codes $Z$ `(m, d_c)` at the code layer $c$ through
    /// $f_L \circ \dots \circ f_{c+1}$, i.e. $X^{(l)} = k_l(X^{(l-1)}, X^{(l-1)}_{train})\Phi_l A_l$
    /// for $l = c+1..L$ from $X^{(c)} = Z$, so that
    /// `decode(encode(x)) == reconstruct(x)`. Any `Z` may be given, e.g. a
    /// grid of codes to draw the decoder as a function.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] when `code` has another width than the code layer;
    /// [`Error::Empty`] for no rows; [`Error::InvalidParameter`] for non-finite entries.
    pub fn decode(&self, code: MatRef<'_, f64>) -> Result<Mat<f64>> {
        check_finite("codes", code)?;
        let c = self.code_layer;
        let width = self.codes[c - 1].ncols();
        if code.ncols() != width {
            return Err(Error::ShapeMismatch { what: "code width", expected: width, got: code.ncols() });
        }
        let mut prev = code.to_owned();
        for l in c..self.layers.len() {
            let k = self.layers[l].kernel.cross(prev.as_ref(), self.codes[l - 1].as_ref())?;
            prev = self.layers[l].apply_op(&k * &self.phis[l]);
        }
        Ok(prev)
    }
}
