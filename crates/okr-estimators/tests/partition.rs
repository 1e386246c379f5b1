//! The row-partitioned fits (`okr_estimators::partition`): any partitioning
//! of the rows, statistics sent through postcard bytes and merged in any
//! order, gives the single-machine model (same distinct outputs in the same
//! order, same output index per row, coefficients to 1e-10) for Nystroem
//! KRR, SIOKR, SISOKR and Nystroem reduced rank; statistics of another
//! plan, overlapping or missing rows are refused with typed errors.

mod common;

use common::{lcg, random_rows};
use faer::Mat;
use okr_estimators::nystroem::Anchors;
use okr_estimators::partition::{PartitionError, PartitionPlan, PartitionStats, SampledRows};
use okr_estimators::{Error, Fit, Nystroem, NystroemReducedRank, ParamGuard, SketchedIokr, SurrogateModel};
use okr_kernels::{DenseRows, Gaussian, LabelSets, Rows};
use proptest::prelude::*;

/// Label sets with repeats (duplicate outputs exercise the group sums).
fn label_sets(n: usize, n_labels: usize, seed: u64) -> LabelSets {
    let mut r = lcg(seed);
    let sets: Vec<Vec<usize>> = (0..n)
        .map(|_| {
            let k = 1 + ((r() + 1.0) * 1.2) as usize;
            let mut s: Vec<usize> =
                (0..k).map(|_| (((r() + 1.0) / 2.0) * n_labels as f64) as usize % n_labels).collect();
            s.sort_unstable();
            s.dedup();
            s
        })
        .collect();
    LabelSets::new(n_labels, sets).unwrap()
}

/// `max |a - b| / max |b|`.
fn rel(a: &Mat<f64>, b: &Mat<f64>) -> f64 {
    assert_eq!((a.nrows(), a.ncols()), (b.nrows(), b.ncols()));
    (a - b).norm_max() / b.norm_max().max(f64::MIN_POSITIVE)
}

/// Partition boundaries `0 = b_0 < ... < b_k = n` from cut points.
fn bounds(n: usize, cuts: &[usize]) -> Vec<usize> {
    let mut b: Vec<usize> = cuts.iter().copied().filter(|&c| c > 0 && c < n).collect();
    b.push(0);
    b.push(n);
    b.sort_unstable();
    b.dedup();
    b
}

/// Statistics of every partition, each through postcard bytes, merged by
/// repeatedly joining two statistics picked by a seeded generator.
fn merged<P: PartitionPlan<DenseRows, LabelSets>>(
    plan: &P,
    x: &DenseRows,
    y: &LabelSets,
    bounds: &[usize],
    order_seed: u64,
) -> PartitionStats<LabelSets> {
    let mut stats: Vec<PartitionStats<LabelSets>> = bounds
        .windows(2)
        .map(|w| {
            let s = plan.statistics(&x.slice(w[0]..w[1]), &y.slice(w[0]..w[1]), w[0]).unwrap();
            let bytes = postcard::to_stdvec(&s).unwrap();
            let back: PartitionStats<LabelSets> = postcard::from_bytes(&bytes).unwrap();
            back.validate().unwrap();
            back
        })
        .collect();
    let mut s = order_seed;
    let mut next = |k: usize| {
        s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (s >> 33) as usize % k
    };
    while stats.len() > 1 {
        let left = stats.swap_remove(next(stats.len()));
        let right = stats.swap_remove(next(stats.len()));
        stats.push(left.merge(right).unwrap());
    }
    stats.pop().unwrap()
}

fn data(n: usize, seed: u64) -> (DenseRows, LabelSets, DenseRows) {
    (random_rows(n, 3, seed), label_sets(n, 4, seed + 1), random_rows(6, 3, seed + 2))
}

fn kernels() -> (Gaussian, Gaussian) {
    (Gaussian::new(0.7).unwrap(), Gaussian::new(0.5).unwrap())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    #[test]
    fn nystroem_partitions_merge_to_the_single_fit(
        n in 12usize..60,
        m in 2usize..10,
        cuts in proptest::collection::vec(1usize..59, 0..5),
        order_seed in 0u64..1000,
        seed in 0u64..1000,
    ) {
        let (x, y, xt) = data(n, seed);
        let (kx, ky) = kernels();
        let params = Nystroem::params(kx, ky).lambda(1e-2).anchors(Anchors::Uniform(m.min(n))).seed(seed).check().unwrap();
        let single = params.fit(&x, &y).unwrap();
        let plan = params.plan(n, &SampledRows::select_from(&x, &y, params.plan_rows(n).unwrap())).unwrap();
        let plan: okr_estimators::partition::NystroemPlan<DenseRows, Gaussian, Gaussian> =
            postcard::from_bytes(&postcard::to_stdvec(&plan).unwrap()).unwrap();
        plan.validate().unwrap();
        let stats = merged(&plan, &x, &y, &bounds(n, &cuts), order_seed);
        prop_assert_eq!(stats.n_samples(), n);
        let model = plan.finalize(stats).unwrap();
        prop_assert_eq!(model.distinct_outputs(), single.distinct_outputs());
        prop_assert_eq!(model.output_of_sample(), single.output_of_sample());
        let (a, b) = (model.coefficients(&xt).unwrap(), single.coefficients(&xt).unwrap());
        prop_assert!(rel(&a, &b) < 1e-10, "rel err {}", rel(&a, &b));
    }

    #[test]
    fn sketched_partitions_merge_to_the_single_fit(
        n in 12usize..60,
        m in 2usize..10,
        kind in 0usize..4,
        cuts in proptest::collection::vec(1usize..59, 0..5),
        order_seed in 0u64..1000,
        seed in 0u64..1000,
    ) {
        let (x, y, xt) = data(n, seed);
        let (kx, ky) = kernels();
        let m = m.min(n);
        // SIOKR (uniform, p-sparsified Gaussian input sketch) and SISOKR
        // (with a Gaussian or a uniform output sketch).
        let (input, output) = match kind {
            0 => (format!("uniform:{m}"), None),
            1 => (format!("sparse-gaussian:{m}:0.2"), None),
            2 => (format!("uniform:{m}"), Some(format!("gaussian:{}", (m / 2).max(1)))),
            _ => (format!("uniform:{m}"), Some(format!("uniform:{}", (m / 2).max(1)))),
        };
        let params = SketchedIokr::params(kx, ky)
            .lambda(1e-2)
            .input_sketch(Some(input.parse().unwrap()))
            .output_sketch(output.map(|o| o.parse().unwrap()))
            .seed(seed)
            .check()
            .unwrap();
        let single = params.fit(&x, &y).unwrap();
        let plan = params.plan(n, &SampledRows::select_from(&x, &y, params.plan_rows(n).unwrap())).unwrap();
        let plan: okr_estimators::partition::SketchedPlan<DenseRows, LabelSets, Gaussian, Gaussian> =
            postcard::from_bytes(&postcard::to_stdvec(&plan).unwrap()).unwrap();
        plan.validate().unwrap();
        let model = plan.finalize(merged(&plan, &x, &y, &bounds(n, &cuts), order_seed)).unwrap();
        prop_assert_eq!(model.distinct_outputs(), single.distinct_outputs());
        prop_assert_eq!(model.output_of_sample(), single.output_of_sample());
        prop_assert_eq!(model.input_support(), single.input_support());
        prop_assert_eq!(model.output_support(), single.output_support());
        let (a, b) = (model.coefficients(&xt).unwrap(), single.coefficients(&xt).unwrap());
        prop_assert!(rel(&a, &b) < 1e-10, "rel err {}", rel(&a, &b));
    }

    #[test]
    fn nystroem_reduced_rank_partitions_merge_to_the_single_fit(
        n in 16usize..60,
        m in 2usize..10,
        cuts in proptest::collection::vec(1usize..59, 0..5),
        order_seed in 0u64..1000,
        seed in 0u64..1000,
    ) {
        let (x, y, xt) = data(n, seed);
        let (kx, ky) = kernels();
        let params = NystroemReducedRank::params(kx, ky)
            .anchors(Anchors::Uniform(m.min(n)))
            .subset(Anchors::Uniform(n / 2))
            .rank(2)
            .lambda1(1e-2)
            .lambda2(1e-2)
            .seed(seed)
            .check()
            .unwrap();
        let single = params.fit(&x, &y).unwrap();
        let plan = params.plan(n, &SampledRows::select_from(&x, &y, params.plan_rows(n).unwrap())).unwrap();
        let plan: okr_estimators::partition::NystroemReducedRankPlan<DenseRows, LabelSets, Gaussian, Gaussian> =
            postcard::from_bytes(&postcard::to_stdvec(&plan).unwrap()).unwrap();
        plan.validate().unwrap();
        let model = plan.finalize(merged(&plan, &x, &y, &bounds(n, &cuts), order_seed)).unwrap();
        let (a, b) = (model.coefficients(&xt).unwrap(), single.coefficients(&xt).unwrap());
        prop_assert!(rel(&a, &b) < 1e-10, "rel err {}", rel(&a, &b));
        prop_assert_eq!(model.encoder(), single.encoder());
    }
}

fn nystroem_plan(
    seed: u64,
    x: &DenseRows,
    y: &LabelSets,
) -> okr_estimators::partition::NystroemPlan<DenseRows, Gaussian, Gaussian> {
    let (kx, ky) = kernels();
    let params = Nystroem::params(kx, ky).anchors(Anchors::Uniform(5)).seed(seed).check().unwrap();
    let n = x.n_rows();
    params.plan(n, &SampledRows::select_from(x, y, params.plan_rows(n).unwrap())).unwrap()
}

#[test]
fn statistics_of_another_plan_overlapping_or_missing_rows_are_refused() {
    let (x, y, _) = data(20, 1);
    let (p1, p2) = (nystroem_plan(1, &x, &y), nystroem_plan(2, &x, &y));
    let part = |p: &okr_estimators::partition::NystroemPlan<_, _, _>, a: usize, b: usize| {
        p.statistics(&x.slice(a..b), &y.slice(a..b), a).unwrap()
    };
    // Other anchors.
    let err = part(&p1, 0, 10).merge(part(&p2, 10, 20)).unwrap_err();
    assert!(matches!(err, Error::Partition(PartitionError::OtherPlan { .. })), "{err}");
    assert!(err.to_string().contains("other anchors"), "{err}");
    let err = p2.finalize(part(&p1, 0, 20)).unwrap_err();
    assert!(matches!(err, Error::Partition(PartitionError::OtherPlan { .. })), "{err}");
    // The same rows twice.
    let err = part(&p1, 0, 12).merge(part(&p1, 8, 20)).unwrap_err();
    assert_eq!(err, Error::Partition(PartitionError::OverlappingRows { row: 8 }));
    // A lost partition.
    let err = p1.finalize(part(&p1, 0, 5).merge(part(&p1, 12, 20)).unwrap()).unwrap_err();
    assert_eq!(err, Error::Partition(PartitionError::MissingRows { covered: 13, n: 20, first_missing: 5 }));
    // A partition past the plan's rows.
    let err = p1.statistics(&x.slice(0..10), &y.slice(0..10), 15).unwrap_err();
    assert_eq!(err, Error::Partition(PartitionError::RowsPastEnd { first_row: 15, end: 25, n: 20 }));
    // Adjacent partitions merged out of order finalize.
    let whole = part(&p1, 10, 20).merge(part(&p1, 0, 10)).unwrap();
    assert_eq!(whole.row_ranges(), &[(0, 20)]);
    p1.finalize(whole).unwrap();
}

#[test]
fn leverage_sketches_and_missing_input_sketches_do_not_partition() {
    let (kx, ky) = kernels();
    let p =
        SketchedIokr::params(kx.clone(), ky.clone()).input_sketch(Some("leverage:5".parse().unwrap())).check().unwrap();
    assert!(p.plan_rows(20).unwrap_err().to_string().contains("leverage"));
    let p = SketchedIokr::params(kx, ky).output_sketch(Some("gaussian:5".parse().unwrap())).check().unwrap();
    assert!(p.plan_rows(20).unwrap_err().to_string().contains("input sketch"));
}
