//! Seeded multi-label stand-in generators with the shapes of the benchmark sets.
//!
//! **Results on stand-ins are stand-ins**: they check that a method runs at a
//! given shape and that it learns a planted structure, not what it scores on the
//! real data. Records of such runs carry `stand_in: true` and the data set name
//! `<shape>-standin` ([`StandinSpec::dataset_name`]).
//!
//! # The model (a small topic model, after leml.md's generator G1)
//!
//! Shared latent topics drive both features and labels, so `E[y | x]` has a
//! low-rank structure a kernel method can learn:
//!
//! 1. Labels (and, for sparse data, features) get a Zipf popularity
//!    ($\propto 1/\mathrm{rank}$) over a random permutation.
//! 2. Each of `r` topics has a label distribution $\psi_t$ over about $3L/r$
//!    labels (drawn by popularity, Zipf weights inside) and either a feature
//!    vocabulary $\phi_t$ of about $4\bar d$ features (sparse data) or a Gaussian
//!    prototype $\mu_t \sim N(0, I_d)$ (dense data).
//! 3. Each sample has a primary topic and, with probability 0.3, a secondary one
//!    (weights 0.65 / 0.35).
//! 4. Sparse features: $m_x = 1 + \mathrm{Poisson}(\bar d - 1)$ distinct binary
//!    features, each drawn from a topic vocabulary (probability 0.85) or from the
//!    popularity (0.15). Dense features: $x = \sum_t \theta_t \mu_t + \varepsilon$,
//!    $\varepsilon \sim N(0, I_d)$.
//! 5. Labels: $m_y = 1 + \mathrm{Poisson}(\bar L - 1)$ distinct labels (clamped to
//!    `[1, L]`; `Poisson(L̄)` when `L̄ < 1`), each drawn from a topic's $\psi_t$
//!    (probability `1 - label_noise`) or from the label popularity.
//!
//! Train and test samples are i.i.d. from one seeded `ChaCha8Rng` stream.

use std::collections::HashSet;

use okr_kernels::{CsrRows, DenseRows, LabelSets};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::split::permutation;
use crate::{Dataset, Error, Features, Result};

/// The most feature values a stand-in may store (`2^28`, 2 GiB of `f64`):
/// [`StandinSpec::check`] rejects larger sizes instead of running out of memory.
pub const MAX_STANDIN_VALUES: usize = 1 << 28;

/// The shape and knobs of a stand-in data set. Setters store; [`StandinSpec::generate`]
/// validates.
///
/// | Name | Default | Purpose | Range |
/// |---|---|---|---|
/// | `name` | (given) | shape name; the data set is `<name>-standin` | |
/// | `n_train`, `n_test` | (given) | samples in each part | `n_train >= 1` |
/// | `n_features` | (given) | `d` | `>= 1` |
/// | `density` | `None` | `Some(p)`: sparse binary features, `p * d` nonzeros a row on average; `None`: dense Gaussian | `(0, 1]` |
/// | `n_labels` | (given) | `L` | `>= 1` |
/// | `mean_labels` | (given) | `L̄`, mean labels per sample | `(0, L]` |
/// | `n_topics` | 0 = `clamp(L / 2, 4, 50)` | latent topics `r` | |
/// | `label_noise` | 0.1 | probability that a label ignores the topics | `[0, 1]` |
/// | `seed` | 0 | RNG seed | any |
///
/// # Example
/// ```
/// use okr_eval::StandinSpec;
/// let spec = StandinSpec::new("toy", 200, 50, 30, 8, 2.0).density(0.2).seed(3);
/// let (train, test) = spec.generate()?;
/// assert_eq!((train.n_samples(), test.n_samples(), train.n_features(), train.n_labels()), (200, 50, 30, 8));
/// assert!(train.x.is_sparse());
/// assert!((train.y.mean_cardinality() - 2.0).abs() < 0.3);
/// assert_eq!(spec.dataset_name(), "toy-standin");
/// assert_eq!(spec.generate()?.0, train); // seeded
/// Ok::<(), okr_eval::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StandinSpec {
    /// Shape name (`bibtex`); the data set name is `<name>-standin`.
    pub name: String,
    /// Number of training samples.
    pub n_train: usize,
    /// Number of test samples.
    pub n_test: usize,
    /// Number of features `d`.
    pub n_features: usize,
    /// `Some(p)`: sparse binary features with `p * d` nonzeros a row on average;
    /// `None`: dense Gaussian features.
    pub density: Option<f64>,
    /// Number of labels `L`.
    pub n_labels: usize,
    /// Mean number of labels per sample.
    pub mean_labels: f64,
    /// Number of latent topics; 0 picks `clamp(L / 2, 4, 50)`.
    pub n_topics: usize,
    /// Probability that a label is drawn from the popularity instead of the topics.
    pub label_noise: f64,
    /// RNG seed.
    pub seed: u64,
}

impl StandinSpec {
    /// A dense-feature spec with default knobs (see the table).
    pub fn new(
        name: impl Into<String>,
        n_train: usize,
        n_test: usize,
        n_features: usize,
        n_labels: usize,
        mean_labels: f64,
    ) -> Self {
        Self {
            name: name.into(),
            n_train,
            n_test,
            n_features,
            density: None,
            n_labels,
            mean_labels,
            n_topics: 0,
            label_noise: 0.1,
            seed: 0,
        }
    }

    /// Sparse binary features with `density * n_features` nonzeros a row on average.
    pub fn density(mut self, density: f64) -> Self {
        self.density = Some(density);
        self
    }

    /// Dense Gaussian features.
    pub fn dense(mut self) -> Self {
        self.density = None;
        self
    }

    /// Sets the sample counts (e.g. a smaller version of a preset for CI).
    pub fn sizes(mut self, n_train: usize, n_test: usize) -> Self {
        self.n_train = n_train;
        self.n_test = n_test;
        self
    }

    /// Sets the number of topics (0 = automatic).
    pub fn n_topics(mut self, n_topics: usize) -> Self {
        self.n_topics = n_topics;
        self
    }

    /// Sets the label noise probability.
    pub fn label_noise(mut self, label_noise: f64) -> Self {
        self.label_noise = label_noise;
        self
    }

    /// Sets the seed.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// The data set name for records: `<name>-standin`.
    pub fn dataset_name(&self) -> String {
        format!("{}-standin", self.name)
    }

    /// The number of topics used: `n_topics`, or `clamp(L / 2, 4, 50)` when 0.
    pub fn topics(&self) -> usize {
        if self.n_topics > 0 { self.n_topics } else { (self.n_labels / 2).clamp(4, 50) }
    }

    /// Validates the spec, including the size bound [`MAX_STANDIN_VALUES`].
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming the first field out of range.
    pub fn check(&self) -> Result<()> {
        if self.n_train == 0 {
            return Err(Error::invalid("n_train", 0, "n_train >= 1"));
        }
        if self.n_features == 0 {
            return Err(Error::invalid("n_features", 0, "n_features >= 1"));
        }
        if self.n_labels == 0 {
            return Err(Error::invalid("n_labels", 0, "n_labels >= 1"));
        }
        if !(self.mean_labels > 0.0 && self.mean_labels <= self.n_labels as f64) {
            return Err(Error::invalid(
                "mean_labels",
                self.mean_labels,
                format!("0 < mean_labels <= n_labels = {}", self.n_labels),
            ));
        }
        if let Some(p) = self.density
            && !(p > 0.0 && p <= 1.0)
        {
            return Err(Error::invalid("density", p, "0 < density <= 1"));
        }
        if !(0.0..=1.0).contains(&self.label_noise) {
            return Err(Error::invalid("label_noise", self.label_noise, "0 <= label_noise <= 1"));
        }
        // Stored feature values, so that a huge size is an error and not an abort.
        let per_row = match self.density {
            Some(p) => ((p * self.n_features as f64).ceil() as usize).max(1),
            None => self.n_features,
        };
        let values = self.n_train.checked_add(self.n_test).and_then(|n| n.checked_mul(per_row));
        if values.is_none_or(|v| v > MAX_STANDIN_VALUES) {
            return Err(Error::invalid(
                "n_train + n_test",
                format!("{} + {}", self.n_train, self.n_test),
                format!(
                    "at most {MAX_STANDIN_VALUES} stored feature values in all ({per_row} per row), \
                     about 2 GiB"
                ),
            ));
        }
        Ok(())
    }

    /// Generates `(train, test)`; deterministic for the spec (seed included).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] from [`StandinSpec::check`].
    pub fn generate(&self) -> Result<(Dataset, Dataset)> {
        self.check()?;
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        let (d, l) = (self.n_features, self.n_labels);
        let r = self.topics();
        let base_l = Discrete::zipf(permutation(l, &mut rng), 1.0);
        let support_l = (2 * l).div_ceil(r).max((1.5 * self.mean_labels).ceil() as usize + 1).clamp(1, l);
        let label_topics: Vec<Discrete> =
            (0..r).map(|_| Discrete::topic(&base_l, l, support_l, 1.5, &mut rng)).collect();
        let features = match self.density {
            Some(p) => {
                let mean_nnz = (p * d as f64).max(f64::MIN_POSITIVE);
                let base = Discrete::zipf(permutation(d, &mut rng), 1.0);
                let support = ((4.0 * mean_nnz).ceil() as usize).clamp(10.min(d), d);
                let topics = (0..r).map(|_| Discrete::topic(&base, d, support, 0.5, &mut rng)).collect();
                FeatureModel::Sparse { base, topics, mean_nnz }
            }
            None => {
                FeatureModel::Dense { protos: (0..r).map(|_| (0..d).map(|_| normal(&mut rng)).collect()).collect() }
            }
        };

        let n = self.n_train + self.n_test;
        let mut sets = Vec::with_capacity(n);
        let mut rows: Vec<Vec<(usize, f64)>> = Vec::new();
        let mut dense: Vec<f64> = Vec::new();
        let mut seen = HashSet::new();
        for _ in 0..n {
            let t1 = rng.random_range(0..r);
            let theta = if r > 1 && rng.random_bool(0.3) {
                let mut t2 = rng.random_range(0..r - 1);
                if t2 >= t1 {
                    t2 += 1;
                }
                [(t1, 0.65), (t2, 0.35)]
            } else {
                [(t1, 1.0), (t1, 0.0)]
            };
            let pick_topic =
                |rng: &mut ChaCha8Rng| if rng.random::<f64>() < theta[0].1 { theta[0].0 } else { theta[1].0 };
            match &features {
                FeatureModel::Sparse { base, topics, mean_nnz } => {
                    let m = count(*mean_nnz, d, &mut rng);
                    let row = draw_distinct(m, d, &mut seen, &mut rng, |rng| {
                        if rng.random::<f64>() < 0.85 { topics[pick_topic(rng)].sample(rng) } else { base.sample(rng) }
                    });
                    rows.push(row.into_iter().map(|j| (j, 1.0)).collect());
                }
                FeatureModel::Dense { protos } => {
                    let [(t1, w1), (t2, w2)] = theta;
                    for (a, b) in protos[t1].iter().zip(&protos[t2]) {
                        dense.push(w1 * a + w2 * b + normal(&mut rng));
                    }
                }
            }
            let m = count(self.mean_labels, l, &mut rng);
            let noise = self.label_noise;
            sets.push(draw_distinct(m, l, &mut seen, &mut rng, |rng| {
                if rng.random::<f64>() < noise { base_l.sample(rng) } else { label_topics[pick_topic(rng)].sample(rng) }
            }));
        }
        let x = match features {
            FeatureModel::Sparse { .. } => Features::Sparse(CsrRows::from_rows(d, rows)?),
            FeatureModel::Dense { .. } => {
                Features::Dense(DenseRows::new(faer::Mat::from_fn(n, d, |i, j| dense[i * d + j]))?)
            }
        };
        let all = Dataset::new(x, LabelSets::new(l, sets)?)?;
        let train: Vec<usize> = (0..self.n_train).collect();
        let test: Vec<usize> = (self.n_train..n).collect();
        Ok((all.select(&train), all.select(&test)))
    }
}

/// Stand-in presets with the shapes of the benchmark sets (train / test sizes,
/// features, labels, mean labels per point; sparse densities measured on the
/// Mulan training files).
///
/// | preset | n / n_test | d | features | L | L̄ |
/// |---|---|---|---|---|---|
/// | bibtex | 4880 / 2515 | 1836 | sparse binary, 68.5 a row | 159 | 2.40 |
/// | corel5k | 4500 / 500 | 499 | sparse binary, 8.2 a row | 374 | 3.52 |
/// | yeast | 1500 / 917 | 103 | dense | 14 | 4.24 |
/// | scene | 1211 / 1196 | 294 | dense | 6 | 1.07 |
/// | emotions | 391 / 202 | 72 | dense | 6 | 1.87 |
/// | enron | 1123 / 579 | 1001 | sparse binary, 84.2 a row | 53 | 3.38 |
/// | bookmarks | 60000 / 27856 | 2150 | sparse binary, 5% (assumed: not measured here) | 208 | 2.03 |
///
/// # Example
/// ```
/// use okr_eval::StandinPreset;
/// let spec = StandinPreset::from_name("Bookmarks").unwrap().spec();
/// assert_eq!((spec.n_train, spec.n_test, spec.n_features, spec.n_labels), (60000, 27856, 2150, 208));
/// let (train, _) = spec.sizes(300, 100).generate()?; // a small version for tests
/// assert_eq!(train.n_features(), 2150);
/// Ok::<(), okr_eval::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum StandinPreset {
    /// Bibtex shape.
    Bibtex,
    /// Corel5k (Mulan) shape.
    Corel5k,
    /// Yeast shape.
    Yeast,
    /// Scene shape.
    Scene,
    /// Emotions shape.
    Emotions,
    /// Enron shape.
    Enron,
    /// Bookmarks shape (the data is not available here).
    Bookmarks,
}

impl StandinPreset {
    /// Every preset.
    pub const ALL: [StandinPreset; 7] = [
        StandinPreset::Bibtex,
        StandinPreset::Corel5k,
        StandinPreset::Yeast,
        StandinPreset::Scene,
        StandinPreset::Emotions,
        StandinPreset::Enron,
        StandinPreset::Bookmarks,
    ];

    /// The lowercase shape name (`bibtex`).
    pub fn name(self) -> &'static str {
        match self {
            StandinPreset::Bibtex => "bibtex",
            StandinPreset::Corel5k => "corel5k",
            StandinPreset::Yeast => "yeast",
            StandinPreset::Scene => "scene",
            StandinPreset::Emotions => "emotions",
            StandinPreset::Enron => "enron",
            StandinPreset::Bookmarks => "bookmarks",
        }
    }

    /// The preset of a (case-insensitive) shape name.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.name().eq_ignore_ascii_case(name))
    }

    /// The spec of this shape, seed 0.
    pub fn spec(self) -> StandinSpec {
        let s = |n_train, n_test, d, l, mean| StandinSpec::new(self.name(), n_train, n_test, d, l, mean);
        match self {
            StandinPreset::Bibtex => s(4880, 2515, 1836, 159, 2.40).density(68.5 / 1836.0),
            StandinPreset::Corel5k => s(4500, 500, 499, 374, 3.52).density(8.2 / 499.0),
            StandinPreset::Yeast => s(1500, 917, 103, 14, 4.24),
            StandinPreset::Scene => s(1211, 1196, 294, 6, 1.07),
            StandinPreset::Emotions => s(391, 202, 72, 6, 1.87),
            StandinPreset::Enron => s(1123, 579, 1001, 53, 3.38).density(84.2 / 1001.0),
            StandinPreset::Bookmarks => s(60000, 27856, 2150, 208, 2.03).density(0.05),
        }
    }
}

enum FeatureModel {
    Sparse { base: Discrete, topics: Vec<Discrete>, mean_nnz: f64 },
    Dense { protos: Vec<Vec<f64>> },
}

/// A discrete distribution over `items` by cumulative weights.
struct Discrete {
    items: Vec<usize>,
    cdf: Vec<f64>,
}

impl Discrete {
    /// Weights `(rank + 1)^-s` over `items` in the given order.
    fn zipf(items: Vec<usize>, s: f64) -> Self {
        let mut acc = 0.0;
        let cdf = (0..items.len())
            .map(|k| {
                acc += ((k + 1) as f64).powf(-s);
                acc
            })
            .collect();
        Self { items, cdf }
    }

    /// A topic: `support` distinct items drawn from `base` (popular ones more
    /// often), with Zipf(`s`) weights in draw order.
    fn topic(base: &Discrete, n_items: usize, support: usize, s: f64, rng: &mut ChaCha8Rng) -> Self {
        let mut seen = HashSet::new();
        Self::zipf(draw_distinct(support, n_items, &mut seen, rng, |rng| base.sample(rng)), s)
    }

    fn sample(&self, rng: &mut ChaCha8Rng) -> usize {
        let u = rng.random::<f64>() * self.cdf.last().copied().unwrap_or(0.0);
        self.items[self.cdf.partition_point(|&c| c <= u).min(self.items.len() - 1)]
    }
}

/// `m` distinct values in `0..n` (`m <= n`) from `draw`, topped up uniformly if
/// `draw` keeps repeating itself; sorted.
fn draw_distinct(
    m: usize,
    n: usize,
    seen: &mut HashSet<usize>,
    rng: &mut ChaCha8Rng,
    mut draw: impl FnMut(&mut ChaCha8Rng) -> usize,
) -> Vec<usize> {
    seen.clear();
    let mut out = Vec::with_capacity(m);
    let mut tries = 0;
    while out.len() < m && tries < 20 * m + 100 {
        tries += 1;
        let v = draw(rng);
        if seen.insert(v) {
            out.push(v);
        }
    }
    while out.len() < m {
        let v = rng.random_range(0..n);
        if seen.insert(v) {
            out.push(v);
        }
    }
    out.sort_unstable();
    out
}

/// A count with the given mean: `1 + Poisson(mean - 1)` (or `Poisson(mean)` when
/// `mean < 1`), clamped to `max`.
fn count(mean: f64, max: usize, rng: &mut ChaCha8Rng) -> usize {
    let k = if mean >= 1.0 { 1 + poisson(mean - 1.0, rng) } else { poisson(mean, rng) };
    k.min(max)
}

/// Poisson(`lambda`): Knuth's product method below 30, a rounded normal above.
fn poisson(lambda: f64, rng: &mut ChaCha8Rng) -> usize {
    if lambda <= 0.0 {
        return 0;
    }
    if lambda < 30.0 {
        let limit = (-lambda).exp();
        let mut k = 0;
        let mut p = rng.random::<f64>();
        while p > limit {
            k += 1;
            p *= rng.random::<f64>();
        }
        k
    } else {
        (lambda + lambda.sqrt() * normal(rng)).round().max(0.0) as usize
    }
}

/// A standard normal draw (Box-Muller).
fn normal(rng: &mut ChaCha8Rng) -> f64 {
    let u1 = 1.0 - rng.random::<f64>(); // in (0, 1]
    let u2 = rng.random::<f64>();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::f1_samples;
    use okr_kernels::Rows;

    /// k-NN vote (squared Euclidean distance, k = 10): the `round(L̄)` labels most
    /// frequent among the neighbors (ties to the lowest label).
    fn knn_vote(train: &Dataset, test: &Dataset) -> LabelSets {
        let a = train.x.to_dense();
        let b = test.x.to_dense();
        let m = train.y.mean_cardinality().round().max(1.0) as usize;
        // ||a_k - b_i||^2 up to the constant ||b_i||^2, through one GEMM
        let ab = b.as_ref() * a.as_ref().transpose();
        let sq_a: Vec<f64> = (0..a.nrows()).map(|k| a.row(k).iter().map(|v| v * v).sum()).collect();
        let sets = (0..b.nrows())
            .map(|i| {
                let mut dist: Vec<(f64, usize)> = (0..a.nrows()).map(|k| (sq_a[k] - 2.0 * ab[(i, k)], k)).collect();
                dist.sort_by(|x, y| x.0.total_cmp(&y.0));
                let mut votes = vec![0usize; train.n_labels()];
                for &(_, k) in &dist[..10] {
                    for &l in train.y.set(k) {
                        votes[l] += 1;
                    }
                }
                let mut order: Vec<usize> = (0..votes.len()).collect();
                order.sort_by_key(|&l| std::cmp::Reverse(votes[l]));
                order[..m].to_vec()
            })
            .collect();
        LabelSets::new(train.n_labels(), sets).unwrap()
    }

    #[test]
    fn huge_sizes_are_an_error_not_an_abort() {
        for (tr, te) in [(usize::MAX, 1), (1 << 40, 1 << 40), (1 << 28, 0)] {
            let e = StandinPreset::Emotions.spec().sizes(tr, te).check().unwrap_err();
            assert!(e.to_string().contains("stored feature values"), "{e}");
        }
        StandinPreset::Emotions.spec().sizes(1000, 10).check().unwrap();
    }

    #[test]
    fn structure_is_learnable() {
        // features carry the topics: a k-NN vote beats the labels of unrelated training samples
        for preset in [StandinPreset::Bibtex, StandinPreset::Scene, StandinPreset::Yeast] {
            let (train, test) = preset.spec().sizes(800, 200).generate().unwrap();
            let knn = f1_samples(&test.y, &knn_vote(&train, &test)).unwrap();
            let unrelated =
                train.select(&(0..test.n_samples()).map(|i| (i * 7919) % train.n_samples()).collect::<Vec<_>>());
            let base = f1_samples(&test.y, &unrelated.y).unwrap();
            assert!(knn > base + 0.1, "{preset:?}: k-NN F1 {knn:.3} vs unrelated-sample F1 {base:.3}");
        }
    }

    #[test]
    fn shapes_and_statistics() {
        for preset in StandinPreset::ALL {
            let spec = preset.spec();
            let (train, test) = spec.clone().sizes(400, 100).generate().unwrap();
            assert_eq!((train.n_samples(), test.n_samples()), (400, 100));
            assert_eq!((train.n_features(), train.n_labels()), (spec.n_features, spec.n_labels));
            assert_eq!(train.x.is_sparse(), spec.density.is_some());
            let card = train.y.mean_cardinality();
            assert!((card - spec.mean_labels).abs() < 0.15 * spec.mean_labels, "{preset:?}: {card}");
            if let (Some(p), Some(x)) = (spec.density, train.x.as_sparse()) {
                let per_row = x.nnz() as f64 / x.n_rows() as f64;
                let want = p * spec.n_features as f64;
                assert!((per_row - want).abs() < 0.1 * want, "{preset:?}: {per_row} vs {want}");
                assert!(x.values().iter().all(|&v| v == 1.0));
            }
            assert_eq!(StandinPreset::from_name(preset.name()), Some(preset));
        }
    }

    #[test]
    fn seeded_and_checked() {
        let spec = StandinSpec::new("t", 50, 10, 5, 4, 1.5).seed(9);
        assert_eq!(spec.generate().unwrap(), spec.generate().unwrap());
        assert_ne!(spec.generate().unwrap().0, spec.clone().seed(10).generate().unwrap().0);
        assert!(StandinSpec::new("t", 0, 10, 5, 4, 1.5).generate().is_err());
        assert!(StandinSpec::new("t", 5, 10, 5, 4, 5.0).generate().is_err());
        assert!(StandinSpec::new("t", 5, 10, 5, 4, 1.0).density(0.0).generate().is_err());
        assert!(StandinSpec::new("t", 5, 10, 5, 4, 1.0).label_noise(2.0).generate().is_err());
        let (tr, te) = StandinSpec::new("tiny", 3, 0, 1, 1, 0.5).density(1.0).generate().unwrap();
        assert_eq!((tr.n_samples(), te.n_samples()), (3, 0));
    }
}
