//! Seeded train/test splits, k-fold, grouped k-fold and repeated random sub-sampling.
//!
//! All splits are deterministic for a seed: the RNG is
//! `ChaCha8Rng::seed_from_u64(seed)` and the permutation a Fisher-Yates shuffle
//! written here (so it does not change with the `rand` version). Returned index
//! lists are sorted ascending, as scikit-learn's splitters return them.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// A uniformly random permutation of `0..n` (Fisher-Yates).
pub(crate) fn permutation(n: usize, rng: &mut ChaCha8Rng) -> Vec<usize> {
    let mut p: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        let j = rng.random_range(0..=i);
        p.swap(i, j);
    }
    p
}

/// Number of test samples for a fraction: `ceil(test_fraction * n)`, as scikit-learn.
fn n_test(n: usize, test_fraction: f64) -> Result<usize> {
    if !(test_fraction > 0.0 && test_fraction < 1.0) {
        return Err(Error::invalid("test_fraction", test_fraction, "a fraction strictly between 0 and 1"));
    }
    let n_test = (test_fraction * n as f64).ceil() as usize;
    if n_test == 0 || n_test >= n {
        return Err(Error::invalid(
            "test_fraction",
            test_fraction,
            format!("a fraction leaving both parts non-empty with n_samples = {n} (got {n_test} test samples)"),
        ));
    }
    Ok(n_test)
}

/// Splits `0..n` at random into `(train, test)` with `ceil(test_fraction * n)`
/// test indices; both lists are sorted.
///
/// # Errors
/// [`Error::InvalidArgument`] if `test_fraction` is not in `(0, 1)` or a part would be empty.
///
/// # Example
/// ```
/// let (train, test) = okr_eval::train_test_split(10, 0.25, 42)?;
/// assert_eq!((train.len(), test.len()), (7, 3));
/// let mut all: Vec<usize> = train.iter().chain(&test).copied().collect();
/// all.sort();
/// assert_eq!(all, (0..10).collect::<Vec<_>>());
/// assert_eq!(okr_eval::train_test_split(10, 0.25, 42)?, (train, test));
/// # Ok::<(), okr_eval::Error>(())
/// ```
pub fn train_test_split(n: usize, test_fraction: f64, seed: u64) -> Result<(Vec<usize>, Vec<usize>)> {
    let n_test = n_test(n, test_fraction)?;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let p = permutation(n, &mut rng);
    let mut test = p[..n_test].to_vec();
    let mut train = p[n_test..].to_vec();
    test.sort_unstable();
    train.sort_unstable();
    Ok((train, test))
}

/// K-fold cross-validation: `n_splits` folds of sizes differing by at most one
/// (the first `n % n_splits` folds have one more sample, as scikit-learn's
/// `KFold`). Without `shuffle` the folds are contiguous and `seed` is unused.
///
/// | Name | Default | Purpose | Range |
/// |---|---|---|---|
/// | `n_splits` | 5 | number of folds | `2..=n` |
/// | `shuffle` | `false` | permute the samples before cutting folds | |
/// | `seed` | 0 | RNG seed for the permutation | any |
///
/// # Example
/// ```
/// use okr_eval::KFold;
/// let folds = KFold::new(3).split(7)?;
/// assert_eq!(folds[0], (vec![3, 4, 5, 6], vec![0, 1, 2]));
/// assert_eq!(folds[2].1, vec![5, 6]);
/// let shuffled = KFold::new(3).shuffle(9).split(7)?;
/// assert_eq!(shuffled, KFold::new(3).shuffle(9).split(7)?);
/// # Ok::<(), okr_eval::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct KFold {
    /// Number of folds (at least 2).
    pub n_splits: usize,
    /// Whether to permute the samples first.
    pub shuffle: bool,
    /// Seed of the permutation.
    pub seed: u64,
}

impl Default for KFold {
    fn default() -> Self {
        Self { n_splits: 5, shuffle: false, seed: 0 }
    }
}

impl KFold {
    /// `n_splits` contiguous folds.
    pub fn new(n_splits: usize) -> Self {
        Self { n_splits, ..Self::default() }
    }

    /// Shuffles with `seed` before cutting the folds.
    pub fn shuffle(mut self, seed: u64) -> Self {
        self.shuffle = true;
        self.seed = seed;
        self
    }

    /// The `(train, validation)` index lists of each fold, both sorted; the
    /// validation lists partition `0..n`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] unless `2 <= n_splits <= n`.
    pub fn split(&self, n: usize) -> Result<Vec<(Vec<usize>, Vec<usize>)>> {
        let k = self.n_splits;
        if k < 2 || k > n {
            return Err(Error::invalid("n_splits", k, format!("2 <= n_splits <= n_samples = {n}")));
        }
        let order =
            if self.shuffle { permutation(n, &mut ChaCha8Rng::seed_from_u64(self.seed)) } else { (0..n).collect() };
        let (base, extra) = (n / k, n % k);
        let mut folds = Vec::with_capacity(k);
        let mut start = 0;
        for f in 0..k {
            let len = base + usize::from(f < extra);
            let mut in_val = vec![false; n];
            let mut val: Vec<usize> = order[start..start + len].to_vec();
            for &i in &val {
                in_val[i] = true;
            }
            val.sort_unstable();
            let train = (0..n).filter(|&i| !in_val[i]).collect();
            folds.push((train, val));
            start += len;
        }
        Ok(folds)
    }
}

/// Grouped K-fold (scikit-learn's `GroupKFold`): every group (for example
/// all spectra of one molecular structure) lands in exactly one validation
/// fold, so no group is on both sides of a split.
///
/// Folds are balanced by size: groups are taken from largest to smallest and
/// each goes to the fold with the fewest samples so far (the lowest fold
/// index on ties), as scikit-learn does. Groups of equal size are taken in a
/// seeded random order, so `seed` changes which groups share a fold but not
/// the balance: the largest and smallest folds differ by at most the size of
/// the largest group.
///
/// | Name | Default | Purpose | Range |
/// |---|---|---|---|
/// | `n_splits` | 5 | number of folds | `2..=` number of distinct groups |
/// | `seed` | 0 | RNG seed of the order among groups of equal size | any |
///
/// # Example
/// ```
/// use okr_eval::GroupKFold;
/// // Six samples of three structures (labels can be any ordered type).
/// let groups = ["a", "a", "b", "c", "c", "c"];
/// let folds = GroupKFold::new(2).split(&groups)?;
/// assert_eq!(folds[0].1, vec![3, 4, 5]); // the largest group, alone
/// assert_eq!(folds[1].1, vec![0, 1, 2]);
/// assert_eq!(folds, GroupKFold::new(2).split(&groups)?); // seeded
/// # Ok::<(), okr_eval::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupKFold {
    /// Number of folds (at least 2, at most the number of groups).
    pub n_splits: usize,
    /// Seed of the order among groups of equal size.
    pub seed: u64,
}

impl Default for GroupKFold {
    fn default() -> Self {
        Self { n_splits: 5, seed: 0 }
    }
}

impl GroupKFold {
    /// `n_splits` folds, seed 0.
    pub fn new(n_splits: usize) -> Self {
        Self { n_splits, ..Self::default() }
    }

    /// Sets the seed of the order among groups of equal size.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// The fold (`0..n_splits`) of every sample, `groups[i]` being sample
    /// `i`'s group.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] unless `2 <= n_splits <=` the number of
    /// distinct groups.
    pub fn assign<G: Ord>(&self, groups: &[G]) -> Result<Vec<usize>> {
        let mut members: std::collections::BTreeMap<&G, Vec<usize>> = std::collections::BTreeMap::new();
        for (i, g) in groups.iter().enumerate() {
            members.entry(g).or_default().push(i);
        }
        let k = self.n_splits;
        if k < 2 || k > members.len() {
            return Err(Error::invalid(
                "n_splits",
                k,
                format!("2 <= n_splits <= number of groups = {}", members.len()),
            ));
        }
        let mut lists: Vec<Vec<usize>> = members.into_values().collect();
        let order = permutation(lists.len(), &mut ChaCha8Rng::seed_from_u64(self.seed));
        let mut shuffled: Vec<Vec<usize>> = order.iter().map(|&g| std::mem::take(&mut lists[g])).collect();
        // Stable: equal sizes keep the seeded order.
        shuffled.sort_by_key(|m| std::cmp::Reverse(m.len()));
        let mut load = vec![0usize; k];
        let mut fold = vec![0usize; groups.len()];
        for m in &shuffled {
            let f = (0..k).min_by_key(|&f| (load[f], f)).unwrap_or(0);
            load[f] += m.len();
            for &i in m {
                fold[i] = f;
            }
        }
        Ok(fold)
    }

    /// The `(train, validation)` index lists of each fold, both sorted; the
    /// validation lists partition `0..groups.len()` and no group is split.
    ///
    /// # Errors
    /// As [`assign`](Self::assign).
    pub fn split<G: Ord>(&self, groups: &[G]) -> Result<Vec<(Vec<usize>, Vec<usize>)>> {
        let fold = self.assign(groups)?;
        Ok((0..self.n_splits)
            .map(|f| {
                let (val, train): (Vec<usize>, Vec<usize>) = (0..groups.len()).partition(|&i| fold[i] == f);
                (train, val)
            })
            .collect())
    }
}

/// Repeated random sub-sampling (scikit-learn's `ShuffleSplit`): `n_splits`
/// independent random splits with `ceil(test_fraction * n)` test samples each,
/// drawn from one RNG stream seeded with `seed`.
///
/// | Name | Default | Purpose | Range |
/// |---|---|---|---|
/// | `n_splits` | 5 | number of repetitions | `>= 1` |
/// | `test_fraction` | 0.2 | fraction of test samples | `(0, 1)`, both parts non-empty |
/// | `seed` | 0 | RNG seed | any |
///
/// # Example
/// ```
/// use okr_eval::ShuffleSplit;
/// let splits = ShuffleSplit::default().split(10)?; // 5 x 80/20
/// assert_eq!(splits.len(), 5);
/// assert!(splits.iter().all(|(tr, te)| tr.len() == 8 && te.len() == 2));
/// assert_ne!(splits[0], splits[1]);
/// # Ok::<(), okr_eval::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ShuffleSplit {
    /// Number of repetitions.
    pub n_splits: usize,
    /// Fraction of samples in each test part.
    pub test_fraction: f64,
    /// RNG seed.
    pub seed: u64,
}

impl Default for ShuffleSplit {
    fn default() -> Self {
        Self { n_splits: 5, test_fraction: 0.2, seed: 0 }
    }
}

impl ShuffleSplit {
    /// `n_splits` repetitions with `test_fraction` test samples and seed `seed`.
    pub fn new(n_splits: usize, test_fraction: f64, seed: u64) -> Self {
        Self { n_splits, test_fraction, seed }
    }

    /// The `(train, test)` index lists of each repetition, both sorted.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if `n_splits == 0` or `test_fraction` is invalid for `n`.
    pub fn split(&self, n: usize) -> Result<Vec<(Vec<usize>, Vec<usize>)>> {
        if self.n_splits == 0 {
            return Err(Error::invalid("n_splits", 0, "n_splits >= 1"));
        }
        let n_test = n_test(n, self.test_fraction)?;
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        Ok((0..self.n_splits)
            .map(|_| {
                let p = permutation(n, &mut rng);
                let mut test = p[..n_test].to_vec();
                let mut train = p[n_test..].to_vec();
                test.sort_unstable();
                train.sort_unstable();
                (train, test)
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kfold_sizes_and_partition() {
        for n in 2..30 {
            for k in 2..=n.min(7) {
                for kf in [KFold::new(k), KFold::new(k).shuffle(n as u64)] {
                    let folds = kf.split(n).unwrap();
                    assert_eq!(folds.len(), k);
                    let mut seen = vec![0; n];
                    for (tr, va) in &folds {
                        assert_eq!(tr.len() + va.len(), n);
                        assert!(va.len() == n / k || va.len() == n / k + 1);
                        for &i in va {
                            seen[i] += 1;
                            assert!(tr.binary_search(&i).is_err());
                        }
                    }
                    assert!(seen.iter().all(|&c| c == 1));
                }
            }
        }
    }

    #[test]
    fn invalid_arguments() {
        assert!(KFold::new(1).split(5).is_err());
        assert!(KFold::new(6).split(5).is_err());
        assert!(train_test_split(10, 0.0, 0).is_err());
        assert!(train_test_split(10, 1.0, 0).is_err());
        assert!(train_test_split(10, f64::NAN, 0).is_err());
        assert!(train_test_split(1, 0.5, 0).is_err());
        let e = train_test_split(3, 0.99, 0).unwrap_err().to_string();
        assert!(e.contains("test_fraction = 0.99") && e.contains("n_samples = 3"), "{e}");
        assert!(ShuffleSplit::new(0, 0.2, 0).split(10).is_err());
    }

    #[test]
    fn permutation_is_uniformish_and_seeded() {
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        let mut first = [0usize; 4];
        for _ in 0..4000 {
            first[permutation(4, &mut rng)[0]] += 1;
        }
        assert!(first.iter().all(|&c| (850..1150).contains(&c)), "{first:?}");
        assert_ne!(train_test_split(50, 0.2, 1).unwrap(), train_test_split(50, 0.2, 2).unwrap());
    }

    /// Every group in exactly one validation fold, the folds a partition,
    /// balanced within the largest group, seeded; checked on random groups
    /// against a brute-force count.
    #[test]
    fn group_kfold_keeps_groups_whole_and_balances() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        for trial in 0..40 {
            let n = rng.random_range(6..80);
            let n_groups = rng.random_range(2..=n.min(20));
            let groups: Vec<usize> =
                (0..n).map(|i| if i < n_groups { i } else { rng.random_range(0..n_groups) }).collect();
            let largest = (0..n_groups).map(|g| groups.iter().filter(|&&h| h == g).count()).max().unwrap();
            for k in 2..=n_groups.min(6) {
                let gkf = GroupKFold::new(k).seed(trial);
                let folds = gkf.split(&groups).unwrap();
                assert_eq!(folds.len(), k);
                let mut fold_of_group = vec![None; n_groups];
                let mut seen = vec![0; n];
                for (f, (tr, va)) in folds.iter().enumerate() {
                    assert_eq!(tr.len() + va.len(), n);
                    assert!(!va.is_empty(), "fold {f} empty");
                    assert!(va.windows(2).all(|w| w[0] < w[1]) && tr.windows(2).all(|w| w[0] < w[1]));
                    for &i in va {
                        seen[i] += 1;
                        let g = groups[i];
                        assert!(fold_of_group[g].is_none_or(|h| h == f), "group {g} split");
                        fold_of_group[g] = Some(f);
                    }
                    assert!(tr.iter().all(|&i| fold_of_group[groups[i]] != Some(f)));
                }
                assert!(seen.iter().all(|&c| c == 1));
                let sizes: Vec<usize> = folds.iter().map(|(_, va)| va.len()).collect();
                let (lo, hi) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
                assert!(hi - lo <= largest, "sizes {sizes:?}, largest group {largest}");
                assert_eq!(gkf.split(&groups).unwrap(), folds);
            }
        }
    }

    /// Equal-size groups: the seed changes the assignment, the balance is
    /// exact; too many folds is refused.
    #[test]
    fn group_kfold_seed_and_errors() {
        let groups: Vec<u32> = (0..40).map(|i| i / 2).collect();
        let a = GroupKFold::new(4).seed(1).split(&groups).unwrap();
        let b = GroupKFold::new(4).seed(2).split(&groups).unwrap();
        assert_ne!(a, b);
        assert!(a.iter().all(|(_, va)| va.len() == 10));
        assert!(GroupKFold::new(21).split(&groups).is_err());
        assert!(GroupKFold::new(1).split(&groups).is_err());
        let e = GroupKFold::new(3).split(&["x", "x", "y"]).unwrap_err().to_string();
        assert!(e.contains("number of groups = 2"), "{e}");
    }
}
