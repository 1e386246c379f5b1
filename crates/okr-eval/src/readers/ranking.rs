//! Readers of ranking data: rating triplets (Jester) and label rankings.
//!
//! - [`read_ratings`]: CSV `user,item,rating` with a header line and 0-based ids
//!   (`../shared/data/jester/jester3_ratings.csv`), into per-user rating lists.
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
    let path = path.as_ref();
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
