//! The order of the score chain $K_x(x, X_e)\,M\,G$ ([`ChainOrder`]), the
//! rule that picks it ([`ChainCosts`]), the tiles under the memory budget
//! ([`ChainPlan`]) and the candidates-first decoding loop.

use faer::{Mat, Par};
use okr_kernels::Rows;
use okr_linalg::profile;
use okr_surrogate::{LinearExpansion, SurrogateModel};
use serde::{Deserialize, Serialize};

use crate::scan::{Scratch, scan_tile, scan_tile_split, split_into};
use crate::{Decoded, Error, Precision, Result};

/// Order in which [`CandidateDecoder`](crate::CandidateDecoder) multiplies
/// the score chain $S = K_x(x, X_e)\,M\,G$ of a model with a linear input
/// map ([`SurrogateModel::linear_expansion`]).
///
/// IOKR's ridge map is one too, applied by solves
/// ([`LinearExpansion::ridge`]). Models without one always decode
/// coefficients first, whatever the order asked for; [`ChainPlan::order`]
/// says which order runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ChainOrder {
    /// The order with fewer flops by [`ChainCosts`] (ties: coefficients first).
    #[default]
    Auto,
    /// $C = K_x(x, X_e)\,M$ per test tile, then $S = C\,G$.
    CoefficientsFirst,
    /// $F = M G$ per candidate tile, then $S = K_x(x, X_e)\,F$.
    CandidatesFirst,
}

impl std::str::FromStr for ChainOrder {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "auto" => Ok(Self::Auto),
            "coefficients-first" => Ok(Self::CoefficientsFirst),
            "candidates-first" => Ok(Self::CandidatesFirst),
            _ => Err(Error::InvalidParameter {
                name: "chain_order",
                value: s.into(),
                expected: "auto, coefficients-first or candidates-first",
            }),
        }
    }
}

impl std::fmt::Display for ChainOrder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Auto => "auto",
            Self::CoefficientsFirst => "coefficients-first",
            Self::CandidatesFirst => "candidates-first",
        })
    }
}

/// Flops assumed for one input kernel entry whose rows are not vectors
/// (graphs, precomputed Grams): the kernel rows of a second candidate tile
/// are then counted as this many flops each.
pub const KERNEL_ENTRY_FLOPS_UNKNOWN: f64 = 1024.0;

/// The flop counts of the two orders of the score chain, for $n$ test rows,
/// $e$ expansion rows, $a$ atoms, $c$ candidates and a map $M$ that costs
/// $\mu$ flops per column it is applied to ($\mu = 2ea$ for a stored map,
/// [`new`](Self::new); $2e^2$ for IOKR's ridge map, whose application is two
/// triangular solves, [`with_map_flops`](Self::with_map_flops)):
///
/// $$W_{\text{coef}} = n \mu + 2 n a c, \qquad
/// W_{\text{cand}} = c \mu + 2 n e c + (p - 1)\, n e \kappa,$$
///
/// where $p$ is the number of candidate tiles of the candidates-first order
/// (the folded candidates $F = M G$, `(e, c)`, do not fit in the memory
/// budget when $p > 1$, so the kernel rows $K_x(x, X_e)$ are recomputed for
/// every candidate tile) and $\kappa$ the flops of one kernel entry
/// ([`kernel_entry_flops`]). The first pass of kernel rows and the atom
/// products are common to both orders and left out.
///
/// # Example
/// ```
/// use okr_decode::{ChainCosts, ChainOrder};
/// // Bookmarks-shaped: 27856 test rows, 15000 anchors, 12612 atoms and
/// // candidates, two candidate tiles of sparse rows of 2150 features.
/// let w = ChainCosts::new(27856, 15000, 12612, 12612, 2, 4300.0);
/// assert!((w.coefficients_first / 1.94e13 - 1.0).abs() < 0.01);
/// assert_eq!(w.cheaper(), ChainOrder::CandidatesFirst);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChainCosts {
    /// $W_{\text{coef}}$.
    pub coefficients_first: f64,
    /// $W_{\text{cand}}$.
    pub candidates_first: f64,
}

impl ChainCosts {
    /// The two counts for `n` test rows, `e` expansion rows, `a` atoms, `c`
    /// candidates, `p` candidate tiles and `kappa` flops per kernel entry,
    /// with a stored map ($\mu = 2ea$).
    pub fn new(n: usize, e: usize, a: usize, c: usize, p: usize, kappa: f64) -> Self {
        Self::with_map_flops(n, e, a, c, p, kappa, 2.0 * e as f64 * a as f64)
    }

    /// As [`new`](Self::new) with `mu` flops per column the map is applied
    /// to ([`LinearExpansion::map_flops_per_column`]).
    ///
    /// # Example
    /// ```
    /// use okr_decode::{ChainCosts, ChainOrder};
    /// // IOKR on a Bibtex-sized problem (4880 training rows, 2058 distinct
    /// // label sets as atoms and candidates, 1836 features): solving against
    /// // the 2515 test rows is cheaper than against the candidates, because
    /// // the scores then multiply 2058 atoms instead of 4880 training rows;
    /// // for 100000 rows to predict it is the other way round.
    /// let mu = 2.0 * 4880.0 * 4880.0;
    /// let bibtex = ChainCosts::with_map_flops(2515, 4880, 2058, 2058, 1, 3672.0, mu);
    /// assert_eq!(bibtex.cheaper(), ChainOrder::CoefficientsFirst);
    /// let many = ChainCosts::with_map_flops(100_000, 4880, 2058, 2058, 1, 3672.0, mu);
    /// assert_eq!(many.cheaper(), ChainOrder::CandidatesFirst);
    /// assert!(many.coefficients_first / many.candidates_first > 2.5);
    /// ```
    pub fn with_map_flops(n: usize, e: usize, a: usize, c: usize, p: usize, kappa: f64, mu: f64) -> Self {
        let (n, e, a, c, p) = (n as f64, e as f64, a as f64, c as f64, p.max(1) as f64);
        Self {
            coefficients_first: n * mu + 2.0 * n * a * c,
            candidates_first: c * mu + 2.0 * n * e * c + (p - 1.0) * n * e * kappa,
        }
    }

    /// [`ChainOrder::CandidatesFirst`] when $W_{\text{cand}} < W_{\text{coef}}$,
    /// otherwise [`ChainOrder::CoefficientsFirst`].
    pub fn cheaper(&self) -> ChainOrder {
        if self.candidates_first < self.coefficients_first {
            ChainOrder::CandidatesFirst
        } else {
            ChainOrder::CoefficientsFirst
        }
    }
}

/// $\kappa$, the flops of one input kernel entry: $2d$ for rows of $d$
/// features (the inner product of a Gaussian, linear or polynomial kernel;
/// an upper bound for sparse rows), [`KERNEL_ENTRY_FLOPS_UNKNOWN`] otherwise.
pub fn kernel_entry_flops(feature_dim: Option<usize>) -> f64 {
    feature_dim.map_or(KERNEL_ENTRY_FLOPS_UNKNOWN, |d| 2.0 * d.max(1) as f64)
}

/// What [`CandidateDecoder::decode`](crate::CandidateDecoder::decode) does
/// for a model, a number of test rows and of candidates
/// ([`CandidateDecoder::plan`](crate::CandidateDecoder::plan)).
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct ChainPlan {
    /// The order that runs (never [`ChainOrder::Auto`]).
    pub order: ChainOrder,
    /// Both orders' flops, for a model with a linear input map.
    pub costs: Option<ChainCosts>,
    /// Test rows per tile.
    pub test_tile: usize,
    /// Candidates per tile.
    pub candidate_tile: usize,
    /// Number of candidate tiles (candidates first: passes over the test
    /// rows, each computing their kernel rows).
    pub candidate_tiles: usize,
    /// Candidates first: candidates whose atom products are folded per GEMM.
    pub fold_tile: usize,
}

/// Coefficients-first tile sizes (in rows) under a budget counted in f64 entries.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct TilePlan {
    pub(crate) test_tile: usize,
    pub(crate) cand_tile: usize,
}

impl TilePlan {
    /// `extra` is what a test row needs beyond the decoding buffers, in f64
    /// entries (the squared RKHS errors' temporaries of
    /// [`decode_tiles`](crate::CandidateDecoder::decode_tiles)).
    pub(crate) fn new(budget: usize, r: usize, n_c: usize, n_te: usize, extra: usize) -> Self {
        // Cache all of G when it takes at most half the budget; otherwise a
        // candidate tile gets a quarter.
        let cand_tile = if r.saturating_mul(n_c) <= budget / 2 { n_c } else { (budget / 4 / r).clamp(1, n_c) };
        // A candidate tile computed per test tile also has its column-major
        // transpose beside it (the score GEMM's left factor).
        let used = if cand_tile == n_c { r * cand_tile } else { 2 * r * cand_tile };
        // The coefficient tile (tt x r), its column-major transpose (for the
        // score GEMM), the model's Gram temporary (r x tt) and the score tile
        // (cand_tile x tt) share what is left.
        let per_test_row = 3 * r + cand_tile + extra;
        let test_tile = (budget.saturating_sub(used) / per_test_row).clamp(1, n_te.max(1));
        Self { test_tile, cand_tile }
    }

    /// The coefficients-first plan of `budget` bytes.
    pub(crate) fn coefficients_first(
        budget: usize,
        precision: Precision,
        r: usize,
        n_c: usize,
        n_te: usize,
        extra: usize,
    ) -> Self {
        // F32 holds an f32 copy of G, a transposed f64 and a transposed f32
        // copy of the coefficient tile and an f32 score tile: at most 2.5 f64
        // entries per entry of the f64 plan.
        let bytes_per_entry = match precision {
            Precision::F64 => 8,
            Precision::F32 => 20,
        };
        Self::new(budget / bytes_per_entry, r, n_c, n_te, extra)
    }
}

/// Candidates-first tiles of `budget` bytes: `(candidate tile, fold tile,
/// test tile)` for `e` expansion rows, `a` atoms, `n_c` candidates and
/// `n_te` test rows.
///
/// The folded tile $F$ `(e, ct)` is kept while the test rows pass (in f64,
/// or under F32 as the f32 pair $F_{hi} + F_{lo}$ of the same bytes); it is
/// the whole of $F$ when that takes at most half the budget, otherwise the
/// fewest equal tiles of at most three quarters. What is left goes half to
/// the atom products being folded `(a, w)` (under F32 also the f64 fold
/// `(e, w)` before it is split), half to the test tile: its kernel rows
/// `(e, tt)` and scores `(ct, tt)` (under F32 also the kernel rows in f32,
/// with f32 scores).
pub(crate) fn candidates_first_tiles(
    budget: usize,
    precision: Precision,
    e: usize,
    a: usize,
    n_c: usize,
    n_te: usize,
) -> (usize, usize, usize) {
    let (e, a, n_c) = (e.max(1), a.max(1), n_c.max(1));
    let f_bytes = 8 * e;
    let cand_tile = if f_bytes.saturating_mul(n_c) <= budget / 2 {
        n_c
    } else {
        let tiles = f_bytes.saturating_mul(n_c).div_ceil((budget / 4 * 3).max(1));
        n_c.div_ceil(tiles.max(1)).clamp(1, n_c)
    };
    let rest = budget.saturating_sub(f_bytes * cand_tile) / 2;
    let fold_column = match precision {
        Precision::F64 => 8 * a,
        Precision::F32 => 8 * (a + e),
    };
    let fold_tile = (rest / fold_column).clamp(1, cand_tile);
    let per_test_row = match precision {
        Precision::F64 => 8 * (e + cand_tile),
        Precision::F32 => 12 * e + 4 * cand_tile,
    };
    let test_tile = (rest / per_test_row).clamp(1, n_te.max(1));
    (cand_tile, fold_tile, test_tile)
}

/// The coefficients-first plan of `budget` bytes for `n_atoms` atoms, `n_te`
/// test rows, `n_c` candidates and `extra` more f64 entries per test row.
pub(crate) fn coefficients_first_plan(
    budget: usize,
    precision: Precision,
    n_atoms: usize,
    n_te: usize,
    n_c: usize,
    extra: usize,
) -> ChainPlan {
    let coef = TilePlan::coefficients_first(budget, precision, n_atoms.max(1), n_c, n_te, extra);
    ChainPlan {
        order: ChainOrder::CoefficientsFirst,
        costs: None,
        test_tile: coef.test_tile,
        candidate_tile: coef.cand_tile,
        candidate_tiles: n_c.div_ceil(coef.cand_tile.max(1)),
        fold_tile: 0,
    }
}

/// The plan of a decoder with `budget` bytes, `precision` and `order` for a
/// model of `n_atoms` atoms and linear map `lin` (if any).
pub(crate) fn plan<X: Rows>(
    budget: usize,
    precision: Precision,
    order: ChainOrder,
    n_atoms: usize,
    lin: Option<&LinearExpansion<'_, X>>,
    n_te: usize,
    n_c: usize,
) -> ChainPlan {
    let coef_plan = |costs| ChainPlan { costs, ..coefficients_first_plan(budget, precision, n_atoms, n_te, n_c, 0) };
    // A map whose atoms are not the model's cannot be folded.
    let Some(lin) = lin.filter(|l| l.n_atoms() == n_atoms) else {
        return coef_plan(None);
    };
    let e = lin.n_expansion();
    let (ct, w, tt) = candidates_first_tiles(budget, precision, e, n_atoms, n_c, n_te);
    let tiles = n_c.div_ceil(ct);
    let kappa = kernel_entry_flops(lin.feature_dim());
    let costs = ChainCosts::with_map_flops(n_te, e, n_atoms, n_c, tiles, kappa, lin.map_flops_per_column());
    let order = match order {
        ChainOrder::Auto => costs.cheaper(),
        forced => forced,
    };
    match order {
        ChainOrder::CandidatesFirst => ChainPlan {
            order,
            costs: Some(costs),
            test_tile: tt,
            candidate_tile: ct,
            candidate_tiles: tiles,
            fold_tile: w,
        },
        _ => coef_plan(Some(costs)),
    }
}

/// Decodes candidates first: for each candidate tile, $F = M G$ in fold
/// tiles, then every test tile's kernel rows $K_x(X_e, x)$ scored against
/// it, $S^\top = -2 F^\top K_x(X_e, x) + k(c, c)$. Candidate tiles arrive in
/// index order, so the top-k merge keeps ties at the lowest index.
#[allow(clippy::too_many_arguments)]
pub(crate) fn decode_candidates_first<X, Y, M>(
    plan: &ChainPlan,
    precision: Precision,
    model: &M,
    lin: &LinearExpansion<'_, X>,
    x: &X,
    candidates: &Y,
    norms: &[f64],
    k: usize,
) -> Result<Decoded>
where
    X: Rows,
    Y: Rows,
    M: SurrogateModel<X, Y> + ?Sized,
{
    let (n_te, n_c) = (x.n_rows(), candidates.n_rows());
    let (e, a) = (lin.n_expansion(), lin.n_atoms());
    let par = Par::rayon(0);
    // F in f64, or under F32 as the pair F_hi + F_lo (see `scan_tile_split`)
    // with one f64 fold tile before the split.
    let split = precision == Precision::F32;
    let (fe, fs) = if split { (0, plan.candidate_tile) } else { (plan.candidate_tile, 0) };
    let mut f = Mat::<f64>::zeros(e, fe);
    let mut hi = Mat::<f32>::zeros(e, fs);
    let mut lo = Mat::<f32>::zeros(e, fs);
    let mut inv_scale = vec![1.0; fs];
    let mut fold = Mat::<f64>::zeros(e, if split { plan.fold_tile } else { 0 });
    let mut g = Mat::<f64>::zeros(a, plan.fold_tile);
    let mut kernel_rows = Mat::<f64>::zeros(e, plan.test_tile);
    let mut scratch = Scratch::new(precision);
    let mut indices = vec![usize::MAX; n_te * k];
    let mut scores = vec![f64::INFINITY; n_te * k];
    for c0 in (0..n_c).step_by(plan.candidate_tile) {
        let ct = plan.candidate_tile.min(n_c - c0);
        for w0 in (0..ct).step_by(plan.fold_tile) {
            let w = plan.fold_tile.min(ct - w0);
            let mut gw = g.as_mut().subcols_mut(0, w);
            {
                let _p = profile::phase("decode: atom products", 0.0);
                model.atom_products_into(&candidates.slice(c0 + w0..c0 + w0 + w), gw.as_mut(), par)?;
            }
            let _p = profile::phase("decode: fold candidates F = M G", 2.0 * (e * a * w) as f64);
            if split {
                let mut fw = fold.as_mut().subcols_mut(0, w);
                lin.fold_into(gw.as_ref(), fw.as_mut(), par)?;
                let (h, l) = (hi.as_mut().subcols_mut(w0, w), lo.as_mut().subcols_mut(w0, w));
                split_into(fw.as_ref(), h, l, &mut inv_scale[w0..w0 + w]);
            } else {
                lin.fold_into(gw.as_ref(), f.as_mut().subcols_mut(w0, w), par)?;
            }
        }
        for t0 in (0..n_te).step_by(plan.test_tile) {
            let tt = plan.test_tile.min(n_te - t0);
            let sliced;
            let xt = if tt == n_te {
                x
            } else {
                sliced = x.slice(t0..t0 + tt);
                &sliced
            };
            let mut kt = kernel_rows.as_mut().subcols_mut(0, tt);
            lin.kernel_rows_into(xt, kt.as_mut(), par)?;
            let range = t0 * k..(t0 + tt) * k;
            let (norms, idx, sc) = (&norms[c0..c0 + ct], &mut indices[range.clone()], &mut scores[range]);
            let scanned = if split {
                let (h, l) = (hi.as_ref().subcols(0, ct), lo.as_ref().subcols(0, ct));
                scan_tile_split(&mut scratch, kt.as_ref(), h, l, &inv_scale[..ct], norms, c0, idx, sc, par)
            } else {
                scan_tile(&mut scratch, kt.as_ref(), f.as_ref().subcols(0, ct), norms, c0, idx, sc, par)
            };
            scanned.map_err(|t| Error::NonFiniteScore { row: t0 + t })?;
        }
        okr_surrogate::progress::report(c0 + ct, n_c, "decode: candidates");
    }
    Ok(Decoded::from_parts(k, indices, scores))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tile_plan_respects_budget() {
        let budget = (1 << 20) / 8;
        let p = TilePlan::new(budget, 1000, 100_000, 5000, 0);
        assert!(p.cand_tile < 100_000);
        assert!(2 * p.cand_tile * 1000 + p.test_tile * (3 * 1000 + p.cand_tile) <= budget);
        let p = TilePlan::new(1 << 27, 100, 50, 7, 0);
        assert_eq!((p.cand_tile, p.test_tile), (50, 7));
    }

    /// Peak bytes of the candidates-first buffers stay within the budget
    /// whenever one row of each fits, and F is whole when it takes half.
    #[test]
    fn candidates_first_tiles_respect_budget() {
        for precision in [Precision::F64, Precision::F32] {
            // Bytes per entry of the kernel rows and the scores; the F32 fold
            // tile also holds the f64 fold `(e, w)` before its split.
            let (ke, se, split) = match precision {
                Precision::F64 => (8, 8, 0),
                Precision::F32 => (12, 4, 1),
            };
            for (budget, e, a, n_c, n_te) in
                [(1usize << 30, 15000, 12612, 12612, 27856), (1 << 20, 50, 40, 3000, 900), (1 << 16, 7, 3, 11, 5)]
            {
                let (ct, w, tt) = candidates_first_tiles(budget, precision, e, a, n_c, n_te);
                assert!((1..=n_c).contains(&ct) && (1..=ct).contains(&w) && (1..=n_te).contains(&tt));
                let peak = 8 * e * ct + 8 * (a + split * e) * w + (ke * e + se * ct) * tt;
                assert!(peak <= budget, "{precision} {budget}: {peak}");
            }
            let (ct, _, tt) = candidates_first_tiles(1 << 30, precision, 100, 100, 5000, 50);
            assert_eq!((ct, tt), (5000, 50));
        }
        // The full Bookmarks shape: two candidate tiles of F in either precision
        // (three while F32 kept an f32 copy beside the f64 F).
        let (ct, _, _) = candidates_first_tiles(1 << 30, Precision::F64, 15000, 12612, 12612, 27856);
        assert_eq!(12612usize.div_ceil(ct), 2);
        let (ct, _, _) = candidates_first_tiles(1 << 30, Precision::F32, 15000, 12612, 12612, 27856);
        assert_eq!(12612usize.div_ceil(ct), 2);
    }

    /// The rule against hand-computed counts: folding wins for few expansion
    /// rows, loses for many, and recomputed kernel rows can tip it back.
    #[test]
    fn chain_costs_follow_the_formula() {
        let w = ChainCosts::new(100, 10, 30, 30, 1, 8.0);
        assert_eq!(w.coefficients_first, 2.0 * 100.0 * 10.0 * 30.0 + 2.0 * 100.0 * 30.0 * 30.0);
        assert_eq!(w.candidates_first, 2.0 * 10.0 * 30.0 * 30.0 + 2.0 * 100.0 * 10.0 * 30.0);
        assert_eq!(w.cheaper(), ChainOrder::CandidatesFirst);
        // e > n: coefficients first.
        assert_eq!(ChainCosts::new(10, 100, 30, 30, 1, 8.0).cheaper(), ChainOrder::CoefficientsFirst);
        // Few atoms (reduced rank): coefficients first.
        assert_eq!(ChainCosts::new(1000, 100, 5, 500, 1, 8.0).cheaper(), ChainOrder::CoefficientsFirst);
        // Recomputing expensive kernel rows for 3 candidate tiles costs more than folding saves.
        let cheap = ChainCosts::new(100, 10, 30, 30, 3, 8.0);
        let dear = ChainCosts::new(100, 10, 30, 30, 3, 1e4);
        assert_eq!(cheap.candidates_first - w.candidates_first, 2.0 * 100.0 * 10.0 * 8.0);
        assert_eq!((cheap.cheaper(), dear.cheaper()), (ChainOrder::CandidatesFirst, ChainOrder::CoefficientsFirst));
        // A tie goes to coefficients first (today's path).
        let tie = ChainCosts { coefficients_first: 1.0, candidates_first: 1.0 };
        assert_eq!(tie.cheaper(), ChainOrder::CoefficientsFirst);
        assert_eq!(kernel_entry_flops(Some(2150)), 4300.0);
        assert_eq!(kernel_entry_flops(None), KERNEL_ENTRY_FLOPS_UNKNOWN);
    }

    #[test]
    fn chain_order_parses_and_prints() {
        for o in [ChainOrder::Auto, ChainOrder::CoefficientsFirst, ChainOrder::CandidatesFirst] {
            assert_eq!(o.to_string().parse::<ChainOrder>().unwrap(), o);
        }
        assert!("both".parse::<ChainOrder>().is_err());
        assert_eq!(ChainOrder::default(), ChainOrder::Auto);
    }
}
