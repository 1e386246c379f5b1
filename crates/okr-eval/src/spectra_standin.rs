//! A seeded stand-in for metabolite identification from MS/MS spectra:
//! molecules as binary fingerprints, grouped by a molecular formula label,
//! each measured by one to three spectra whose peaks depend on its
//! fingerprint bits, and per-formula candidate sets.
//!
//! **A stand-in, not chemistry.** Formulas are labels (`F0007`), masses are
//! random numbers, fragments are planted: each fingerprint bit owns one
//! fragment m/z, and a molecule's spectrum shows the fragments of (most of)
//! its set bits plus noise peaks. So a spectrum carries information about
//! its fingerprint, which is all that the identification workflow (input
//! kernel on spectra, fingerprint outputs, ranking the candidates of the
//! query's formula) needs to run and to learn; what it scores here says
//! nothing about real spectra. Records of such runs carry `stand_in: true`
//! and the data set name `metabolite-standin`.
//!
//! # The model
//!
//! 1. Each of `n_formulas` formulas gets a precursor m/z $M_f \sim U(150,
//!    900)$ and a prototype fingerprint (each bit set with probability
//!    `bit_density`).
//! 2. Molecules: `n_molecules` measured ones (formula uniform at random,
//!    every formula used at least once),
//!    then `decoys_per_formula` unmeasured ones per formula. A molecule's
//!    fingerprint is its formula's prototype with each bit redrawn (set
//!    with probability `bit_density`) with probability `redraw`, so
//!    candidates of one formula look alike and the density is kept.
//! 3. Every bit $b$ owns a fragment m/z $\mu_b \sim U(40, 600)$.
//! 4. Each measured molecule has 1 to 3 spectra (uniform). A spectrum has,
//!    for each set bit, with probability `detect`, a peak at $\mu_b +
//!    \varepsilon$ ($\varepsilon \sim N(0, \text{mass\_noise}^2)$) of
//!    intensity $100 e^{z}$, $z \sim N(0, 1)$; plus `noise_peaks` peaks at
//!    uniform m/z in $[40, 600]$ of intensity $10 e^{z}$; precursor m/z
//!    $M_f + \varepsilon$, charge 1, positive mode.
//!
//! Everything comes from one `ChaCha8Rng` stream seeded with `seed`.

use okr_kernels::{IonMode, LabelSets, Spectra, Spectrum};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// The most molecules times fingerprint bits a stand-in may hold ($2^{28}$).
pub const MAX_SPECTRA_STANDIN_BITS: usize = 1 << 28;

/// The knobs of the spectra stand-in. Setters store; [`generate`](Self::generate)
/// validates.
///
/// | Name | Default | Purpose | Range |
/// |---|---|---|---|
/// | `n_molecules` | (given) | measured molecules (with spectra) | `>= 1` |
/// | `n_bits` | 256 | fingerprint length | `>= 1` |
/// | `bit_density` | 0.15 | probability that a prototype bit is set | `(0, 1)` |
/// | `n_formulas` | (given) | formula groups (candidate sets) | `1..=n_molecules` |
/// | `decoys_per_formula` | 20 | unmeasured candidates per formula | |
/// | `redraw` | 0.2 | probability that a bit of the formula prototype is redrawn | `[0, 1]` |
/// | `detect` | 0.7 | probability that a set bit's fragment is seen | `[0, 1]` |
/// | `noise_peaks` | 8 | random peaks per spectrum | `<= 10000` |
/// | `mass_noise` | 0.002 | m/z noise (standard deviation) of peaks and precursors | finite, `>= 0` |
/// | `seed` | 0 | RNG seed | any |
///
/// With the defaults a spectrum has about $0.7 \cdot 0.15 \cdot 256 + 8
/// \approx 35$ peaks.
///
/// # Example
/// ```
/// use okr_eval::SpectraStandinSpec;
/// let data = SpectraStandinSpec::new(60, 6).seed(1).generate()?;
/// assert_eq!(data.formula.len(), 60 + 6 * 20); // measured + decoys
/// assert_eq!(data.candidates.len(), 6);
/// assert!((60..=180).contains(&data.molecule.len())); // 1 to 3 spectra each
/// // The candidate set of a spectrum's formula holds its molecule.
/// let m = data.molecule[0];
/// assert!(data.candidates[data.formula[m]].contains(&m));
/// assert_eq!(SpectraStandinSpec::new(60, 6).seed(1).generate()?, data); // seeded
/// Ok::<(), okr_eval::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpectraStandinSpec {
    /// Measured molecules.
    pub n_molecules: usize,
    /// Fingerprint length.
    pub n_bits: usize,
    /// Probability that a prototype bit is set.
    pub bit_density: f64,
    /// Number of formulas.
    pub n_formulas: usize,
    /// Unmeasured candidate molecules per formula.
    pub decoys_per_formula: usize,
    /// Probability that a bit of the formula prototype is redrawn.
    pub redraw: f64,
    /// Probability that a set bit's fragment appears in a spectrum.
    pub detect: f64,
    /// Random peaks per spectrum.
    pub noise_peaks: usize,
    /// Standard deviation of the m/z noise.
    pub mass_noise: f64,
    /// RNG seed.
    pub seed: u64,
}

/// A generated stand-in: spectra, the molecule of each, fingerprints,
/// formulas and candidate sets.
#[derive(Debug, Clone, PartialEq)]
pub struct SpectraStandin {
    /// All spectra, grouped by molecule (molecule 0's first).
    pub spectra: Spectra,
    /// For each spectrum, its molecule (an index into `fingerprints`); the
    /// groups of structure-grouped folds.
    pub molecule: Vec<usize>,
    /// Fingerprints of all molecules, measured ones first, then the decoys.
    pub fingerprints: LabelSets,
    /// For each molecule, its formula (an index into `candidates`).
    pub formula: Vec<usize>,
    /// For each formula, its molecules in increasing index order (the
    /// candidate set of a query of that formula).
    pub candidates: Vec<Vec<usize>>,
}

impl SpectraStandin {
    /// The formula label of formula `f` (`F0007`).
    pub fn formula_name(f: usize) -> String {
        format!("F{f:04}")
    }
    /// The data set name of records from this stand-in.
    pub fn dataset_name() -> &'static str {
        "metabolite-standin"
    }
}

impl SpectraStandinSpec {
    /// `n_molecules` measured molecules over `n_formulas` formulas, other
    /// knobs at their defaults (see the table).
    pub fn new(n_molecules: usize, n_formulas: usize) -> Self {
        Self {
            n_molecules,
            n_bits: 256,
            bit_density: 0.15,
            n_formulas,
            decoys_per_formula: 20,
            redraw: 0.2,
            detect: 0.7,
            noise_peaks: 8,
            mass_noise: 0.002,
            seed: 0,
        }
    }
    /// Sets the fingerprint length.
    pub fn n_bits(mut self, n_bits: usize) -> Self {
        self.n_bits = n_bits;
        self
    }
    /// Sets the prototype bit density.
    pub fn bit_density(mut self, p: f64) -> Self {
        self.bit_density = p;
        self
    }
    /// Sets the number of decoy candidates per formula.
    pub fn decoys_per_formula(mut self, n: usize) -> Self {
        self.decoys_per_formula = n;
        self
    }
    /// Sets the probability that a prototype bit is redrawn.
    pub fn redraw(mut self, p: f64) -> Self {
        self.redraw = p;
        self
    }
    /// Sets the fragment detection probability.
    pub fn detect(mut self, p: f64) -> Self {
        self.detect = p;
        self
    }
    /// Sets the number of noise peaks per spectrum.
    pub fn noise_peaks(mut self, n: usize) -> Self {
        self.noise_peaks = n;
        self
    }
    /// Sets the m/z noise.
    pub fn mass_noise(mut self, sd: f64) -> Self {
        self.mass_noise = sd;
        self
    }
    /// Sets the seed.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Validates the spec.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming the first field out of range
    /// (including sizes above [`MAX_SPECTRA_STANDIN_BITS`]).
    pub fn check(&self) -> Result<()> {
        if self.n_molecules == 0 {
            return Err(Error::invalid("n_molecules", 0, "n_molecules >= 1"));
        }
        if self.n_bits == 0 {
            return Err(Error::invalid("n_bits", 0, "n_bits >= 1"));
        }
        if !(1..=self.n_molecules).contains(&self.n_formulas) {
            return Err(Error::invalid(
                "n_formulas",
                self.n_formulas,
                format!("1 <= n_formulas <= n_molecules = {}", self.n_molecules),
            ));
        }
        if !(self.bit_density > 0.0 && self.bit_density < 1.0) {
            return Err(Error::invalid("bit_density", self.bit_density, "0 < bit_density < 1"));
        }
        for (name, p) in [("redraw", self.redraw), ("detect", self.detect)] {
            if !(0.0..=1.0).contains(&p) {
                return Err(Error::invalid(name, p, format!("0 <= {name} <= 1")));
            }
        }
        if self.noise_peaks > 10_000 {
            return Err(Error::invalid("noise_peaks", self.noise_peaks, "noise_peaks <= 10000"));
        }
        if !(self.mass_noise.is_finite() && self.mass_noise >= 0.0) {
            return Err(Error::invalid("mass_noise", self.mass_noise, "finite and >= 0"));
        }
        let molecules =
            self.decoys_per_formula.checked_mul(self.n_formulas).and_then(|d| d.checked_add(self.n_molecules));
        if molecules.and_then(|m| m.checked_mul(self.n_bits)).is_none_or(|v| v > MAX_SPECTRA_STANDIN_BITS) {
            return Err(Error::invalid(
                "n_molecules + decoys",
                format!(
                    "({} + {} x {}) x {} bits",
                    self.n_molecules, self.n_formulas, self.decoys_per_formula, self.n_bits
                ),
                format!("at most {MAX_SPECTRA_STANDIN_BITS} fingerprint bits in all"),
            ));
        }
        Ok(())
    }

    /// Generates the stand-in; deterministic for the spec (seed included).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] from [`check`](Self::check).
    pub fn generate(&self) -> Result<SpectraStandin> {
        self.check()?;
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        let (nb, nf) = (self.n_bits, self.n_formulas);
        let precursor: Vec<f64> = (0..nf).map(|_| rng.random_range(150.0..900.0)).collect();
        let prototypes: Vec<Vec<bool>> =
            (0..nf).map(|_| (0..nb).map(|_| rng.random_bool(self.bit_density)).collect()).collect();
        let fragment: Vec<f64> = (0..nb).map(|_| rng.random_range(40.0..600.0)).collect();

        // Formulas of the measured molecules: each formula once (when there
        // are enough molecules), the rest at random, in shuffled order.
        let mut formula: Vec<usize> =
            (0..self.n_molecules).map(|i| if i < nf { i } else { rng.random_range(0..nf) }).collect();
        for i in (1..formula.len()).rev() {
            formula.swap(i, rng.random_range(0..=i));
        }
        formula.extend((0..nf).flat_map(|f| std::iter::repeat_n(f, self.decoys_per_formula)));

        let mut sets = Vec::with_capacity(formula.len());
        for &f in &formula {
            let bits: Vec<usize> =
                (0..nb)
                    .filter(|&b| {
                        if rng.random_bool(self.redraw) { rng.random_bool(self.bit_density) } else { prototypes[f][b] }
                    })
                    .collect();
            sets.push(bits);
        }
        let mut spectra = Vec::new();
        let mut molecule = Vec::new();
        for m in 0..self.n_molecules {
            for _ in 0..rng.random_range(1..=3u32) {
                let mut peaks = Vec::with_capacity(sets[m].len() + self.noise_peaks);
                for &b in &sets[m] {
                    if rng.random_bool(self.detect) {
                        let mz = fragment[b] + self.mass_noise * normal(&mut rng);
                        peaks.push((mz, 100.0 * normal(&mut rng).exp()));
                    }
                }
                for _ in 0..self.noise_peaks {
                    peaks.push((rng.random_range(40.0..600.0), 10.0 * normal(&mut rng).exp()));
                }
                let prec = precursor[formula[m]] + self.mass_noise * normal(&mut rng);
                let s = Spectrum::new(peaks)?.with_precursor_mz(prec)?.with_charge(1).with_ion_mode(IonMode::Positive);
                spectra.push(s);
                molecule.push(m);
            }
        }
        let mut candidates = vec![Vec::new(); nf];
        for (m, &f) in formula.iter().enumerate() {
            candidates[f].push(m);
        }
        Ok(SpectraStandin {
            spectra: Spectra::new(spectra),
            molecule,
            fingerprints: LabelSets::new(nb, sets)?,
            formula,
            candidates,
        })
    }
}

/// A standard normal draw (Box-Muller).
fn normal(rng: &mut ChaCha8Rng) -> f64 {
    let u: f64 = 1.0 - rng.random::<f64>(); // (0, 1]
    let v: f64 = rng.random();
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

#[cfg(test)]
mod tests {
    use super::*;
    use okr_kernels::{Kernel, Ppk, Rows};

    #[test]
    fn shapes_groups_and_determinism() {
        let spec = SpectraStandinSpec::new(40, 5).decoys_per_formula(7).seed(3);
        let d = spec.generate().unwrap();
        assert_eq!(d.fingerprints.n_rows(), 40 + 35);
        assert_eq!(d.spectra.n_rows(), d.molecule.len());
        assert!(d.molecule.windows(2).all(|w| w[0] <= w[1]));
        assert!((0..40).all(|m| (1..=3).contains(&d.molecule.iter().filter(|&&x| x == m).count())));
        assert!(d.candidates.iter().all(|c| c.len() >= 8 && c.windows(2).all(|w| w[0] < w[1])));
        let peaks: usize = d.spectra.iter().map(Spectrum::n_peaks).sum();
        let mean = peaks as f64 / d.spectra.n_rows() as f64;
        assert!((25.0..45.0).contains(&mean), "{mean}");
        assert_eq!(spec.generate().unwrap(), d);
        assert_ne!(spec.clone().seed(4).generate().unwrap(), d);
        assert_eq!(SpectraStandin::formula_name(7), "F0007");
    }

    /// Spectra carry their fingerprints: under the kernel, two spectra of
    /// one molecule are closer on average than spectra of two molecules of
    /// one formula (which share most bits), and those closer than spectra of
    /// two formulas.
    #[test]
    fn spectra_carry_the_fingerprint() {
        let d = SpectraStandinSpec::new(60, 4).seed(0).generate().unwrap();
        let g = Ppk::new(0.01).unwrap().gram(&d.spectra);
        let mut sums = [(0.0, 0usize); 3]; // same molecule, same formula, other formula
        for i in 0..d.molecule.len() {
            for j in 0..i {
                let (mi, mj) = (d.molecule[i], d.molecule[j]);
                let k = if mi == mj {
                    0
                } else if d.formula[mi] == d.formula[mj] {
                    1
                } else {
                    2
                };
                sums[k].0 += g[(i, j)];
                sums[k].1 += 1;
            }
        }
        let [same, formula, other] = sums.map(|(s, n)| s / n as f64);
        assert!(same > formula + 0.05 && formula > other + 0.05, "{same} {formula} {other}");
    }

    #[test]
    fn invalid_specs_are_errors() {
        for (spec, name) in [
            (SpectraStandinSpec::new(0, 1), "n_molecules"),
            (SpectraStandinSpec::new(5, 6), "n_formulas"),
            (SpectraStandinSpec::new(5, 0), "n_formulas"),
            (SpectraStandinSpec::new(5, 1).n_bits(0), "n_bits"),
            (SpectraStandinSpec::new(5, 1).bit_density(1.0), "bit_density"),
            (SpectraStandinSpec::new(5, 1).redraw(-0.1), "redraw"),
            (SpectraStandinSpec::new(5, 1).detect(f64::NAN), "detect"),
            (SpectraStandinSpec::new(5, 1).mass_noise(-1.0), "mass_noise"),
            (SpectraStandinSpec::new(5, 1).noise_peaks(20_000), "noise_peaks"),
            (SpectraStandinSpec::new(5, 1).n_bits(1 << 30), "n_molecules + decoys"),
        ] {
            match spec.generate() {
                Err(Error::InvalidArgument { name: n, .. }) => assert_eq!(n, name),
                other => panic!("{name}: {other:?}"),
            }
        }
    }
}
