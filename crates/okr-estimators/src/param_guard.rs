/// Validation of hyper-parameters before fitting (the linfa pattern).
///
/// Setters of a params builder only store values; `check_ref` / `check`
/// validate them and give the checked type, the only one that can `fit`.
pub trait ParamGuard {
    /// The validated parameters.
    type Checked;
    /// The error returned for invalid parameters.
    type Error;

    /// Validates by reference.
    ///
    /// # Errors
    /// The first invalid parameter, with its name, value and valid range.
    fn check_ref(&self) -> Result<&Self::Checked, Self::Error>;

    /// Validates and converts.
    ///
    /// # Errors
    /// As [`ParamGuard::check_ref`].
    fn check(self) -> Result<Self::Checked, Self::Error>;
}
