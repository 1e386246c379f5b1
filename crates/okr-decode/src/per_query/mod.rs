//! Per-query candidate sets: every test point is ranked against its own
//! candidates (retrieval, e.g. molecule identification: the candidates of a
//! spectrum are the molecules of a database with its formula).
//!
//! A [`Query`] names a test row and lists its candidates, either inline (a
//! container of outputs of its own) or as indices into a shared candidate
//! pool. [`PerQueryDecoder`] ranks each query's candidates by
//! $$s_c = k(c, c) - 2 \langle h(x_q), \psi(c) \rangle
//! = \|h(x_q) - \psi(c)\|^2 - \|h(x_q)\|^2$$
//! (lower is better) and reports, per query, the ranked candidates with their
//! scores (top-k or all) and, when the query marks its true candidate, its
//! rank counted optimistically and pessimistically over tied scores.
//!
//! # Computation
//!
//! For a model with `r` atoms (see [`SurrogateModel`]):
//! - queries are taken from the source in tiles; the coefficients `C`
//!   `(n_queries_in_tile, r)` of a tile are one
//!   [`coefficients_into`](SurrogateModel::coefficients_into) call;
//! - with a pool, the atom products `G` `(r, n_pool)` of the whole pool are
//!   computed once (in pool chunks) when they take at most half the memory
//!   budget; otherwise the tile's pooled queries share the atom products of
//!   the union `U` of the pool rows they list, computed in column groups
//!   that fit a quarter of the budget;
//! - the scores of a tile's pooled queries come from one GEMM per column
//!   group, `S = C G_U` `(n_queries_in_tile, r) x (r, |U|)`, from which each
//!   query reads its own candidates' entries: every tile query is scored
//!   against every column of `U`, which costs `n_queries_in_tile` times the
//!   flops a query needs when the lists barely overlap, but runs at the
//!   machine's GEMM rate, where per-query products `(n_c, r) x (r, 1)` run at
//!   memory speed (with 4000 atoms the GEMM is a few percent of the atom
//!   products of a bit kernel; tiles hold at most 32 queries);
//! - inline candidates get their atom products per query, and their scores
//!   are one product `s = k - 2 G_q^T c_q` `(n_distinct_candidates, r) x
//!   (r, 1)`, in candidate chunks when a query's candidates alone exceed the
//!   budget.
//!
//! Memory: the pool's cache (at most half the budget), then a tile whose
//! coefficients and the model's temporaries (about `2 r` per test row), its
//! scores `S` (`n_queries_in_tile x |U|`) and a column group of atom products
//! fit in a quarter of the budget each, plus the `n_candidates` scores of the
//! query being ranked. Tiles never go below one query and one candidate.
//! Beside the budget, memory follows the input's size, never a count it
//! claims: the pool is kept as its distinct rows with their norms plus one
//! index per pool row (a pool of identical rows costs 8 bytes a row), and a
//! pooled query lists at most as many candidates as the pool has rows
//! (checked by [`CandidateFileReader::pool_rows`] while the file is read,
//! and by the ranker), each costing its index, its score and its place in
//! the ranking (about 40 bytes a candidate, for at least 2 bytes of its
//! file and 2 of the pool's).
//!
//! # Ties
//!
//! Candidates with equal scores are ranked by position in the query's list,
//! lowest first. Identical candidates (equal rows by
//! [`Rows::group_duplicates`], or a repeated pool index) are scored once and
//! share that score, so they always tie exactly: a score computed twice at
//! different positions of a GEMM may differ in the last bit. The rank of the true candidate `t` is reported both ways:
//! optimistic `1 + #{c : s_c < s_t}` and pessimistic `#{c : s_c <= s_t}`
//! (the true candidate included), as metabolite-identification papers do.
//! NaN scores rank after every number.
//!
//! # File format (`okr-candidates 1`)
//!
//! A UTF-8 text file, read query by query ([`CandidateFileReader`]):
//!
//! ```text
//! okr-candidates 1 inline            <- first line: magic, version, mode (inline | pool)
//! # comment lines and blank lines are ignored
//! query q1 0                         <- `query <query_id> <test_row>` starts a query
//! 3 17 40                            <- inline mode: one candidate output per line
//! *3 17 41                           <- a leading `*` marks the true candidate (at most one)
//! query q2 1
//! -                                  <- `-`: the empty label set (a valid output)
//! query q3 2                         <- a query with no candidate line: empty set (decoding error)
//! ```
//!
//! In `pool` mode the lines after a query header hold whitespace-separated
//! 0-based indices into a pool file (`12 40 *7`; any number of lines, `*`
//! marks the true candidate; repeats allowed, at most as many indices as
//! the pool has rows), and the pool file holds one candidate output
//! per line in the same row syntax ([`read_candidate_pool`]). Row syntax
//! ([`TextRows`]): label sets and binary fingerprints
//! ([`LabelSets`](okr_kernels::LabelSets)) are the 0-based indices of their set bits, separated by
//! whitespace or commas (`-` for none); dense vectors ([`DenseRows`](okr_kernels::DenseRows)) are
//! their values separated by whitespace or commas; rankings ([`Rankings`](okr_kernels::Rankings))
//! are the 1-based ranks of their items (a permutation of `1..=k`). Graphs
//! have no row syntax: they are pool indices, the pool a TU data set read by
//! the caller (`okr_eval::read_tu_graphs`). `query_id` is any token
//! without whitespace; `test_row` is the 0-based row of the test inputs.
//!
//! # Example
//! ```
//! use okr_estimators::Fit;
//! use faer::Mat;
//! use okr_decode::per_query::{PerQueryDecoder, Query};
//! use okr_estimators::Iokr;
//! use okr_kernels::{DenseRows, Linear, Rows};
//! let x = DenseRows::new(Mat::from_fn(6, 3, |i, j| if i % 3 == j { 1.0 } else { 0.1 }))?;
//! let y = DenseRows::new(Mat::from_fn(6, 3, |i, j| if i % 3 == j { 1.0 } else { 0.0 }))?;
//! let model = Iokr::params(Linear, Linear).lambda(1e-6).fit(&x, &y)?;
//! let pool = y.select(&[0, 1, 2]);
//! // Test row 1 (class 1) against pool candidates 2 and 1; the truth is pool index 1.
//! let queries = vec![Query::pooled("a", 1, vec![2, 1], Some(1))];
//! let ranked = PerQueryDecoder::new().rank_all(&model, &x, Some(&pool), queries)?;
//! assert_eq!(ranked[0].ids, vec![1, 2]);
//! assert_eq!(ranked[0].true_rank.map(|r| r.optimistic), Some(1));
//! Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::cmp::Ordering;
use std::time::Instant;

use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, MatRef, Par};
use okr_kernels::Rows;
use okr_surrogate::SurrogateModel;
use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// The candidates of one query.
#[derive(Debug, Clone, PartialEq)]
pub enum CandidateList<Y> {
    /// Indices into the shared candidate pool (repeats allowed).
    Pool(Vec<usize>),
    /// Candidate outputs of this query alone.
    Inline(Y),
}

/// One query: a test row and its own candidate set.
#[derive(Debug, Clone, PartialEq)]
pub struct Query<Y> {
    /// The query's id, reported back and named in errors.
    pub id: String,
    /// Row of the test inputs this query ranks candidates for.
    pub test_row: usize,
    /// The candidates.
    pub candidates: CandidateList<Y>,
    /// Position of the true candidate in the candidate list, when known.
    pub truth: Option<usize>,
}

impl<Y: Rows> Query<Y> {
    /// A query whose candidates are pool indices; `truth` is the position of
    /// the true candidate in `indices`.
    pub fn pooled(id: impl Into<String>, test_row: usize, indices: Vec<usize>, truth: Option<usize>) -> Self {
        Self { id: id.into(), test_row, candidates: CandidateList::Pool(indices), truth }
    }

    /// A query with inline candidates; `truth` is the row of the true
    /// candidate in `candidates`.
    pub fn inline(id: impl Into<String>, test_row: usize, candidates: Y, truth: Option<usize>) -> Self {
        Self { id: id.into(), test_row, candidates: CandidateList::Inline(candidates), truth }
    }

    /// Number of candidates.
    pub fn n_candidates(&self) -> usize {
        match &self.candidates {
            CandidateList::Pool(idx) => idx.len(),
            CandidateList::Inline(y) => y.n_rows(),
        }
    }

    /// The id a ranking reports for the candidate at `position`: its pool
    /// index for pooled lists, the position itself for inline ones.
    pub fn candidate_id(&self, position: usize) -> usize {
        match &self.candidates {
            CandidateList::Pool(idx) => idx[position],
            CandidateList::Inline(_) => position,
        }
    }

    fn invalid(&self, msg: String) -> Error {
        Error::InvalidQuery { query: self.id.clone(), msg }
    }

    /// Checks the query against the test inputs and the pool (a pooled list
    /// longer than the pool only repeats entries: refused,
    /// [`okr_io::check_count`]).
    fn validate(&self, n_test: usize, n_pool: Option<usize>) -> Result<()> {
        let n_c = self.n_candidates();
        if n_c == 0 {
            return Err(Error::EmptyQuery { query: self.id.clone() });
        }
        if self.test_row >= n_test {
            return Err(self.invalid(format!("test row {} out of range ({n_test} test rows)", self.test_row)));
        }
        if let Some(t) = self.truth.filter(|&t| t >= n_c) {
            return Err(self.invalid(format!("true candidate at position {t}, but {n_c} candidates")));
        }
        if let CandidateList::Pool(idx) = &self.candidates {
            let Some(n_pool) = n_pool else {
                return Err(self.invalid("pool indices given but no candidate pool".into()));
            };
            if let Some(&bad) = idx.iter().find(|&&i| i >= n_pool) {
                return Err(self.invalid(format!("pool index {bad} out of range (pool of {n_pool})")));
            }
            okr_io::check_count(n_c, n_pool, "pool indices", || {
                format!("the pool has {n_pool} rows (a longer list only repeats pool entries)")
            })
            .map_err(|e| self.invalid(e.to_string()))?;
        }
        Ok(())
    }
}

/// Rank of the true candidate among a query's candidates (1 = best).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrueRank {
    /// `1 + #{c : s_c < s_true}`: ties counted in the true candidate's favour.
    pub optimistic: usize,
    /// `#{c : s_c <= s_true}`: ties counted against it.
    pub pessimistic: usize,
}

/// The ranking of one query.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankedQuery {
    /// The query's id.
    pub id: String,
    /// The query's test row.
    pub test_row: usize,
    /// Number of candidates of the query.
    pub n_candidates: usize,
    /// Positions in the query's candidate list, best first (top-k or all).
    pub positions: Vec<usize>,
    /// Candidate ids in the same order: pool indices for pooled lists,
    /// positions for inline ones.
    pub ids: Vec<usize>,
    /// Scores $k(c, c) - 2\langle h(x), \psi(c)\rangle$ in the same order.
    pub scores: Vec<f64>,
    /// Rank of the true candidate, when the query marks one.
    pub true_rank: Option<TrueRank>,
}

/// Ranks per-query candidate sets under a memory budget.
///
/// | Name | Default | Purpose | Range |
/// |---|---|---|---|
/// | `memory_budget` | 1 GiB | peak bytes for the pool cache, coefficient, atom-product and score tiles (never below one query and one candidate) | `> 0` |
/// | `top_k` | all | candidates reported per query | `>= 1`, or all |
///
/// See the [module documentation](self) for the computation, the tie rules
/// and the file format.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PerQueryDecoder {
    memory_budget: usize,
    top_k: Option<usize>,
}

impl Default for PerQueryDecoder {
    fn default() -> Self {
        Self { memory_budget: 1 << 30, top_k: None }
    }
}

/// The candidate pool with what every tile needs from it: its distinct rows
/// ([`Rows::group_duplicates`]) and their norms. Everything is kept per
/// distinct row but the group of each pool row, so a pool of many identical
/// rows (a file of `-` lines) costs one index per row.
struct PoolState<Y> {
    /// The distinct rows, in first-occurrence order.
    distinct: Y,
    /// $k(c, c)$ of every distinct row.
    norms: Vec<f64>,
    /// For every pool row, its distinct row.
    group: Vec<usize>,
}

/// Most queries in a tile: the tile's score GEMM computes every query
/// against every pool column the tile lists, so larger tiles waste flops
/// when the queries' lists barely overlap.
const MAX_TILE_QUERIES: usize = 32;
// A tile query's 1-based index fits the `u8` stamps of `rank_tile`.
const _: () = assert!(MAX_TILE_QUERIES < 256);

/// Work done by a ranking and the wall time of its parts (see
/// [`PerQueryDecoder::rank_with_stats`]); for benchmarks, never needed to rank.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct RankStats {
    /// Queries ranked.
    pub queries: usize,
    /// Query tiles.
    pub tiles: usize,
    /// Seconds computing coefficients `C`.
    pub coefficient_seconds: f64,
    /// Candidate columns whose atom products `B K_y(U, c)` were computed
    /// (pooled and inline; a whole-pool cache counts each pool row once).
    pub product_columns: usize,
    /// Seconds computing atom products.
    pub product_seconds: f64,
    /// Floating-point operations of the score products `C G` (2 per
    /// multiply-add), as executed.
    pub score_flops: f64,
    /// Of `score_flops`, those for entries a query asked for (its own
    /// distinct candidates).
    pub useful_score_flops: f64,
    /// Seconds in score products (GEMMs and, for inline queries, GEMVs).
    pub score_seconds: f64,
}

impl PerQueryDecoder {
    /// The default decoder: 1 GiB budget, every candidate reported.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the memory budget in bytes.
    pub fn memory_budget(mut self, bytes: usize) -> Self {
        self.memory_budget = bytes;
        self
    }

    /// Reports only the `k` best candidates of each query (`None`: all).
    pub fn top_k(mut self, k: Option<usize>) -> Self {
        self.top_k = k;
        self
    }

    fn check(&self) -> Result<()> {
        if self.top_k == Some(0) {
            return Err(Error::InvalidParameter { name: "top_k", value: "0".into(), expected: ">= 1 or all" });
        }
        if self.memory_budget == 0 {
            return Err(Error::InvalidParameter { name: "memory_budget", value: "0".into(), expected: "> 0 bytes" });
        }
        Ok(())
    }

    /// Ranks every query and collects the rankings in query order.
    ///
    /// # Errors
    /// As [`rank`](PerQueryDecoder::rank).
    pub fn rank_all<X, Y, M, I>(&self, model: &M, x: &X, pool: Option<&Y>, queries: I) -> Result<Vec<RankedQuery>>
    where
        X: Rows,
        Y: Rows,
        M: SurrogateModel<X, Y> + ?Sized,
        I: IntoIterator<Item = Query<Y>>,
    {
        let mut out = Vec::new();
        self.rank(model, x, pool, queries.into_iter().map(Ok), |r| {
            out.push(r);
            Ok(())
        })?;
        Ok(out)
    }

    /// Ranks the queries of a stream (for example a [`CandidateFileReader`])
    /// and hands each ranking to `sink`, in query order, tile by tile.
    ///
    /// `x` holds the test inputs the queries' `test_row`s refer to; `pool` is
    /// the candidate pool of pooled queries.
    ///
    /// # Errors
    /// The first error of the stream or of `sink`; [`Error::EmptyQuery`]
    /// naming a query without candidates; [`Error::InvalidQuery`] for a test
    /// row, pool index or true position out of range, or a pooled list
    /// longer than the pool; invalid decoder
    /// parameters; the model's shape errors.
    pub fn rank<X, Y, M, I, F>(&self, model: &M, x: &X, pool: Option<&Y>, queries: I, sink: F) -> Result<()>
    where
        X: Rows,
        Y: Rows,
        M: SurrogateModel<X, Y> + ?Sized,
        I: IntoIterator<Item = Result<Query<Y>>>,
        F: FnMut(RankedQuery) -> Result<()>,
    {
        self.rank_with_stats(model, x, pool, queries, sink).map(|_| ())
    }

    /// [`rank`](PerQueryDecoder::rank), also returning the work done and the
    /// wall time of its parts (coefficients, atom products, score products).
    ///
    /// # Errors
    /// As [`rank`](PerQueryDecoder::rank).
    pub fn rank_with_stats<X, Y, M, I, F>(
        &self,
        model: &M,
        x: &X,
        pool: Option<&Y>,
        queries: I,
        mut sink: F,
    ) -> Result<RankStats>
    where
        X: Rows,
        Y: Rows,
        M: SurrogateModel<X, Y> + ?Sized,
        I: IntoIterator<Item = Result<Query<Y>>>,
        F: FnMut(RankedQuery) -> Result<()>,
    {
        self.check()?;
        let mut stats = RankStats::default();
        model.check_inputs(x)?;
        let par = Par::rayon(0);
        let r = model.n_atoms();
        let r1 = r.max(1);
        let mut budget = self.memory_budget / 8;
        let n_pool = pool.map(Rows::n_rows);

        // The pool's norms and duplicate groups always, its atom products when
        // they fit in half the budget.
        let (pool, whole) = match pool {
            Some(pool) => {
                model.check_outputs(pool)?;
                let (distinct, group) = pool.group_duplicates();
                let norms = model.output_sq_norms(&distinct);
                let n_pool = distinct.n_rows();
                let whole = if r1.saturating_mul(n_pool) <= budget / 2 {
                    budget -= r * n_pool;
                    let chunk = (budget / 4 / r1).clamp(1, n_pool.max(1));
                    let mut g = Mat::zeros(r, n_pool);
                    let start = Instant::now();
                    for c0 in (0..n_pool).step_by(chunk) {
                        let ct = chunk.min(n_pool - c0);
                        model.atom_products_into(&distinct.slice(c0..c0 + ct), g.as_mut().subcols_mut(c0, ct), par)?;
                    }
                    stats.product_seconds += start.elapsed().as_secs_f64();
                    stats.product_columns += n_pool;
                    Some(g)
                } else {
                    None
                };
                (Some(PoolState { distinct, norms, group }), whole)
            }
            None => (None, None),
        };
        let quarter = (budget / 4).max(1);
        // Coefficients plus the model's temporaries: about 2 r per query.
        let max_tile_queries = (quarter / (2 * r1)).clamp(1, MAX_TILE_QUERIES);

        let mut tile: Vec<Query<Y>> = Vec::new();
        let mut tile_candidates = 0usize;
        let mut queries = queries.into_iter();
        loop {
            let next = queries.next().transpose()?;
            if let Some(q) = &next {
                q.validate(x.n_rows(), n_pool)?;
                if let CandidateList::Inline(y) = &q.candidates {
                    model.check_outputs(y)?;
                }
            }
            // The tile's scores `S` take at most (queries x listed candidates) entries.
            let full = match &next {
                Some(q) => {
                    !tile.is_empty()
                        && (tile.len() >= max_tile_queries
                            || (tile.len() + 1).saturating_mul(tile_candidates + q.n_candidates()) > quarter)
                }
                None => true,
            };
            if full && !tile.is_empty() {
                self.rank_tile(model, x, pool.as_ref(), whole.as_ref(), &tile, quarter, par, &mut stats, &mut sink)?;
                stats.tiles += 1;
                stats.queries += tile.len();
                tile.clear();
                tile_candidates = 0;
            }
            match next {
                Some(q) => {
                    tile_candidates += q.n_candidates();
                    tile.push(q);
                }
                None => return Ok(stats),
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn rank_tile<X, Y, M, F>(
        &self,
        model: &M,
        x: &X,
        pool: Option<&PoolState<Y>>,
        whole: Option<&Mat<f64>>,
        tile: &[Query<Y>],
        quarter: usize,
        par: Par,
        stats: &mut RankStats,
        sink: &mut F,
    ) -> Result<()>
    where
        X: Rows,
        Y: Rows,
        M: SurrogateModel<X, Y> + ?Sized,
        F: FnMut(RankedQuery) -> Result<()>,
    {
        let r = model.n_atoms();
        let r1 = r.max(1);
        let rows: Vec<usize> = tile.iter().map(|q| q.test_row).collect();
        let mut coef = Mat::zeros(tile.len(), r);
        let start = Instant::now();
        model.coefficients_into(&x.select(&rows), coef.as_mut(), par)?;
        stats.coefficient_seconds += start.elapsed().as_secs_f64();

        // Pooled queries: the distinct pool rows the tile lists, and the
        // scores' products `S = C G_U` of every tile query with every one of
        // them, one GEMM per column group.
        let mut used: Vec<usize> = tile
            .iter()
            .filter_map(|q| match &q.candidates {
                CandidateList::Pool(idx) => Some(idx.iter().map(|&i| pool.map_or(i, |p| p.group[i]))),
                CandidateList::Inline(_) => None,
            })
            .flatten()
            .collect();
        used.sort_unstable();
        used.dedup();
        used.shrink_to_fit();
        let mut s_tile = Mat::<f64>::zeros(tile.len(), used.len());
        let mut g = Mat::<f64>::zeros(0, 0);
        if let (Some(pool), false) = (pool, used.is_empty()) {
            let group = (quarter / r1.max(tile.len())).max(1);
            for c0 in (0..used.len()).step_by(group) {
                let sel = &used[c0..(c0 + group).min(used.len())];
                g.resize_with(r, sel.len(), |_, _| 0.0);
                let start = Instant::now();
                match whole {
                    Some(w) => sel.iter().enumerate().for_each(|(j, &i)| g.col_mut(j).copy_from(w.col(i))),
                    None => {
                        model.atom_products_into(&pool.distinct.select(sel), g.as_mut(), par)?;
                        stats.product_columns += sel.len();
                    }
                }
                let mid = Instant::now();
                stats.product_seconds += (mid - start).as_secs_f64();
                matmul(s_tile.as_mut().subcols_mut(c0, sel.len()), Accum::Replace, coef.as_ref(), g.as_ref(), 1.0, par);
                stats.score_seconds += mid.elapsed().as_secs_f64();
                stats.score_flops += 2.0 * (tile.len() * r * sel.len()) as f64;
            }
        }

        let mut g_q = g;
        let chunk = (quarter / r1).max(1);
        // Which tile query (1-based) last read each column of `S`: counts
        // the distinct rows a query lists (tiles hold at most 32 queries).
        let mut seen = vec![0u8; used.len()];
        for (t, q) in tile.iter().enumerate() {
            let c_t = coef.as_ref().subrows(t, 1).transpose();
            // Identical candidates share one score (one column of `S`, or
            // one distinct inline row), so they tie exactly (and cost one
            // evaluation).
            let scores: Vec<f64> = match &q.candidates {
                CandidateList::Pool(idx) => {
                    // Each position reads its distinct row's column of `S`:
                    // no table per query beyond its scores.
                    let pool = pool.expect("validated: pooled queries have a pool");
                    let stamp = u8::try_from(t + 1).expect("at most MAX_TILE_QUERIES queries per tile");
                    let mut n_distinct = 0;
                    let scores = idx
                        .iter()
                        .map(|&i| {
                            let d = pool.group[i];
                            let col = used.binary_search(&d).expect("the tile's union holds its queries' rows");
                            if std::mem::replace(&mut seen[col], stamp) != stamp {
                                n_distinct += 1;
                            }
                            pool.norms[d] - 2.0 * s_tile[(t, col)]
                        })
                        .collect();
                    stats.useful_score_flops += 2.0 * (r * n_distinct) as f64;
                    scores
                }
                CandidateList::Inline(y) => {
                    let (rows, slot) = y.group_duplicates();
                    let n_d = rows.n_rows();
                    let mut distinct = vec![0.0; n_d];
                    for c0 in (0..n_d).step_by(chunk) {
                        let ct = chunk.min(n_d - c0);
                        let part = if ct == n_d { rows.clone() } else { rows.slice(c0..c0 + ct) };
                        g_q.resize_with(r, ct, |_, _| 0.0);
                        let start = Instant::now();
                        model.atom_products_into(&part, g_q.as_mut(), par)?;
                        let mid = Instant::now();
                        stats.product_seconds += (mid - start).as_secs_f64();
                        stats.product_columns += ct;
                        let norms = model.output_sq_norms(&part);
                        score_block(&mut distinct[c0..c0 + ct], g_q.as_ref(), c_t, &norms, par);
                        stats.score_seconds += mid.elapsed().as_secs_f64();
                        stats.score_flops += 2.0 * (r * ct) as f64;
                        stats.useful_score_flops += 2.0 * (r * ct) as f64;
                    }
                    slot.iter().map(|&d| distinct[d]).collect()
                }
            };
            sink(self.ranked(q, &scores))?;
        }
        Ok(())
    }

    /// Orders one query's scores and finds the true candidate's rank.
    fn ranked<Y: Rows>(&self, q: &Query<Y>, scores: &[f64]) -> RankedQuery {
        let n_c = scores.len();
        let by_score = |a: &usize, b: &usize| cmp_scores(scores[*a], scores[*b]).then(a.cmp(b));
        let mut positions: Vec<usize> = (0..n_c).collect();
        let k = self.top_k.unwrap_or(n_c).min(n_c);
        if k < n_c {
            positions.select_nth_unstable_by(k - 1, by_score);
            positions.truncate(k);
        }
        positions.sort_unstable_by(by_score);
        let true_rank = q.truth.map(|t| {
            let (mut less, mut equal) = (0, 0);
            for &s in scores {
                match cmp_scores(s, scores[t]) {
                    Ordering::Less => less += 1,
                    Ordering::Equal => equal += 1,
                    Ordering::Greater => {}
                }
            }
            TrueRank { optimistic: less + 1, pessimistic: less + equal }
        });
        RankedQuery {
            id: q.id.clone(),
            test_row: q.test_row,
            n_candidates: n_c,
            ids: positions.iter().map(|&p| q.candidate_id(p)).collect(),
            scores: positions.iter().map(|&p| scores[p]).collect(),
            positions,
            true_rank,
        }
    }
}

/// Score order: numbers ascending, NaN after every number and equal to NaN.
fn cmp_scores(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (false, false) => a.partial_cmp(&b).expect("not NaN"),
        (a_nan, b_nan) => a_nan.cmp(&b_nan),
    }
}

/// `dst = norms - 2 G^T c`: one `(n_c, r) x (r, 1)` product.
fn score_block(dst: &mut [f64], g: MatRef<'_, f64>, c: MatRef<'_, f64>, norms: &[f64], par: Par) {
    dst.copy_from_slice(norms);
    let n_c = dst.len();
    let out = faer::MatMut::from_column_major_slice_mut(dst, n_c, 1);
    matmul(out, Accum::Add, g.transpose(), c, -2.0, par);
}

mod file;

pub use file::{CandidateFileMode, CandidateFileReader, TextRows, fuzz_candidate_file, read_candidate_pool};

#[cfg(test)]
mod tests {
    use super::*;
    use okr_kernels::{DenseRows, LabelSets};

    #[test]
    fn scores_order_nan_last() {
        assert_eq!(cmp_scores(1.0, f64::NAN), Ordering::Less);
        assert_eq!(cmp_scores(f64::NAN, f64::NAN), Ordering::Equal);
        assert_eq!(cmp_scores(2.0, 1.0), Ordering::Greater);
    }

    #[test]
    fn ranking_ties_and_true_rank() {
        let q: Query<DenseRows> = Query::pooled("q", 0, vec![10, 11, 12, 13, 14], Some(2));
        let scores = [3.0, 1.0, 1.0, f64::NAN, 1.0];
        let all = PerQueryDecoder::new().ranked(&q, &scores);
        assert_eq!(all.positions, vec![1, 2, 4, 0, 3]);
        assert_eq!(all.ids, vec![11, 12, 14, 10, 13]);
        assert_eq!(all.true_rank, Some(TrueRank { optimistic: 1, pessimistic: 3 }));
        let top = PerQueryDecoder::new().top_k(Some(2)).ranked(&q, &scores);
        assert_eq!(top.positions, vec![1, 2]);
    }

    #[test]
    fn reader_parses_inline_and_pool_files() {
        let text = "okr-candidates 1 inline\n# c\nquery a 0\n1 2\n*0,3\n\nquery b 1\nquery c 2\n-\n";
        let qs: Vec<Query<LabelSets>> =
            CandidateFileReader::from_reader("t", text.as_bytes(), 4).unwrap().collect::<Result<_>>().unwrap();
        assert_eq!(qs.len(), 3);
        assert_eq!((qs[0].id.as_str(), qs[0].test_row, qs[0].truth), ("a", 0, Some(1)));
        let CandidateList::Inline(y) = &qs[0].candidates else { panic!() };
        assert_eq!((y.set(0), y.set(1)), (&[1, 2][..], &[0, 3][..]));
        assert_eq!(qs[1].n_candidates(), 0);
        let CandidateList::Inline(y) = &qs[2].candidates else { panic!() };
        assert_eq!(y.set(0), &[] as &[usize]);

        let text = "okr-candidates 1 pool\nquery a 3\n5 *7\n9\n";
        let qs: Vec<Query<DenseRows>> =
            CandidateFileReader::from_reader("t", text.as_bytes(), 0).unwrap().collect::<Result<_>>().unwrap();
        assert_eq!(qs[0].candidates, CandidateList::Pool(vec![5, 7, 9]));
        assert_eq!((qs[0].test_row, qs[0].truth), (3, Some(1)));
    }

    #[test]
    fn reader_errors_name_file_and_line() {
        let bad = |text: &str| {
            CandidateFileReader::<LabelSets, _>::from_reader("f.txt", text.as_bytes(), 4)
                .and_then(|r| r.collect::<Result<Vec<_>>>())
                .unwrap_err()
                .to_string()
        };
        assert!(bad("okr-candidates 2 inline\n").starts_with("f.txt:1:"));
        assert!(bad("okr-candidates 1 inline\nquery a\n").starts_with("f.txt:2:"));
        assert!(bad("okr-candidates 1 inline\nquery a 0\n1\n9\n").starts_with("f.txt:4: index 9"));
        assert!(bad("okr-candidates 1 inline\nquery a 0\n*1\n*2\n").contains("f.txt:4: query a: a second true"));
        assert!(bad("okr-candidates 1 pool\nquery a 0\n1 x\n").starts_with("f.txt:3:"));
        assert!(bad("okr-candidates 1 inline\n1 2\n").starts_with("f.txt:2: expected `query"));
    }

    /// M1 (issue 35): with the pool's size known, a pooled list is checked
    /// as it is read: an index beyond the pool, or more indices than the
    /// pool has rows, is an error at its line; repeats within the size are
    /// fine. The ranker applies the same rule to queries built in code.
    #[test]
    fn pool_lists_are_checked_against_the_pool_as_read() {
        let read = |text: &str, n_pool: usize| {
            CandidateFileReader::<LabelSets, _>::from_reader("f.txt", text.as_bytes(), 2)
                .unwrap()
                .pool_rows(n_pool)
                .collect::<Result<Vec<_>>>()
        };
        let err = read("okr-candidates 1 pool\nquery a 0\n0 1\n# more\n1 0\n", 3).unwrap_err().to_string();
        assert_eq!(
            err,
            "f.txt:5: query a: more than 3 pool indices: the pool has 3 rows (a longer list only repeats pool entries)"
        );
        let err = read("okr-candidates 1 pool\nquery a 0\n0\nquery b 1\n1 3\n", 3).unwrap_err().to_string();
        assert_eq!(err, "f.txt:5: query b: pool index 3 out of range (pool of 3 rows)");
        let qs = read("okr-candidates 1 pool\nquery a 0\n2 *0 2\n", 3).unwrap();
        assert_eq!((&qs[0].candidates, qs[0].truth), (&CandidateList::Pool(vec![2, 0, 2]), Some(1)));

        let x = DenseRows::from_rows(&[vec![1.0, 0.0], vec![0.0, 1.0]]).unwrap();
        let y = DenseRows::from_rows(&[vec![1.0], vec![0.0]]).unwrap();
        let model = okr_estimators::Iokr::params(okr_kernels::Linear, okr_kernels::Linear).lambda(1e-3);
        let model = okr_estimators::Fit::fit(&model, &x, &y).unwrap();
        let long = Query::pooled("q", 0, vec![0, 1, 0], None);
        let err = PerQueryDecoder::new().rank_all(&model, &x, Some(&y), [long]).unwrap_err().to_string();
        assert!(err.contains("more than 2 pool indices"), "{err}");
        let ok =
            PerQueryDecoder::new().rank_all(&model, &x, Some(&y), [Query::pooled("q", 0, vec![1, 1], None)]).unwrap();
        assert_eq!(ok[0].scores[0], ok[0].scores[1]);
    }

    #[test]
    fn dense_rows_parse_and_width() {
        let y = DenseRows::parse_rows(["1, 2.5", "-1 0"], 2).unwrap();
        assert_eq!(y.as_mat()[(0, 1)], 2.5);
        assert_eq!(DenseRows::parse_rows(["1 2 3"], 2).unwrap_err().0, 0);
        assert!(DenseRows::parse_rows(["1", "nan 1"], 1).is_err());
    }
}
