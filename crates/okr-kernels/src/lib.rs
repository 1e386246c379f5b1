//! Kernels, input containers and Gram blocks for okr.
//!
//! - Containers ([`Rows`]): [`DenseRows`] (an `(n_samples, n_features)` matrix),
//!   [`CsrRows`] (compressed sparse rows), [`Features`] (either of the two),
//!   [`LabelSets`] (binary label sets, seen as 0/1 vectors over `n_labels`
//!   labels), [`Graphs`] (labelled graphs, with the Weisfeiler-Lehman
//!   subtree kernel [`WlSubtree`]) and [`Rankings`] (total orders of `k` items,
//!   with the Kendall and Mallows kernels [`RankingKernel`]) and [`Spectra`]
//!   (MS/MS spectra, with the probability product kernel [`Ppk`] on their
//!   fragment peaks). Deserialized containers are checked like
//!   constructed ones. [`Standardizer`] standardizes features.
//! - The [`Kernel`] trait: pointwise evaluation plus block methods that fill
//!   a Gram block for two row sets ([`Kernel::gram_block_into`]) or the
//!   symmetric Gram matrix of one ([`Kernel::gram_into`]).
//! - Kernels, each implementing [`Kernel`] on all three containers:
//!
//! | kernel | $k(x, y)$ |
//! |---|---|
//! | [`Linear`] | $\langle x, y \rangle$ |
//! | [`Gaussian`] | $\exp(-\gamma \sum_f w_f (x_f - y_f)^2)$, $\gamma = 1/(2\sigma^2)$, $w = 1$ by default |
//! | [`Laplacian`] | $\exp(-\gamma \|x - y\|_1)$ |
//! | [`Polynomial`] | $(\gamma \langle x, y \rangle + c_0)^d$ |
//! | [`Tanimoto`] | $T(x, y) = \langle x, y \rangle / (\|x\|^2 + \|y\|^2 - \langle x, y \rangle)$, $T(0, 0) = 1$ |
//! | [`GaussianTanimoto`] | $\exp(-2\gamma (1 - T(x, y)))$ |
//!
//!   and [`KernelSpec`], a serializable enum over all of them, built by
//!   name with [`KernelSpec::from_name`] and [`KernelOptions`].
//! - Precomputed Grams: [`GramRows`] (samples as their kernel values against
//!   the training samples) with the [`Precomputed`] kernel, read from `.npy`
//!   or text ([`read_gram_npy`], [`read_gram_text`]); kernel algebra in
//!   [`combinators`] (sum, weighted sum, product, cosine normalization,
//!   centring) and multiple kernel learning weights in [`mkl`] (ALIGNF, uniform).
//!
//! # Performance
//!
//! Blocks are never computed pair by pair. Dense rows go through one faer
//! GEMM $X_I Y_J^\top$ per output tile, CSR rows and label sets through a
//! sparse product (with the most frequent features split off to a small
//! GEMM), and the kernel's elementwise transform runs on the tile while it
//! is in cache, using precomputed squared row norms. Tiles are filled in
//! parallel on the current rayon pool when `par` is [`faer::Par::Rayon`];
//! memory beyond the output block is a few tiles per worker plus
//! `O(n_samples + nnz)` for the norms and the sparse split.
//! [`Kernel::gram_into`] computes only the tiles on and below the diagonal
//! and mirrors them. The Laplacian kernel (not GEMM-shaped) uses a packed
//! register-blocked L1 micro-kernel.
//!
//! # Example
//! ```
//! use okr_kernels::{CsrRows, Gaussian, Kernel, Rows};
//! let x = CsrRows::from_rows(3, vec![vec![(0, 1.0)], vec![(0, 1.0), (2, 1.0)], vec![]])?;
//! let k = Gaussian::new(0.5)?;
//! let gram = k.gram(&x); // 3 x 3, exactly symmetric
//! let block = k.gram_block(&x.select(&[2]), &x); // 1 x 3
//! assert!((gram[(0, 1)] - (-0.5f64).exp()).abs() < 1e-15);
//! assert_eq!(block[(0, 2)], 1.0);
//! Ok::<(), okr_kernels::Error>(())
//! ```
#![warn(missing_docs)]

mod bits;
mod block;
pub use okr_io::bounded;
pub mod combinators;
mod containers;
mod error;
mod features;
mod graphs;
mod heuristics;
mod kernels;
mod math;
pub mod mkl;
mod precomputed;
mod products;
mod rankings;
mod spectra;
mod standardize;
mod traits;

pub use containers::{CsrRows, DenseRows, DenseSource, LabelSets};
pub use error::{Error, Result};
pub use features::Features;
pub use graphs::{Graph, Graphs, WlSubtree};
pub use heuristics::{
    MEDIAN_SAMPLE_ROWS, WidthSide, check_median_width, checked_median_gamma, label_set_gamma, median_gamma,
    median_heuristic_gamma, median_sq_distance,
};
pub use kernels::by_name::KernelOptions;
pub use kernels::gaussian::Gaussian;
pub use kernels::laplacian::Laplacian;
pub use kernels::linear::Linear;
pub use kernels::polynomial::Polynomial;
pub use kernels::spec::KernelSpec;
pub use kernels::tanimoto::{GaussianTanimoto, Tanimoto};
pub use precomputed::{
    GRAM_SYMMETRY_TOL, GramRows, Precomputed, npy_shape, read_gram, read_gram_npy, read_gram_text, read_test_gram,
    read_train_gram,
};
pub use rankings::{MAX_RANKING_ITEMS, RankingKernel, Rankings};
pub use spectra::{CUTOFF_SIGMAS, IonMode, MAX_PEAKS, PeakWeights, Ppk, PpkParams, Spectra, Spectrum};
pub use standardize::{Standardizer, is_binary};
pub use traits::{Kernel, Rows};

/// The crate README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
