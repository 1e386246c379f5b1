//! [`CoordinateDecoder`]: decoding coordinates predicted by any model
//! (a neural network, boosted trees, a ridge in another language) in an
//! output basis fitted by okr ([`CoordinateBasis`], okr-estimators'
//! `OutputBasis`).

use okr_kernels::Rows;
use okr_surrogate::{CoordinateBasis, Coordinates};
use serde::{Deserialize, Serialize};

use crate::per_query::{PerQueryDecoder, Query, RankedQuery};
use crate::{CandidateDecoder, Decoded, Result};

/// Scores candidates against predicted coordinates $\hat z$ `(n_test, r)`
/// in an orthonormal output basis $e_1, \dots, e_r$:
/// $$s_c = k(c, c) - 2\,\hat z^\top z(c) = \|h - \psi(c)\|^2 - \|h\|^2,
/// \qquad h = \textstyle\sum_j \hat z_j e_j,\quad z(c)_j = \langle e_j, \psi(c)\rangle,$$
/// lowest first. It is [`CandidateDecoder`] (tiles under its memory budget,
/// [`Precision`](crate::Precision), ties to the lowest candidate index) and
/// [`PerQueryDecoder`] applied to the basis as a
/// [`SurrogateModel`](okr_surrogate::SurrogateModel) whose coefficients are
/// the coordinates: no second decoder. What it adds is the check of the
/// coordinates first ([`CoordinateBasis::check_coordinates`]).
///
/// # Example
/// ```
/// use okr_decode::CoordinateDecoder;
/// use okr_estimators::output_basis::OutputBasis;
/// use okr_estimators::{LabelSets, Tanimoto};
/// let y = LabelSets::new(3, vec![vec![0], vec![1, 2], vec![2], vec![0, 1]])?;
/// let basis = OutputBasis::params(Tanimoto).fit(&y)?;
/// // Decoding the exact coordinates of the training outputs finds them.
/// let z = basis.transform(&y)?;
/// let decoded = CoordinateDecoder::new().decode_training(&basis, &z)?;
/// assert_eq!(decoded.best(), vec![0, 1, 2, 3]);
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct CoordinateDecoder {
    decoder: CandidateDecoder,
}

impl From<CandidateDecoder> for CoordinateDecoder {
    fn from(decoder: CandidateDecoder) -> Self {
        Self { decoder }
    }
}

impl CoordinateDecoder {
    /// The default [`CandidateDecoder`] (1 GiB budget, `top_k = 1`, f64).
    pub fn new() -> Self {
        Self::default()
    }

    /// The candidate decoder used (budget, `top_k`, precision).
    pub fn decoder(&self) -> &CandidateDecoder {
        &self.decoder
    }

    /// Decodes every row of `z` against `candidates`.
    ///
    /// # Errors
    /// [`okr_surrogate::Error::OtherBasis`] for coordinates tagged with
    /// another basis, [`okr_surrogate::Error::ShapeMismatch`] for another
    /// number of columns or candidates of another width (both wrapped in
    /// [`Error::Estimator`](crate::Error::Estimator)), then as
    /// [`CandidateDecoder::decode`]. NaN and infinite coordinates are
    /// refused when [`Coordinates`] are built.
    pub fn decode<Y, B>(&self, basis: &B, z: &Coordinates, candidates: &Y) -> Result<Decoded>
    where
        Y: Rows,
        B: CoordinateBasis<Y> + ?Sized,
    {
        basis.check_coordinates(z)?;
        self.decoder.decode(basis, z.rows(), candidates)
    }

    /// Decodes against the distinct training outputs of the basis.
    ///
    /// # Errors
    /// As [`decode`](Self::decode).
    pub fn decode_training<Y, B>(&self, basis: &B, z: &Coordinates) -> Result<Decoded>
    where
        Y: Rows,
        B: CoordinateBasis<Y> + ?Sized,
    {
        self.decode(basis, z, basis.distinct_outputs())
    }

    /// Ranks per-query candidate sets ([`PerQueryDecoder::rank_all`]); a
    /// query's `test_row` is a row of `z`.
    ///
    /// # Errors
    /// As [`decode`](Self::decode) for the coordinates, then as
    /// [`PerQueryDecoder::rank`].
    pub fn rank_all<Y, B, I>(
        &self,
        ranker: &PerQueryDecoder,
        basis: &B,
        z: &Coordinates,
        pool: Option<&Y>,
        queries: I,
    ) -> Result<Vec<RankedQuery>>
    where
        Y: Rows,
        B: CoordinateBasis<Y> + ?Sized,
        I: IntoIterator<Item = Query<Y>>,
    {
        basis.check_coordinates(z)?;
        ranker.rank_all(basis, z.rows(), pool, queries)
    }
}
