//! Readers of ranking data: rating triplets (Jester) and label rankings.
//!
//! - [`read_ratings`]: CSV `user,item,rating` with a header line and 0-based ids
//!   (`../shared/data/jester/jester3_ratings.csv`), into per-user rating lists.
//! - [`read_star_ratings`]: the same CSV with every rating a whole number of
//!   stars in `1..=max_stars`; [`read_movielens_100k`] and [`read_sushi`] read
//!   the MovieLens 100K and sushi files of the shared data (1-5 stars) and
//!   size the item catalogue as the paper's matrices do.
//! - [`read_label_ranking`]: the label-ranking benchmarks of Cheng, Huehn and
//!   Huellermeier: first line `n,d,k`, then `n` rows of `d` features and `k`
//!   ranks (`ranks[j]` = rank of label `j`, a permutation of `1..=k`).

use std::path::Path;

use faer::Mat;

use super::svmlight::MAX_DIMENSION;
use super::{lines, parse_finite, read_text};
use crate::{Error, Result};

/// Ratings grouped by user: `users[u]` lists `(item, rating)` in file order.
#[derive(Debug, Clone, PartialEq)]
pub struct Ratings {
    /// Number of items (largest item id + 1).
    pub n_items: usize,
    /// Per-user `(item, rating)` lists; users with no rating have an empty list.
    pub users: Vec<Vec<(usize, f64)>>,
}

impl Ratings {
    /// Total number of ratings.
    pub fn n_ratings(&self) -> usize {
        self.users.iter().map(Vec::len).sum()
    }
}

/// Reads a `user,item,rating` CSV (header line first, 0-based ids).
///
/// # Errors
/// [`Error::Io`]; [`Error::Parse`] with the line for a malformed row, a
/// non-finite rating or a repeated (user, item) pair.
///
/// # Example
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// let p = dir.path().join("r.csv");
/// std::fs::write(&p, "user,item,rating\n0,4,-1.5\n2,0,3\n").unwrap();
/// let r = okr_eval::readers::ranking::read_ratings(&p)?;
/// assert_eq!((r.users.len(), r.n_items, r.n_ratings()), (3, 5, 2));
/// assert!(r.users[1].is_empty());
/// Ok::<(), okr_eval::Error>(())
/// ```
pub fn read_ratings(path: impl AsRef<Path>) -> Result<Ratings> {
    read_ratings_checked(path.as_ref(), |_, _| None)
}

/// Reads a `user,item,rating` CSV whose ratings are whole numbers of stars in
/// `1..=max_stars` (MovieLens, sushi).
///
/// # Errors
/// As [`read_ratings`], and [`Error::Parse`] with the line for a rating that
/// is not an integer in `1..=max_stars`.
///
/// # Example
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// let p = dir.path().join("r.csv");
/// std::fs::write(&p, "user,item,rating\n0,2,5\n1,0,1\n").unwrap();
/// let r = okr_eval::readers::ranking::read_star_ratings(&p, 5)?;
/// assert_eq!(r.users[0], vec![(2, 5.0)]);
/// std::fs::write(&p, "user,item,rating\n0,2,4.5\n").unwrap();
/// assert!(okr_eval::readers::ranking::read_star_ratings(&p, 5).is_err());
/// Ok::<(), okr_eval::Error>(())
/// ```
pub fn read_star_ratings(path: impl AsRef<Path>, max_stars: u32) -> Result<Ratings> {
    read_ratings_checked(path.as_ref(), |_, r| star_error(r, max_stars))
}

fn star_error(r: f64, max_stars: u32) -> Option<String> {
    (r.fract() != 0.0 || r < 1.0 || r > f64::from(max_stars))
        .then(|| format!("rating {r} is not a whole number of stars in 1..={max_stars}"))
}

/// Movies in MovieLens 100K (the paper's matrix is 943 x 1682).
pub const MOVIELENS_100K_ITEMS: usize = 1682;
/// Sushi types in the sushi data (the paper's matrix is 5000 x 100).
pub const SUSHI_ITEMS: usize = 100;

/// Reads MovieLens 100K ratings (`movielens/ml100k_ratings.csv` of the shared
/// data: `user,item,rating`, 0-based ids, 1-5 stars) with the catalogue of
/// [`MOVIELENS_100K_ITEMS`] movies.
///
/// # Errors
/// As [`read_star_ratings`] with 5 stars, and [`Error::Parse`] with the line
/// for an item id beyond the catalogue.
pub fn read_movielens_100k(path: impl AsRef<Path>) -> Result<Ratings> {
    with_catalogue(path.as_ref(), MOVIELENS_100K_ITEMS)
}

/// Reads the sushi ratings (`sushi/sushi_ratings.csv` of the shared data:
/// `user,item,rating`, 0-based ids, 1-5 stars) with the catalogue of
/// [`SUSHI_ITEMS`] sushis.
///
/// # Errors
/// As [`read_movielens_100k`].
pub fn read_sushi(path: impl AsRef<Path>) -> Result<Ratings> {
    with_catalogue(path.as_ref(), SUSHI_ITEMS)
}

/// 1-5 star ratings over a catalogue of `n_items` (items nobody rated still count).
fn with_catalogue(path: &Path, n_items: usize) -> Result<Ratings> {
    let mut r = read_ratings_checked(path, |i, r| {
        if i >= n_items {
            Some(format!("item id {i} is beyond the catalogue of {n_items} items (ids 0..{n_items})"))
        } else {
            star_error(r, 5)
        }
    })?;
    r.n_items = n_items;
    Ok(r)
}

/// [`read_ratings`] with `check(item, rating)` returning a message for an entry the file must not hold.
fn read_ratings_checked(path: &Path, check: impl Fn(usize, f64) -> Option<String>) -> Result<Ratings> {
    let text = read_text(path)?;
    let mut users: Vec<Vec<(usize, f64)>> = Vec::new();
    let mut n_items = 0;
    let mut header = true;
    for (no, raw) in lines(&text) {
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        if header {
            header = false;
            if line.starts_with(|c: char| c.is_ascii_alphabetic()) {
                continue;
            }
        }
        let mut it = line.split(',');
        let mut field = |what: &str| {
            it.next()
                .map(str::trim)
                .ok_or_else(|| Error::parse(path, no, format!("missing {what} (expected user,item,rating)")))
        };
        let (u, i, r) = (field("user")?, field("item")?, field("rating")?);
        let u: usize =
            u.parse().map_err(|_| Error::parse(path, no, format!("user id '{u}' is not a non-negative integer")))?;
        let i: usize =
            i.parse().map_err(|_| Error::parse(path, no, format!("item id '{i}' is not a non-negative integer")))?;
        let r = parse_finite(r, || "rating".into()).map_err(|m| Error::parse(path, no, m))?;
        if let Some(m) = check(i, r) {
            return Err(Error::parse(path, no, m));
        }
        // Ids index vectors: bounded, so one line cannot ask for terabytes.
        if u >= MAX_DIMENSION || i >= MAX_DIMENSION {
            return Err(Error::parse(
                path,
                no,
                format!("expected user and item ids < {MAX_DIMENSION} (MAX_DIMENSION), got user {u}, item {i}"),
            ));
        }
        if users.len() <= u {
            users.try_reserve(u + 1 - users.len()).map_err(|_| Error::OutOfMemory {
                what: format!("the users of {}", path.display()),
                bytes: (u as u64 + 1) * std::mem::size_of::<Vec<(usize, f64)>>() as u64,
            })?;
            users.resize_with(u + 1, Vec::new);
        }
        if users[u].iter().any(|&(j, _)| j == i) {
            return Err(Error::parse(path, no, format!("repeated rating of item {i} by user {u}")));
        }
        users[u].push((i, r));
        n_items = n_items.max(i + 1);
    }
    Ok(Ratings { n_items, users })
}

/// A label-ranking data set: features and per-sample label ranks.
#[derive(Debug, Clone, PartialEq)]
pub struct LabelRanking {
    /// Features `(n_samples, n_features)`.
    pub x: Mat<f64>,
    /// `ranks[i][j]` = rank of label `j` for sample `i` (1 = preferred).
    pub ranks: Vec<Vec<usize>>,
}

impl LabelRanking {
    /// The features as dense rows.
    ///
    /// # Errors
    /// Never for a file this reader read (its features are finite).
    pub fn features(&self) -> Result<okr_kernels::DenseRows> {
        Ok(okr_kernels::DenseRows::new(self.x.clone())?)
    }

    /// The rankings as [`Rankings`](okr_kernels::Rankings) (0-based ranks).
    ///
    /// # Errors
    /// [`Error::Empty`] for a file without rows (its item count is unknown).
    pub fn rankings(&self) -> Result<okr_kernels::Rankings> {
        let Some(k) = self.ranks.first().map(Vec::len) else {
            return Err(Error::Empty { what: "label-ranking file without rows" });
        };
        let rows = self.ranks.iter().map(|r| r.iter().map(|&v| v - 1).collect()).collect();
        Ok(okr_kernels::Rankings::new(k, rows)?)
    }
}

/// Reads a label-ranking CSV (`n,d,k` line, then `d` features and `k` ranks per row).
///
/// # Errors
/// [`Error::Io`]; [`Error::Parse`] for a bad header, a wrong number of fields,
/// a non-finite feature, ranks that are not a permutation of `1..=k`, or a row
/// count different from `n`.
///
/// # Example
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// let p = dir.path().join("lr.csv");
/// std::fs::write(&p, "2,1,3\n0.5,1,2,3\n-1,3,1,2\n").unwrap();
/// let d = okr_eval::readers::ranking::read_label_ranking(&p)?;
/// assert_eq!(d.ranks[1], vec![3, 1, 2]);
/// Ok::<(), okr_eval::Error>(())
/// ```
pub fn read_label_ranking(path: impl AsRef<Path>) -> Result<LabelRanking> {
    let path = path.as_ref();
    let text = read_text(path)?;
    let mut shape: Option<(usize, usize, usize)> = None;
    let mut feats: Vec<f64> = Vec::new();
    let mut ranks = Vec::new();
    let mut last_line = 0;
    for (no, raw) in lines(&text) {
        let line = raw.trim();
        last_line = no;
        if line.is_empty() {
            continue;
        }
        let toks: Vec<&str> = line.split(',').map(str::trim).collect();
        let Some((_, d, k)) = shape else {
            let parsed: Vec<usize> = toks.iter().filter_map(|t| t.parse().ok()).collect();
            if parsed.len() != 3 || toks.len() != 3 || parsed[2] == 0 {
                return Err(Error::parse(path, no, "expected the header n,d,k (integers, k >= 1)"));
            }
            shape = Some((parsed[0], parsed[1], parsed[2]));
            continue;
        };
        if d.checked_add(k) != Some(toks.len()) {
            return Err(Error::parse(
                path,
                no,
                format!("expected {d} features and {k} ranks per row, got {} fields", toks.len()),
            ));
        }
        for t in &toks[..d] {
            feats.push(parse_finite(t, || "feature".into()).map_err(|m| Error::parse(path, no, m))?);
        }
        let mut r = Vec::with_capacity(k);
        let mut seen = vec![false; k + 1];
        for t in &toks[d..] {
            let v: usize = t.parse().map_err(|_| Error::parse(path, no, format!("rank '{t}' is not an integer")))?;
            if v == 0 || v > k || std::mem::replace(&mut seen[v], true) {
                return Err(Error::parse(path, no, format!("ranks are not a permutation of 1..={k}")));
            }
            r.push(v);
        }
        ranks.push(r);
    }
    let Some((n, d, _)) = shape else {
        return Err(Error::parse(path, last_line.max(1), "empty file: expected the header n,d,k"));
    };
    if ranks.len() != n {
        return Err(Error::parse(path, last_line, format!("header says {n} rows, found {}", ranks.len())));
    }
    let x = Mat::from_fn(n, d, |i, j| feats[i * d + j]);
    Ok(LabelRanking { x, ranks })
}
