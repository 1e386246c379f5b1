//! Tandem mass spectra (MS/MS) as inputs: the [`Spectrum`] and [`Spectra`]
//! containers and the probability product kernel [`Ppk`] on fragment peaks
//! (Heinonen, Shen, Zamboni & Rousu, "Metabolite identification and
//! molecular fingerprint prediction through machine learning",
//! Bioinformatics 28(18), 2012).

use std::sync::Arc;

use faer::{MatMut, Par};
use serde::{Deserialize, Serialize};

use crate::block::{for_each_tile, for_each_tile_sym};
use crate::math::exp;
use crate::{Error, Kernel, Result, Rows};

/// The most peaks a [`Spectrum`] may hold ($2^{20}$). Centroided MS/MS
/// spectra have tens to thousands of peaks; the bound keeps a crafted file
/// or model from asking for unbounded memory and quadratic kernel time.
pub const MAX_PEAKS: usize = 1 << 20;

/// Ionization polarity of a spectrum.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum IonMode {
    /// Positive ions (`IONMODE=Positive`, `[M+H]+`, ...).
    Positive,
    /// Negative ions (`IONMODE=Negative`, `[M-H]-`, ...).
    Negative,
}

/// One centroided MS/MS spectrum: fragment peaks `(m/z, intensity)` sorted by
/// m/z, and optionally the precursor m/z, the charge and the ion mode.
///
/// Peaks are checked on construction (and on deserialization): every m/z is
/// finite and `> 0`, every intensity finite and `>= 0`, at most
/// [`MAX_PEAKS`] peaks. They are stored sorted by m/z (ties by intensity);
/// repeated m/z values are kept. A spectrum without peaks is valid (see
/// [`Ppk`] for how the kernel treats it).
///
/// # Example
/// ```
/// use okr_kernels::{IonMode, Spectrum};
/// let s = Spectrum::new(vec![(153.07, 20.0), (91.05, 100.0)])?
///     .with_precursor_mz(181.09)?
///     .with_charge(1)
///     .with_ion_mode(IonMode::Positive);
/// assert_eq!(s.peaks(), &[(91.05, 100.0), (153.07, 20.0)]); // sorted by m/z
/// assert_eq!((s.n_peaks(), s.precursor_mz(), s.charge()), (2, Some(181.09), Some(1)));
/// assert!(Spectrum::new(vec![(-1.0, 5.0)]).is_err());
/// Ok::<(), okr_kernels::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "SpectrumParts")]
pub struct Spectrum {
    peaks: Vec<(f64, f64)>,
    precursor_mz: Option<f64>,
    charge: Option<i32>,
    ion_mode: Option<IonMode>,
}

/// The serialized fields of [`Spectrum`], checked on the way in.
#[derive(Deserialize)]
struct SpectrumParts {
    peaks: Vec<(f64, f64)>,
    precursor_mz: Option<f64>,
    charge: Option<i32>,
    ion_mode: Option<IonMode>,
}

impl TryFrom<SpectrumParts> for Spectrum {
    type Error = Error;
    fn try_from(p: SpectrumParts) -> Result<Self> {
        let mut s = Spectrum::new(p.peaks)?;
        if let Some(mz) = p.precursor_mz {
            s = s.with_precursor_mz(mz)?;
        }
        s.charge = p.charge;
        s.ion_mode = p.ion_mode;
        Ok(s)
    }
}

impl Spectrum {
    /// A spectrum from its peaks `(m/z, intensity)` in any order; they are
    /// sorted by m/z.
    ///
    /// # Errors
    /// [`Error::TooManyPeaks`] above [`MAX_PEAKS`]; [`Error::InvalidPeak`]
    /// (with the peak's index in `peaks`) for an m/z that is not finite and
    /// `> 0` or an intensity that is not finite and `>= 0`.
    pub fn new(mut peaks: Vec<(f64, f64)>) -> Result<Self> {
        if peaks.len() > MAX_PEAKS {
            return Err(Error::TooManyPeaks { n_peaks: peaks.len(), max: MAX_PEAKS });
        }
        for (index, &(mz, intensity)) in peaks.iter().enumerate() {
            let expected = if !(mz.is_finite() && mz > 0.0) {
                "an m/z that is finite and > 0"
            } else if !(intensity.is_finite() && intensity >= 0.0) {
                "an intensity that is finite and >= 0"
            } else {
                continue;
            };
            return Err(Error::InvalidPeak { index, mz, intensity, expected });
        }
        peaks.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
        Ok(Self { peaks, precursor_mz: None, charge: None, ion_mode: None })
    }

    /// A spectrum without peaks.
    pub fn empty() -> Self {
        Self { peaks: Vec::new(), precursor_mz: None, charge: None, ion_mode: None }
    }

    /// Sets the precursor m/z.
    ///
    /// # Errors
    /// [`Error::InvalidPrecursor`] unless `mz` is finite and `> 0`.
    pub fn with_precursor_mz(mut self, mz: f64) -> Result<Self> {
        if !(mz.is_finite() && mz > 0.0) {
            return Err(Error::InvalidPrecursor { mz });
        }
        self.precursor_mz = Some(mz);
        Ok(self)
    }

    /// Sets the precursor charge (signed: `-1` for `1-`).
    pub fn with_charge(mut self, charge: i32) -> Self {
        self.charge = Some(charge);
        self
    }

    /// Sets the ion mode.
    pub fn with_ion_mode(mut self, mode: IonMode) -> Self {
        self.ion_mode = Some(mode);
        self
    }

    /// The peaks `(m/z, intensity)`, sorted by m/z.
    pub fn peaks(&self) -> &[(f64, f64)] {
        &self.peaks
    }
    /// Number of peaks.
    pub fn n_peaks(&self) -> usize {
        self.peaks.len()
    }
    /// Whether the spectrum has no peak.
    pub fn is_empty(&self) -> bool {
        self.peaks.is_empty()
    }
    /// The precursor m/z, if known.
    pub fn precursor_mz(&self) -> Option<f64> {
        self.precursor_mz
    }
    /// The precursor charge, if known.
    pub fn charge(&self) -> Option<i32> {
        self.charge
    }
    /// The ion mode, if known.
    pub fn ion_mode(&self) -> Option<IonMode> {
        self.ion_mode
    }
}

/// A set of spectra, the input container of spectrum kernels (cheap to
/// clone and to [`select`](Rows::select) from: the spectra are shared).
///
/// Serialized as the list of its spectra, each checked on the way back in,
/// so a model can store its training spectra.
///
/// # Example
/// ```
/// use okr_kernels::{Rows, Spectra, Spectrum};
/// let a = Spectrum::new(vec![(50.0, 1.0)])?;
/// let b = Spectrum::new(vec![(60.0, 2.0), (70.0, 1.0)])?;
/// let set = Spectra::new(vec![a, b]);
/// assert_eq!(set.n_rows(), 2);
/// assert_eq!(set.select(&[1, 1]).spectrum(0).n_peaks(), 2);
/// Ok::<(), okr_kernels::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "Vec<Spectrum>", into = "Vec<Spectrum>")]
pub struct Spectra {
    spectra: Arc<Vec<Spectrum>>,
    index: Vec<usize>,
}

impl Spectra {
    /// Wraps a vector of spectra.
    pub fn new(spectra: Vec<Spectrum>) -> Self {
        let index = (0..spectra.len()).collect();
        Self { spectra: Arc::new(spectra), index }
    }
    /// The `i`-th spectrum.
    ///
    /// # Panics
    /// If `i >= n_rows()`.
    pub fn spectrum(&self, i: usize) -> &Spectrum {
        &self.spectra[self.index[i]]
    }
    /// Iterates over the spectra in order.
    pub fn iter(&self) -> impl Iterator<Item = &Spectrum> + '_ {
        self.index.iter().map(|&i| &self.spectra[i])
    }
}

impl From<Vec<Spectrum>> for Spectra {
    fn from(spectra: Vec<Spectrum>) -> Self {
        Self::new(spectra)
    }
}

impl From<Spectra> for Vec<Spectrum> {
    fn from(s: Spectra) -> Self {
        s.iter().cloned().collect()
    }
}

impl Rows for Spectra {
    fn n_rows(&self) -> usize {
        self.index.len()
    }
    fn select(&self, indices: &[usize]) -> Self {
        Self { spectra: Arc::clone(&self.spectra), index: indices.iter().map(|&i| self.index[i]).collect() }
    }
}

/// How peak intensities become the mixture weights $w_i$ of a spectrum
/// (always scaled to $\sum_i w_i = 1$; any per-spectrum scale cancels in the
/// cosine normalization anyway).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum PeakWeights {
    /// $w_i = 1/\ell$ for the $\ell$ peaks, whatever their intensity: the
    /// equal-weight mixture of Heinonen et al. (2012), where intensity enters
    /// only as a coordinate ([`PpkParams::intensity_width`]).
    Uniform,
    /// $w_i = I_i / \sum_j I_j$: the spectrum as a density over m/z with the
    /// intensities as masses (peaks of intensity 0 drop out).
    #[default]
    Intensity,
    /// $w_i = \sqrt{I_i} / \sum_j \sqrt{I_j}$, damping the base peak as the
    /// square-root cosine scores of spectral library search do.
    SqrtIntensity,
}

impl PeakWeights {
    /// The name used in records and on the command line (`uniform`,
    /// `intensity`, `sqrt-intensity`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Uniform => "uniform",
            Self::Intensity => "intensity",
            Self::SqrtIntensity => "sqrt-intensity",
        }
    }

    /// The weights of a name given by [`name`](Self::name).
    pub fn from_name(name: &str) -> Option<Self> {
        [Self::Uniform, Self::Intensity, Self::SqrtIntensity].into_iter().find(|w| w.name() == name)
    }
}

/// Pairs of peaks farther apart in m/z than `CUTOFF_SIGMAS` peak widths are
/// skipped: their term is $e^{-z}$ with $z = \Delta m^2 / (4\sigma^2) > 750$,
/// which is exactly 0 in `f64` (the smallest subnormal is $e^{-744.4}$). The
/// sweep therefore sums exactly the nonzero terms of the full double sum.
/// $2\sqrt{750} \approx 54.77$.
pub const CUTOFF_SIGMAS: f64 = 54.772_255_750_516_61;

/// Parameters of the probability product kernel [`Ppk`]. Setters store;
/// [`check`](Self::check) validates and returns the kernel.
///
/// | Name | Default | Purpose | Range |
/// |---|---|---|---|
/// | `peak_width` | 0.01 | $\sigma_m$, the standard deviation of each peak's Gaussian (m/z units) | finite, `> 0` |
/// | `weights` | [`PeakWeights::Intensity`] | mixture weights $w_i$ from intensities | |
/// | `intensity_width` | `None` | $\sigma_\iota$: `Some` adds the relative intensity $\iota_i = I_i / \max_j I_j$ as a second Gaussian coordinate (Heinonen et al.) | finite, `> 0` |
/// | `precursor_width` | `None` | $\sigma_p$: `Some` multiplies by a Gaussian on the precursor m/z | finite, `> 0` |
///
/// The default peak width is a typical fragment tolerance of high-resolution
/// instruments, not a value from the paper (which does not state it in the
/// material okr has); tune it by cross-validation.
///
/// # Example
/// ```
/// use okr_kernels::{PeakWeights, Ppk};
/// let ppk = Ppk::params().peak_width(0.005).weights(PeakWeights::Uniform).intensity_width(Some(0.5)).check()?;
/// assert_eq!(ppk.peak_width(), 0.005);
/// assert!(Ppk::params().peak_width(0.0).check().is_err());
/// Ok::<(), okr_kernels::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PpkParams {
    peak_width: f64,
    weights: PeakWeights,
    intensity_width: Option<f64>,
    precursor_width: Option<f64>,
}

impl Default for PpkParams {
    fn default() -> Self {
        Self { peak_width: 0.01, weights: PeakWeights::Intensity, intensity_width: None, precursor_width: None }
    }
}

impl PpkParams {
    /// Sets $\sigma_m$ (m/z).
    pub fn peak_width(mut self, sigma: f64) -> Self {
        self.peak_width = sigma;
        self
    }
    /// Sets the mixture weights.
    pub fn weights(mut self, weights: PeakWeights) -> Self {
        self.weights = weights;
        self
    }
    /// Sets $\sigma_\iota$ on relative intensities (`None`: intensity is not a coordinate).
    pub fn intensity_width(mut self, sigma: Option<f64>) -> Self {
        self.intensity_width = sigma;
        self
    }
    /// Sets $\sigma_p$ on the precursor m/z (`None`: no precursor term).
    pub fn precursor_width(mut self, sigma: Option<f64>) -> Self {
        self.precursor_width = sigma;
        self
    }

    /// Validates the parameters.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] naming `peak_width`, `intensity_width` or
    /// `precursor_width` when it is not finite and `> 0`.
    pub fn check(self) -> Result<Ppk> {
        let positive = |name: &'static str, v: f64| {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(Error::InvalidParameter { name, value: v, expected: "finite and > 0" })
            }
        };
        positive("peak_width", self.peak_width)?;
        if let Some(v) = self.intensity_width {
            positive("intensity_width", v)?;
        }
        if let Some(v) = self.precursor_width {
            positive("precursor_width", v)?;
        }
        Ok(Ppk { params: self })
    }
}

/// The probability product kernel on the fragment peaks of MS/MS spectra
/// (Heinonen et al. 2012), cosine-normalized.
///
/// **The model.** A spectrum $S$ with peaks $(m_i, I_i)$ is a mixture of
/// Gaussians, $p_S = \sum_i w_i\, \mathcal N(m_i, \sigma_m^2)$ over m/z, or
/// with [`intensity_width`](PpkParams::intensity_width) a mixture of 2-D
/// Gaussians $\mathcal N((m_i, \iota_i), \operatorname{diag}(\sigma_m^2,
/// \sigma_\iota^2))$ over (m/z, relative intensity $\iota_i = I_i / \max_j
/// I_j \in [0, 1]$). The probability product kernel (Jebara et al. 2004,
/// $\rho = 1$) is $\int p_S\, p_{S'}$; since the product of two Gaussians
/// integrates to a Gaussian of the difference with doubled variance,
/// $$\tilde k(S, S') = \sum_i \sum_j w_i w'_j \exp\Big(-\frac{(m_i - m'_j)^2}{4\sigma_m^2} - \frac{(\iota_i - \iota'_j)^2}{4\sigma_\iota^2}\Big)$$
/// up to the constant $1/(2\sqrt\pi\,\sigma_m)$ (times $1/(2\sqrt\pi\,\sigma_\iota)$
/// in 2-D), which the normalization removes (the intensity term is absent
/// without `intensity_width`). The kernel is
/// $$k(S, S') = \frac{\tilde k(S, S')}{\sqrt{\tilde k(S, S)\, \tilde k(S', S')}} \cdot k_p(S, S'),$$
/// with, when [`precursor_width`](PpkParams::precursor_width) is set,
/// $k_p = \exp(-(M - M')^2 / (4\sigma_p^2))$ on the precursor m/z $M$
/// ($k_p = 1$ otherwise). The precursor is multiplied, not added: it is one
/// more independent coordinate of the same probability model, and the
/// probability product of a product density factorizes. (A sum with
/// separate weights is a different kernel; build it with
/// [`combinators`](crate::combinators) if wanted.)
///
/// **Paper settings.** Heinonen et al. weight the peaks equally and use the
/// relative intensity as the second coordinate:
/// `weights(PeakWeights::Uniform).intensity_width(Some(s))`. The default
/// here, intensities as weights over m/z alone, is the form a smoothed
/// spectral cosine takes. The paper's own values of $\sigma_m, \sigma_\iota$
/// are not in the material okr has; choose them by cross-validation.
///
/// **Conventions.** $k(S, S) = 1$ for every spectrum. A spectrum without
/// mass (no peaks, or only peaks of intensity 0 under intensity weights) is
/// the single point $\emptyset$ orthogonal to every other:
/// $k(\emptyset, \emptyset) = 1$, $k(\emptyset, S) = 0$. Likewise with a
/// precursor term, a missing precursor m/z matches only another missing one
/// ($k_p = 1$ for two, 0 for one). Both conventions keep the kernel positive
/// semi-definite (each adds an orthogonal unit feature).
///
/// **Computation.** Peaks are sorted by m/z, so each pair of spectra is one
/// merge-like sweep in $O(\ell + \ell' + \text{close pairs})$: pairs more
/// than [`CUTOFF_SIGMAS`] $\cdot\,\sigma_m$ apart are skipped, and their
/// terms are exactly 0 in `f64`, so the sweep equals the full double sum up
/// to the summation order (all terms are positive: no cancellation); the
/// order is canonical, so $k(S, S') = k(S', S)$ exactly. Gram
/// blocks are filled in tiles, in parallel over rayon with
/// [`Par::Rayon`]; the symmetric Gram computes the lower triangle and
/// mirrors it.
///
/// # Example
/// ```
/// use okr_kernels::{Kernel, Ppk, Spectra, Spectrum};
/// let s = Spectra::new(vec![
///     Spectrum::new(vec![(100.0, 1.0)])?,
///     Spectrum::new(vec![(100.01, 1.0)])?,
///     Spectrum::new(vec![])?,
/// ]);
/// let k = Ppk::new(0.01)?; // sigma_m = 0.01
/// let g = k.gram(&s);
/// // One peak each: exp(-0.01^2 / (4 * 0.01^2)) = exp(-1/4).
/// assert!((g[(0, 1)] - (-0.25f64).exp()).abs() < 1e-12);
/// assert_eq!((g[(0, 0)], g[(2, 2)], g[(0, 2)]), (1.0, 1.0, 0.0));
/// Ok::<(), okr_kernels::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "PpkParams", into = "PpkParams")]
pub struct Ppk {
    params: PpkParams,
}

impl TryFrom<PpkParams> for Ppk {
    type Error = Error;
    fn try_from(p: PpkParams) -> Result<Self> {
        p.check()
    }
}

impl From<Ppk> for PpkParams {
    fn from(k: Ppk) -> Self {
        k.params
    }
}

/// Edge of the output tiles: each entry costs a sweep over two spectra, so
/// small tiles give the rayon pool enough pieces even for a few hundred rows.
const PPK_TILE: usize = 32;

/// A spectrum in the form the sweep reads: the peaks of nonzero weight.
struct Prepared {
    mz: Vec<f64>,
    weight: Vec<f64>,
    /// Relative intensities (empty without an intensity coordinate).
    rel: Vec<f64>,
    precursor: Option<f64>,
    /// $\tilde k(S, S)$; 0 for a spectrum without mass.
    self_product: f64,
}

impl Ppk {
    /// Default parameters ([`PpkParams`]).
    pub fn params() -> PpkParams {
        PpkParams::default()
    }

    /// The kernel with peak width $\sigma_m$ and the other parameters at
    /// their defaults.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] unless `peak_width` is finite and `> 0`.
    pub fn new(peak_width: f64) -> Result<Self> {
        Self::params().peak_width(peak_width).check()
    }

    /// $\sigma_m$ (m/z).
    pub fn peak_width(&self) -> f64 {
        self.params.peak_width
    }
    /// The mixture weights.
    pub fn weights(&self) -> PeakWeights {
        self.params.weights
    }
    /// $\sigma_\iota$, if intensity is a coordinate.
    pub fn intensity_width(&self) -> Option<f64> {
        self.params.intensity_width
    }
    /// $\sigma_p$, if the precursor term is on.
    pub fn precursor_width(&self) -> Option<f64> {
        self.params.precursor_width
    }
    /// The parameters (to change one and [`check`](PpkParams::check) again).
    pub fn to_params(&self) -> PpkParams {
        self.params
    }

    /// The mixture weights $w_i$ of `s`, one per peak in m/z order (summing
    /// to 1, or all 0 for a spectrum without mass).
    pub fn peak_weights(&self, s: &Spectrum) -> Vec<f64> {
        let peaks = s.peaks();
        let max = peaks.iter().map(|p| p.1).fold(0.0, f64::max);
        // Scaled by the maximum first, so that the sum cannot overflow.
        let raw: Vec<f64> = match self.params.weights {
            PeakWeights::Uniform => vec![1.0; peaks.len()],
            PeakWeights::Intensity if max > 0.0 => peaks.iter().map(|p| p.1 / max).collect(),
            PeakWeights::SqrtIntensity if max > 0.0 => peaks.iter().map(|p| (p.1 / max).sqrt()).collect(),
            _ => vec![0.0; peaks.len()],
        };
        let total: f64 = raw.iter().sum();
        if total > 0.0 { raw.iter().map(|w| w / total).collect() } else { raw }
    }

    fn prepare(&self, s: &Spectrum) -> Prepared {
        let w = self.peak_weights(s);
        let max = s.peaks().iter().map(|p| p.1).fold(0.0, f64::max);
        let keep: Vec<usize> = (0..w.len()).filter(|&i| w[i] > 0.0).collect();
        let mut p = Prepared {
            mz: keep.iter().map(|&i| s.peaks()[i].0).collect(),
            weight: keep.iter().map(|&i| w[i]).collect(),
            rel: if self.params.intensity_width.is_some() {
                keep.iter().map(|&i| if max > 0.0 { s.peaks()[i].1 / max } else { 0.0 }).collect()
            } else {
                Vec::new()
            },
            precursor: s.precursor_mz(),
            self_product: 0.0,
        };
        p.self_product = self.sweep(&p, &p);
        p
    }

    /// $\tilde k$ of two prepared spectra by the sorted sweep.
    fn sweep(&self, p: &Prepared, q: &Prepared) -> f64 {
        let sm = self.params.peak_width;
        let a = 1.0 / (4.0 * sm * sm);
        let b = self.params.intensity_width.map_or(0.0, |si| 1.0 / (4.0 * si * si));
        let cut = CUTOFF_SIGMAS * sm;
        let with_rel = !p.rel.is_empty() && !q.rel.is_empty();
        let mut lo = 0;
        let mut total = 0.0;
        for (i, &m) in p.mz.iter().enumerate() {
            while lo < q.mz.len() && q.mz[lo] < m - cut {
                lo += 1;
            }
            let mut acc = 0.0;
            for j in lo..q.mz.len() {
                let d = q.mz[j] - m;
                if d > cut {
                    break;
                }
                let mut z = d * d * a;
                if with_rel {
                    let e = q.rel[j] - p.rel[i];
                    z += e * e * b;
                }
                acc += q.weight[j] * exp(-z);
            }
            total += p.weight[i] * acc;
        }
        total
    }

    /// The sweep with the two spectra in a canonical order, so that
    /// $k(S, S')$ and $k(S', S)$ are the same `f64` (blocks against the
    /// training set then equal the training Gram's rows bit for bit).
    fn symmetric_sweep(&self, p: &Prepared, q: &Prepared) -> f64 {
        let key = |x: &Prepared| (x.mz.len(), x.self_product.to_bits());
        let order = key(p).cmp(&key(q)).then_with(|| {
            let cmp = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| x.total_cmp(y)).find(|o| o.is_ne());
            cmp(&p.mz, &q.mz)
                .or_else(|| cmp(&p.weight, &q.weight))
                .or_else(|| cmp(&p.rel, &q.rel))
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        if order.is_gt() { self.sweep(q, p) } else { self.sweep(p, q) }
    }

    fn normalized(&self, p: &Prepared, q: &Prepared) -> f64 {
        let peaks = match (p.self_product > 0.0, q.self_product > 0.0) {
            (true, true) => self.symmetric_sweep(p, q) / (p.self_product * q.self_product).sqrt(),
            (false, false) => 1.0,
            _ => 0.0,
        };
        let precursor = match (self.params.precursor_width, p.precursor, q.precursor) {
            (None, ..) => 1.0,
            (Some(sp), Some(x), Some(y)) => exp(-(x - y) * (x - y) / (4.0 * sp * sp)),
            (Some(_), None, None) => 1.0,
            (Some(_), ..) => 0.0,
        };
        peaks * precursor
    }

    /// The un-normalized probability product $\tilde k(S, S')$ of the peak
    /// mixtures (the double sum above, without its constant and without the
    /// precursor term), by the sorted sweep.
    ///
    /// # Example
    /// ```
    /// use okr_kernels::{Ppk, Spectrum};
    /// let a = Spectrum::new(vec![(100.0, 3.0), (200.0, 1.0)])?;
    /// let b = Spectrum::new(vec![(100.0, 1.0)])?;
    /// // Weights 3/4, 1/4 and 1; the pair 200 - 100 is far beyond the cut-off.
    /// assert_eq!(Ppk::new(0.01)?.peak_product(&a, &b), 0.75);
    /// Ok::<(), okr_kernels::Error>(())
    /// ```
    pub fn peak_product(&self, a: &Spectrum, b: &Spectrum) -> f64 {
        self.sweep(&self.prepare(a), &self.prepare(b))
    }

    fn prepare_all(&self, s: &Spectra, par: Par) -> Vec<Prepared> {
        use rayon::prelude::*;
        let all: Vec<&Spectrum> = s.iter().collect();
        match par {
            Par::Seq => all.iter().map(|x| self.prepare(x)).collect(),
            Par::Rayon(_) => all.par_iter().map(|x| self.prepare(x)).collect(),
        }
    }
}

impl Kernel<Spectra> for Ppk {
    fn eval(&self, a: &Spectra, i: usize, b: &Spectra, j: usize) -> f64 {
        self.normalized(&self.prepare(a.spectrum(i)), &self.prepare(b.spectrum(j)))
    }

    #[track_caller]
    fn gram_block_into(&self, a: &Spectra, b: &Spectra, dst: MatMut<'_, f64>, par: Par) {
        assert_eq!((dst.nrows(), dst.ncols()), (a.n_rows(), b.n_rows()), "gram block shape");
        let (pa, pb) = (self.prepare_all(a, par), self.prepare_all(b, par));
        for_each_tile(dst, PPK_TILE, PPK_TILE, par, |rows, cols, mut tile, _, _| {
            for (jj, j) in cols.enumerate() {
                for (ii, i) in rows.clone().enumerate() {
                    tile[(ii, jj)] = self.normalized(&pa[i], &pb[j]);
                }
            }
        });
    }

    #[track_caller]
    fn gram_into(&self, a: &Spectra, dst: MatMut<'_, f64>, par: Par) {
        assert_eq!((dst.nrows(), dst.ncols()), (a.n_rows(), a.n_rows()), "gram shape");
        let p = self.prepare_all(a, par);
        for_each_tile_sym(dst, PPK_TILE, par, |rows, cols, mut tile, _, _| {
            for (jj, j) in cols.enumerate() {
                for (ii, i) in rows.clone().enumerate() {
                    // The driver mirrors the lower part of diagonal tiles.
                    if i >= j {
                        tile[(ii, jj)] = if i == j { 1.0 } else { self.normalized(&p[i], &p[j]) };
                    }
                }
            }
        });
    }

    fn diag(&self, a: &Spectra) -> Vec<f64> {
        vec![1.0; a.n_rows()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peaks_are_checked_and_sorted() {
        let s = Spectrum::new(vec![(3.0, 1.0), (1.0, 2.0), (3.0, 0.5)]).unwrap();
        assert_eq!(s.peaks(), &[(1.0, 2.0), (3.0, 0.5), (3.0, 1.0)]);
        for (peak, what) in [
            ((0.0, 1.0), "m/z"),
            ((f64::NAN, 1.0), "m/z"),
            ((f64::INFINITY, 1.0), "m/z"),
            ((1.0, -1.0), "intensity"),
            ((1.0, f64::NAN), "intensity"),
            ((1.0, f64::INFINITY), "intensity"),
        ] {
            let err = Spectrum::new(vec![(5.0, 1.0), peak]).unwrap_err();
            assert!(matches!(&err, Error::InvalidPeak { index: 1, expected, .. } if expected.contains(what)), "{err}");
        }
        let err = Spectrum::new(vec![(1.0, 1.0); MAX_PEAKS + 1]).unwrap_err();
        assert_eq!(err, Error::TooManyPeaks { n_peaks: MAX_PEAKS + 1, max: MAX_PEAKS });
        for bad in [0.0, -1.0, f64::NAN] {
            assert!(matches!(Spectrum::empty().with_precursor_mz(bad), Err(Error::InvalidPrecursor { .. })));
        }
        assert_eq!(
            Spectrum::new(vec![(1.0, -0.5)]).unwrap_err().to_string(),
            "invalid peak 0 (m/z 1, intensity -0.5): expected an intensity that is finite and >= 0"
        );
    }

    /// Deserialized spectra and kernels are checked like constructed ones.
    #[test]
    fn serde_round_trip_and_checks() {
        let s = Spectrum::new(vec![(10.0, 1.0), (5.0, 2.0)])
            .unwrap()
            .with_precursor_mz(20.0)
            .unwrap()
            .with_charge(-1)
            .with_ion_mode(IonMode::Negative);
        let set = Spectra::new(vec![s.clone(), Spectrum::empty()]).select(&[1, 0]);
        let json = serde_json::to_string(&set).unwrap();
        let back: Spectra = serde_json::from_str(&json).unwrap();
        assert_eq!(back.spectrum(1), &s);
        assert_eq!(back.n_rows(), 2);
        let bytes = postcard::to_stdvec(&set).unwrap();
        assert_eq!(postcard::from_bytes::<Spectra>(&bytes).unwrap().spectrum(1), &s);
        for bad in [
            r#"{"peaks":[[-1.0,1.0]],"precursor_mz":null,"charge":null,"ion_mode":null}"#,
            r#"{"peaks":[[1.0,-1.0]],"precursor_mz":null,"charge":null,"ion_mode":null}"#,
            r#"{"peaks":[],"precursor_mz":0.0,"charge":null,"ion_mode":null}"#,
        ] {
            assert!(serde_json::from_str::<Spectrum>(bad).is_err(), "{bad}");
        }
        // Unsorted peaks come back sorted.
        let s: Spectrum = serde_json::from_str(
            r#"{"peaks":[[2.0,1.0],[1.0,1.0]],"precursor_mz":null,"charge":3,"ion_mode":"Positive"}"#,
        )
        .unwrap();
        assert_eq!((s.peaks()[0].0, s.charge(), s.ion_mode()), (1.0, Some(3), Some(IonMode::Positive)));

        let k = Ppk::params().weights(PeakWeights::SqrtIntensity).precursor_width(Some(0.5)).check().unwrap();
        let json = serde_json::to_string(&k).unwrap();
        assert_eq!(serde_json::from_str::<Ppk>(&json).unwrap(), k);
        let bad = json.replace("0.01", "-0.01");
        assert!(serde_json::from_str::<Ppk>(&bad).is_err(), "{bad}");
    }

    #[test]
    fn weights_by_hand() {
        let s = Spectrum::new(vec![(1.0, 4.0), (2.0, 0.0), (3.0, 12.0)]).unwrap();
        let w = |weights| Ppk::params().weights(weights).check().unwrap().peak_weights(&s);
        assert_eq!(w(PeakWeights::Uniform), vec![1.0 / 3.0; 3]);
        assert_eq!(w(PeakWeights::Intensity), vec![0.25, 0.0, 0.75]);
        let r = 3f64.sqrt();
        let got = w(PeakWeights::SqrtIntensity);
        for (g, e) in got.iter().zip([1.0 / (1.0 + r), 0.0, r / (1.0 + r)]) {
            assert!((g - e).abs() < 1e-15, "{got:?}");
        }
        // Huge intensities do not overflow the sum.
        let big = Spectrum::new(vec![(1.0, f64::MAX), (2.0, f64::MAX)]).unwrap();
        assert_eq!(Ppk::new(1.0).unwrap().peak_weights(&big), vec![0.5, 0.5]);
        assert_eq!(PeakWeights::from_name("sqrt-intensity"), Some(PeakWeights::SqrtIntensity));
        assert_eq!(PeakWeights::from_name("x"), None);
    }

    /// Hand values: two peaks against one, with intensity and precursor terms.
    #[test]
    fn kernel_by_hand() {
        let a = Spectrum::new(vec![(100.0, 1.0), (100.2, 1.0)]).unwrap().with_precursor_mz(300.0).unwrap();
        let b = Spectrum::new(vec![(100.1, 2.0)]).unwrap().with_precursor_mz(300.5).unwrap();
        let set = Spectra::new(vec![a, b]);
        let k = Ppk::params().peak_width(0.1).check().unwrap();
        // Weights (1/2, 1/2) and (1). z = d^2 / (4 * 0.01): d = 0.1 -> 1/4; d = 0.2 -> 1.
        let kab = 0.5 * (-0.25f64).exp() * 2.0;
        let kaa = 0.5 * 0.5 * (2.0 + 2.0 * (-1.0f64).exp());
        let want = kab / kaa.sqrt();
        assert!((k.eval(&set, 0, &set, 1) - want).abs() < 1e-12);
        let kp = Ppk::params().peak_width(0.1).precursor_width(Some(0.5)).check().unwrap();
        let want_p = want * (-0.25f64 / 1.0).exp(); // (0.5)^2 / (4 * 0.25)
        assert!((kp.eval(&set, 0, &set, 1) - want_p).abs() < 1e-12);
        // Relative intensities: a (1, 1), b (1): no intensity difference.
        let ki = Ppk::params().peak_width(0.1).intensity_width(Some(0.3)).check().unwrap();
        assert!((ki.eval(&set, 0, &set, 1) - want).abs() < 1e-12);
    }

    #[test]
    fn empty_spectra_and_missing_precursors() {
        let full = Spectrum::new(vec![(50.0, 1.0)]).unwrap().with_precursor_mz(80.0).unwrap();
        let zero = Spectrum::new(vec![(50.0, 0.0)]).unwrap();
        let set =
            Spectra::new(vec![full.clone(), Spectrum::empty(), zero.clone(), full.with_precursor_mz(80.1).unwrap()]);
        let k = Ppk::new(0.01).unwrap();
        let g = k.gram(&set);
        // Intensity weights: the zero-intensity spectrum has no mass, like the empty one.
        assert_eq!((g[(1, 2)], g[(0, 1)], g[(0, 2)], g[(0, 3)]), (1.0, 0.0, 0.0, 1.0));
        // Uniform weights give the zero-intensity peak its weight.
        let u = Ppk::params().weights(PeakWeights::Uniform).check().unwrap();
        assert_eq!(u.eval(&set, 0, &set, 2), 1.0);
        assert_eq!(u.eval(&set, 1, &set, 2), 0.0);
        let p = Ppk::params().precursor_width(Some(0.1)).check().unwrap();
        let g = p.gram(&set);
        assert_eq!((g[(1, 2)], g[(0, 1)]), (1.0, 0.0));
        assert!((g[(0, 3)] - (-0.01f64 / 0.04).exp()).abs() < 1e-12);
        assert_eq!(p.diag(&set), vec![1.0; 4]);
    }

    #[test]
    fn invalid_parameters_are_errors() {
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(matches!(Ppk::new(bad), Err(Error::InvalidParameter { name: "peak_width", .. })));
            let e = Ppk::params().intensity_width(Some(bad)).check().unwrap_err();
            assert!(matches!(e, Error::InvalidParameter { name: "intensity_width", .. }));
            let e = Ppk::params().precursor_width(Some(bad)).check().unwrap_err();
            assert!(matches!(e, Error::InvalidParameter { name: "precursor_width", .. }));
        }
    }

    #[test]
    fn cutoff_terms_are_zero_in_f64() {
        let z = (CUTOFF_SIGMAS * CUTOFF_SIGMAS) / 4.0;
        assert!((z - 750.0).abs() < 1e-9);
        assert_eq!((-z).exp(), 0.0);
        assert_eq!(exp(-z), 0.0);
        assert!((-744.0f64).exp() > 0.0);
    }
}
