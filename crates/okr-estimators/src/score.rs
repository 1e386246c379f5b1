use faer::Mat;

use crate::Result;

/// A fitted estimator with explicit label scores (LEML, BR, CPLST): for a
/// batch of inputs it returns an `(n_samples, n_labels)` score matrix, which a
/// decoder thresholds (at [`decision_threshold`](ScoreModel::decision_threshold))
/// or ranks (top-k).
///
/// # Example
/// ```
/// use faer::Mat;
/// use okr_estimators::ScoreModel;
///
/// /// Scores every label by the sum of the features.
/// struct SumScores(usize);
/// impl ScoreModel<Vec<Vec<f64>>> for SumScores {
///     fn n_labels(&self) -> usize { self.0 }
///     fn decision_threshold(&self) -> f64 { 0.0 }
///     fn scores(&self, x: &Vec<Vec<f64>>) -> okr_estimators::Result<Mat<f64>> {
///         Ok(Mat::from_fn(x.len(), self.0, |i, _| x[i].iter().sum()))
///     }
/// }
/// let s = SumScores(3).scores(&vec![vec![1.0, 2.0]])?;
/// assert_eq!(s[(0, 2)], 3.0);
/// Ok::<(), okr_estimators::Error>(())
/// ```
pub trait ScoreModel<X: ?Sized>: Send + Sync {
    /// Number of labels `L` (columns of the scores).
    fn n_labels(&self) -> usize;

    /// The score above which a label is predicted on: the midpoint of the
    /// training encoding (`0.5` for {0, 1} targets, `0` for ±1).
    fn decision_threshold(&self) -> f64;

    /// Label scores `(x.n_rows(), n_labels)`.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`](crate::Error::ShapeMismatch) if `x` has another
    /// feature width than the training data.
    fn scores(&self, x: &X) -> Result<Mat<f64>>;
}
