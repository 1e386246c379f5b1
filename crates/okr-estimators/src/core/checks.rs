//! Parameter checks shared by the params builders, and the caps on sizes
//! that come from users (checked against the data at fit time, so that a
//! huge rank or sketch is a clear error instead of an allocation abort).

use okr_kernels::Rows;

use crate::{Error, Result};

fn invalid(name: &'static str, value: impl ToString, expected: &'static str) -> Error {
    Error::InvalidParameter { name, value: value.to_string(), expected }
}

/// `value` is finite and `> 0` (ridges, widths, scales).
pub(crate) fn positive(name: &'static str, value: f64) -> Result<()> {
    if value.is_finite() && value > 0.0 { Ok(()) } else { Err(invalid(name, value, "a finite number > 0")) }
}

/// `value` is finite and `>= 0`.
pub(crate) fn non_negative(name: &'static str, value: f64) -> Result<()> {
    if value.is_finite() && value >= 0.0 { Ok(()) } else { Err(invalid(name, value, "a finite number >= 0")) }
}

/// `value >= 1` (ranks, counts, iteration budgets).
pub(crate) fn at_least_one(name: &'static str, value: usize) -> Result<()> {
    if value >= 1 { Ok(()) } else { Err(invalid(name, value, "an integer >= 1")) }
}

/// `value` in `[0, 1)` (relative tolerances that may be 0).
pub(crate) fn fraction(name: &'static str, value: f64) -> Result<()> {
    if (0.0..1.0).contains(&value) { Ok(()) } else { Err(invalid(name, value, "a number in [0, 1)")) }
}

/// `value` in `(0, 1)` (relative tolerances that must stop somewhere).
pub(crate) fn open_fraction(name: &'static str, value: f64) -> Result<()> {
    if value > 0.0 && value < 1.0 { Ok(()) } else { Err(invalid(name, value, "a number in (0, 1)")) }
}

/// A size chosen by the user is at most `bound` (what the data allow).
pub(crate) fn at_most(name: &'static str, value: usize, bound: usize, expected: &'static str) -> Result<()> {
    if value <= bound {
        Ok(())
    } else {
        Err(Error::InvalidParameter { name, value: format!("{value} (> {bound})"), expected })
    }
}

/// Checks a training pair: at least one sample and one output per input.
/// Returns `n_samples`.
pub(crate) fn check_training_set<X: Rows, Y: Rows>(x: &X, y: &Y) -> Result<usize> {
    let n = x.n_rows();
    if n == 0 {
        return Err(Error::Empty { what: "training set" });
    }
    if y.n_rows() != n {
        return Err(Error::ShapeMismatch { what: "number of training outputs", expected: n, got: y.n_rows() });
    }
    Ok(n)
}

/// Checks the sample weights of `n` training samples (okr's one rule, which
/// every front door calls): one weight per sample, each a finite number
/// `> 0`, with a finite sum. Returns the sum $\sum_i w_i$, which replaces
/// $n$ in the ridge $n\lambda$ of a weighted fit.
///
/// Zero weights are refused rather than read as "drop the sample": drop
/// the row instead (a zero weight would make the weighted systems singular
/// in the sample's direction). Only the ratios of the weights matter: the
/// weighted fits are unchanged when every weight is multiplied by the same
/// `t > 0` (see [`FitWeighted`](crate::FitWeighted)).
///
/// # Errors
/// [`Error::ShapeMismatch`] when `weights.len() != n`,
/// [`Error::InvalidSampleWeight`] naming the first weight that is zero,
/// negative, NaN or infinite, [`Error::InvalidParameter`] when the sum
/// overflows.
///
/// # Example
/// ```
/// use okr_estimators::check_sample_weight;
/// assert_eq!(check_sample_weight(&[1.0, 2.0, 0.5], 3)?, 3.5);
/// let e = check_sample_weight(&[1.0, 0.0, 1.0], 3).unwrap_err().to_string();
/// assert!(e.contains("sample weight 0 of sample 1"), "{e}");
/// assert!(check_sample_weight(&[1.0, -1.0], 2).is_err());
/// assert!(check_sample_weight(&[f64::NAN], 1).is_err());
/// assert!(check_sample_weight(&[1.0, 1.0], 3).unwrap_err().to_string().contains("expected 3, got 2"));
/// Ok::<(), okr_estimators::Error>(())
/// ```
pub fn check_sample_weight(weights: &[f64], n: usize) -> Result<f64> {
    if weights.len() != n {
        return Err(Error::ShapeMismatch { what: "number of sample weights", expected: n, got: weights.len() });
    }
    if let Some((index, &value)) = weights.iter().enumerate().find(|(_, w)| !(w.is_finite() && **w > 0.0)) {
        return Err(Error::InvalidSampleWeight { index, value });
    }
    let total: f64 = weights.iter().sum();
    if !total.is_finite() {
        return Err(invalid("sample_weight", format!("weights summing to {total}"), "weights with a finite sum"));
    }
    Ok(total)
}

/// Rejects `other` when its width differs from the training container's.
pub(crate) fn check_width<R: Rows>(what: &'static str, train: &R, other: &R) -> Result<()> {
    match (train.feature_dim(), other.feature_dim()) {
        (Some(a), Some(b)) if a != b => Err(Error::ShapeMismatch { what, expected: a, got: b }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_name_the_parameter_and_the_range() {
        assert!(positive("lambda", 1e-3).is_ok());
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let e = positive("lambda", bad).unwrap_err().to_string();
            assert!(e.contains("lambda") && e.contains("> 0"), "{e}");
        }
        assert!(non_negative("l", 0.0).is_ok() && non_negative("l", -0.1).is_err());
        assert!(at_least_one("rank", 1).is_ok());
        assert!(at_least_one("rank", 0).unwrap_err().to_string().contains(">= 1"));
        assert!(fraction("tol", 0.0).is_ok() && fraction("tol", 1.0).is_err() && fraction("tol", f64::NAN).is_err());
        assert!(open_fraction("tol", 0.5).is_ok() && open_fraction("tol", 0.0).is_err());
        let e = at_most("rank", 300, 200, "at most the number of training samples").unwrap_err().to_string();
        assert!(e.contains("rank") && e.contains("300 (> 200)") && e.contains("training samples"), "{e}");
    }
}
