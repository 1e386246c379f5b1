//! Oracle tests of the probability product kernel on spectra: the sorted
//! sweep against a brute-force double sum over every pair of peaks, and the
//! Gram matrices (symmetric, unit diagonal, positive semi-definite).

use faer::{Mat, Par};
use okr_kernels::{IonMode, Kernel, PeakWeights, Ppk, Rows, Spectra, Spectrum};
use proptest::prelude::*;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The kernel's definition, written out independently: weights, relative
/// intensities and the full double sum with `f64::exp`.
struct Brute {
    sigma: f64,
    weights: PeakWeights,
    intensity_width: Option<f64>,
    precursor_width: Option<f64>,
}

impl Brute {
    fn of(k: &Ppk) -> Self {
        Self {
            sigma: k.peak_width(),
            weights: k.weights(),
            intensity_width: k.intensity_width(),
            precursor_width: k.precursor_width(),
        }
    }

    fn weights(&self, s: &Spectrum) -> Vec<f64> {
        let raw: Vec<f64> = s
            .peaks()
            .iter()
            .map(|&(_, i)| match self.weights {
                PeakWeights::Uniform => 1.0,
                PeakWeights::Intensity => i,
                PeakWeights::SqrtIntensity => i.sqrt(),
            })
            .collect();
        let total: f64 = raw.iter().sum();
        raw.iter().map(|w| if total > 0.0 { w / total } else { 0.0 }).collect()
    }

    fn raw(&self, a: &Spectrum, b: &Spectrum) -> f64 {
        let (wa, wb) = (self.weights(a), self.weights(b));
        let rel = |s: &Spectrum| {
            let max = s.peaks().iter().map(|p| p.1).fold(0.0, f64::max);
            s.peaks().iter().map(|p| if max > 0.0 { p.1 / max } else { 0.0 }).collect::<Vec<f64>>()
        };
        let (ra, rb) = (rel(a), rel(b));
        let mut total = 0.0;
        for (i, pa) in a.peaks().iter().enumerate() {
            for (j, pb) in b.peaks().iter().enumerate() {
                let mut z = (pa.0 - pb.0).powi(2) / (4.0 * self.sigma * self.sigma);
                if let Some(si) = self.intensity_width {
                    z += (ra[i] - rb[j]).powi(2) / (4.0 * si * si);
                }
                total += wa[i] * wb[j] * (-z).exp();
            }
        }
        total
    }

    fn kernel(&self, a: &Spectrum, b: &Spectrum) -> f64 {
        let (aa, bb) = (self.raw(a, a), self.raw(b, b));
        let peaks = match (aa > 0.0, bb > 0.0) {
            (true, true) => self.raw(a, b) / (aa * bb).sqrt(),
            (false, false) => 1.0,
            _ => 0.0,
        };
        let precursor = match (self.precursor_width, a.precursor_mz(), b.precursor_mz()) {
            (None, ..) | (Some(_), None, None) => 1.0,
            (Some(sp), Some(x), Some(y)) => (-(x - y).powi(2) / (4.0 * sp * sp)).exp(),
            _ => 0.0,
        };
        peaks * precursor
    }
}

fn close(got: f64, want: f64, rel: f64) -> bool {
    (got - want).abs() <= rel * want.abs() + 1e-300
}

/// Spectra whose peaks cluster around a few m/z values, spread over about
/// ±70 peak widths, so that pairs fall on both sides of the cut-off and some
/// spectra share precursors.
fn random_spectra(rng: &mut ChaCha8Rng, n: usize, sigma: f64) -> Spectra {
    let centers: Vec<f64> = (0..6).map(|_| rng.random_range(100.0..500.0)).collect();
    let spectra = (0..n)
        .map(|_| {
            let n_peaks = match rng.random_range(0..10u32) {
                0 => 0,
                1 => 1,
                _ => rng.random_range(2..40),
            };
            let peaks = (0..n_peaks)
                .map(|_| {
                    let c = centers[rng.random_range(0..centers.len())];
                    let mz = c + sigma * rng.random_range(-70.0..70.0);
                    let intensity = if rng.random_range(0..8u32) == 0 { 0.0 } else { rng.random_range(0.0..1000.0) };
                    (mz, intensity)
                })
                .collect();
            let mut s = Spectrum::new(peaks).unwrap();
            if rng.random_range(0..5u32) > 0 {
                let p = centers[rng.random_range(0..2)] + rng.random_range(-1.0..1.0);
                s = s.with_precursor_mz(p).unwrap().with_charge(1).with_ion_mode(IonMode::Positive);
            }
            s
        })
        .collect();
    Spectra::new(spectra)
}

fn random_kernel(rng: &mut ChaCha8Rng, sigma: f64) -> Ppk {
    let weights = [PeakWeights::Uniform, PeakWeights::Intensity, PeakWeights::SqrtIntensity][rng.random_range(0..3)];
    let intensity_width = (rng.random_range(0..2u32) == 0).then(|| rng.random_range(0.05..2.0));
    let precursor_width = (rng.random_range(0..2u32) == 0).then(|| rng.random_range(0.01..1.0));
    Ppk::params()
        .peak_width(sigma)
        .weights(weights)
        .intensity_width(intensity_width)
        .precursor_width(precursor_width)
        .check()
        .unwrap()
}

fn min_eigenvalue(k: &Mat<f64>) -> f64 {
    let eig = okr_linalg::eigh(k.as_ref()).unwrap();
    eig.values().iter().copied().fold(f64::INFINITY, f64::min)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// The sweep equals the full double sum over peak pairs to 1e-12
    /// relative, un-normalized and normalized, pointwise and in blocks.
    #[test]
    fn sweep_equals_brute_force_double_sum(seed in any::<u64>(), n in 1usize..9, log_sigma in -3.0f64..0.0) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let sigma = 10f64.powf(log_sigma);
        let x = random_spectra(&mut rng, n, sigma);
        let k = random_kernel(&mut rng, sigma);
        let brute = Brute::of(&k);
        let par = if seed % 2 == 0 { Par::Seq } else { Par::rayon(2) };
        let block = {
            let mut m = Mat::zeros(n, n);
            k.gram_block_into(&x, &x.select(&(0..n).rev().collect::<Vec<_>>()), m.as_mut(), par);
            m
        };
        for i in 0..n {
            for j in 0..n {
                let (a, b) = (x.spectrum(i), x.spectrum(j));
                let (got, want) = (k.peak_product(a, b), brute.raw(a, b));
                prop_assert!(close(got, want, 1e-12), "raw ({i},{j}): {got} != {want}");
                let want = brute.kernel(a, b);
                let got = k.eval(&x, i, &x, j);
                prop_assert!(close(got, want, 1e-12), "kernel ({i},{j}): {got} != {want} ({k:?})");
                prop_assert_eq!(block[(i, n - 1 - j)], got);
            }
        }
    }

    /// Gram matrices: exactly symmetric, unit diagonal, equal to `eval`,
    /// positive semi-definite (smallest eigenvalue >= -1e-10); the block of
    /// a test set against a training set equals `eval` too.
    #[test]
    fn grams_are_symmetric_unit_diagonal_psd(seed in any::<u64>(), n in 1usize..40, log_sigma in -2.5f64..0.0) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let sigma = 10f64.powf(log_sigma);
        let x = random_spectra(&mut rng, n, sigma);
        let k = random_kernel(&mut rng, sigma);
        let par = if seed % 2 == 0 { Par::Seq } else { Par::rayon(2) };
        let mut g = Mat::zeros(n, n);
        k.gram_into(&x, g.as_mut(), par);
        for i in 0..n {
            prop_assert_eq!(g[(i, i)], 1.0);
            prop_assert_eq!(k.eval(&x, i, &x, i), 1.0);
            for j in 0..n {
                prop_assert_eq!(g[(i, j)], g[(j, i)]);
                let e = k.eval(&x, i, &x, j);
                prop_assert_eq!(g[(i, j)], e, "({}, {})", i, j);
                prop_assert!((0.0..=1.0 + 1e-12).contains(&g[(i, j)]));
            }
        }
        prop_assert_eq!(k.diag(&x), vec![1.0; n]);
        let lmin = min_eigenvalue(&g);
        prop_assert!(lmin >= -1e-10, "min eigenvalue {lmin}");
        let test = x.select(&[n - 1, 0]);
        let b = k.gram_block(&test, &x);
        for j in 0..n {
            prop_assert_eq!(b[(0, j)], g[(n - 1, j)]);
            prop_assert_eq!(b[(1, j)], g[(0, j)]);
        }
    }
}

/// A Gram with more rows than one tile (tiles of 32), in parallel and
/// sequentially: the same values.
#[test]
fn gram_over_several_tiles_matches_sequential() {
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    let x = random_spectra(&mut rng, 75, 0.01);
    let k = Ppk::params().weights(PeakWeights::SqrtIntensity).precursor_width(Some(0.3)).check().unwrap();
    let mut seq = Mat::zeros(75, 75);
    k.gram_into(&x, seq.as_mut(), Par::Seq);
    let mut par = Mat::zeros(75, 75);
    k.gram_into(&x, par.as_mut(), Par::rayon(2));
    assert_eq!(seq, par);
    let brute = Brute::of(&k);
    for (i, j) in [(0, 74), (40, 3), (70, 33)] {
        assert!(close(seq[(i, j)], brute.kernel(x.spectrum(i), x.spectrum(j)), 1e-12));
    }
    assert!(min_eigenvalue(&seq) >= -1e-10);
    // A row-major destination (transposed view) gets the same block.
    let mut t = Mat::zeros(75, 75);
    k.gram_block_into(&x, &x, t.as_mut().transpose_mut(), Par::rayon(2));
    assert_eq!(t.transpose().to_owned(), seq);
}

/// Empty spectra (no peaks, or only zero intensities under intensity
/// weights) are one point orthogonal to the rest: 1 with each other, 0 with
/// any spectrum with mass; the Gram stays PSD.
#[test]
fn empty_spectra_are_one_orthogonal_point() {
    let s = Spectra::new(vec![
        Spectrum::empty(),
        Spectrum::new(vec![(100.0, 5.0)]).unwrap(),
        Spectrum::new(vec![(100.0, 0.0), (120.0, 0.0)]).unwrap(),
        Spectrum::empty(),
    ]);
    let g = Ppk::new(0.01).unwrap().gram(&s);
    let want = [[1.0, 0.0, 1.0, 1.0], [0.0, 1.0, 0.0, 0.0], [1.0, 0.0, 1.0, 1.0], [1.0, 0.0, 1.0, 1.0]];
    for i in 0..4 {
        for j in 0..4 {
            assert_eq!(g[(i, j)], want[i][j], "({i},{j})");
        }
    }
    assert!(min_eigenvalue(&g) >= -1e-12);
    assert_eq!(Ppk::new(0.01).unwrap().peak_product(s.spectrum(0), s.spectrum(1)), 0.0);
}
