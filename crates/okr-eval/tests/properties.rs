//! Property tests: reader round trips, metric identities and bounds, splits,
//! determinism, and readers never panicking on arbitrary text.

use std::path::Path;

use okr_eval::{
    CsvHeader, Dataset, Features, KFold, ShuffleSplit, Standardizer, StandinSpec, SvmlightOptions, f1_macro, f1_micro,
    f1_samples, hamming_loss, instance_auc, precision_at_k, read_arff, read_csv, read_svmlight, read_xc,
    top_k_accuracy, train_test_split, write_arff, write_csv, write_svmlight, write_xc,
};
use okr_kernels::{CsrRows, DenseRows, LabelSets, Rows};
use proptest::prelude::*;

/// A finite value: mostly small integers and simple decimals, sometimes any finite f64.
fn value() -> impl Strategy<Value = f64> {
    prop_oneof![
        3 => (-3i32..4).prop_map(f64::from),
        3 => (-1000i32..1000).prop_map(|v| f64::from(v) / 8.0),
        2 => any::<f64>().prop_filter("finite", |v| v.is_finite()),
        1 => -1e-300f64..1e-300,
    ]
}

fn label_sets(n: usize, l: usize) -> impl Strategy<Value = LabelSets> {
    let set = proptest::collection::vec(any::<bool>(), l)
        .prop_map(|bits| bits.iter().enumerate().filter(|b| *b.1).map(|b| b.0).collect::<Vec<_>>());
    proptest::collection::vec(set, n).prop_map(move |sets| LabelSets::new(l, sets).unwrap())
}

/// A name with the characters that need quoting in ARFF or CSV.
fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[a-zA-Z_][a-zA-Z0-9_.]{0,6}",
        2 => "[a-z '\"\\\\%{},.#?é-]{0,6}",
        1 => "[0-9.]{1,4}",
    ]
}

/// A random data set with `n >= 1` samples, dense or sparse features (sparse
/// with explicit zeros sometimes), and random names.
fn dataset() -> impl Strategy<Value = Dataset> {
    (1usize..12, 0usize..6, 0usize..5, any::<bool>())
        .prop_filter("at least one column", |(_, d, l, _)| d + l > 0)
        .prop_flat_map(|(n, d, l, sparse)| {
            let cells = proptest::collection::vec(prop_oneof![1 => Just(None), 1 => value().prop_map(Some)], n * d);
            (
                cells,
                label_sets(n, l),
                proptest::collection::vec(name(), d),
                proptest::collection::vec(name(), l),
                Just((n, d, sparse)),
            )
        })
        .prop_map(|(cells, y, fnames, lnames, (n, d, sparse))| {
            let x = if sparse {
                let rows = (0..n).map(|i| (0..d).filter_map(|j| cells[i * d + j].map(|v| (j, v))).collect()).collect();
                Features::Sparse(CsrRows::from_rows(d, rows).unwrap())
            } else {
                let rows: Vec<Vec<f64>> =
                    (0..n).map(|i| (0..d).map(|j| cells[i * d + j].unwrap_or(0.0)).collect()).collect();
                Features::Dense(DenseRows::new(faer::Mat::from_fn(n, d, |i, j| rows[i][j])).unwrap())
            };
            Dataset::with_names(x, y, fnames, lnames).unwrap()
        })
}

fn same_content(a: &Dataset, b: &Dataset) -> bool {
    a.x.to_dense() == b.x.to_dense() && a.y == b.y && a.n_features() == b.n_features()
}

fn tmp(dir: &tempfile::TempDir, name: &str) -> std::path::PathBuf {
    dir.path().join(name)
}

proptest! {
    // fixed seed and no regression files: the same cases on every run and machine
    #![proptest_config(ProptestConfig {
        cases: 128,
        rng_seed: proptest::test_runner::RngSeed::Fixed(20240601),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn arff_round_trip(data in dataset(), relation in name()) {
        let dir = tempfile::tempdir().unwrap();
        let path = tmp(&dir, "a.arff");
        write_arff(&path, &data, &relation).unwrap();
        let back = read_arff(&path, data.n_labels()).unwrap();
        prop_assert_eq!(back, data);
    }

    #[test]
    fn csv_round_trip(data in dataset()) {
        let dir = tempfile::tempdir().unwrap();
        let path = tmp(&dir, "a.csv");
        // The CSV reader trims fields, so the writer refuses names it would not read back.
        if data.feature_names.iter().chain(data.label_names.iter()).any(|n| n.trim() != n) {
            prop_assert!(write_csv(&path, &data).is_err());
            return Ok(());
        }
        write_csv(&path, &data).unwrap();
        let back = read_csv(&path, data.n_labels(), CsvHeader::Detect).unwrap();
        prop_assert!(!back.x.is_sparse());
        prop_assert!(same_content(&back, &data));
        prop_assert_eq!(&back.feature_names, &data.feature_names);
        prop_assert_eq!(&back.label_names, &data.label_names);
    }

    #[test]
    fn svmlight_and_xc_round_trip(data in dataset(), zero_based in any::<bool>()) {
        // an empty sample is written as an explicit zero of the first feature, which needs a feature
        prop_assume!(data.n_features() > 0 || data.y.iter().all(|s| !s.is_empty()));
        let dir = tempfile::tempdir().unwrap();
        let path = tmp(&dir, "a.svm");
        write_svmlight(&path, &data, zero_based).unwrap();
        let opts = SvmlightOptions::new(zero_based).n_features(data.n_features()).n_labels(data.n_labels());
        let back = read_svmlight(&path, &opts).unwrap();
        prop_assert!(back.x.is_sparse());
        prop_assert!(same_content(&back, &data));
        let path = tmp(&dir, "a.xc");
        write_xc(&path, &data).unwrap();
        let back = read_xc(&path).unwrap();
        prop_assert!(same_content(&back, &data));
        // sparse data without empty samples comes back exactly (explicit zeros included)
        if data.x.is_sparse() && (0..data.n_samples()).all(|i| data.x.as_sparse().unwrap().row(i).0.len() + data.y.set(i).len() > 0) {
            prop_assert_eq!(&back.x, &data.x);
        }
    }

    #[test]
    fn readers_never_panic(text in "[0-9a-z@{}, :.%'\"\\\\?\n\r#-]{0,120}", n_labels in 0usize..4) {
        let dir = tempfile::tempdir().unwrap();
        let path = tmp(&dir, "junk.txt");
        std::fs::write(&path, &text).unwrap();
        for header in ["@relation r\n@attribute a numeric\n@attribute b {0,1}\n@data\n", ""] {
            std::fs::write(&path, format!("{header}{text}")).unwrap();
            if let Err(e) = read_arff(&path, n_labels) {
                prop_assert!(e.to_string().contains("junk.txt"), "{}", e);
            }
        }
        std::fs::write(&path, &text).unwrap();
        let _ = read_svmlight(&path, &SvmlightOptions::new(false));
        let _ = read_svmlight(&path, &SvmlightOptions::new(true).n_features(3).n_labels(2));
        let _ = read_xc(&path);
        let _ = read_csv(&path, n_labels, CsvHeader::Detect);
    }

    #[test]
    fn f1_samples_matches_brute_force((y, p) in (1usize..10, 0usize..7).prop_flat_map(|(n, l)| (label_sets(n, l), label_sets(n, l)))) {
        let (yi, pi) = (y.to_indicator(), p.to_indicator());
        let n = y.n_rows();
        let mut sum = 0.0;
        for i in 0..n {
            let (mut inter, mut a, mut b) = (0.0, 0.0, 0.0);
            for j in 0..y.n_labels() {
                inter += yi[(i, j)] * pi[(i, j)];
                a += yi[(i, j)];
                b += pi[(i, j)];
            }
            sum += if a + b == 0.0 { 0.0 } else { 2.0 * inter / (a + b) };
        }
        let f1 = f1_samples(&y, &p).unwrap();
        prop_assert!((f1 - sum / n as f64).abs() < 1e-12);
    }

    #[test]
    fn metric_bounds((y, p, scores, k) in (1usize..10, 1usize..7).prop_flat_map(|(n, l)| (
        label_sets(n, l), label_sets(n, l),
        proptest::collection::vec(-3i32..4, n * l).prop_map(move |v| faer::Mat::from_fn(n, l, |i, j| f64::from(v[i * l + j]))),
        1..=l,
    ))) {
        for v in [f1_samples(&y, &p), f1_micro(&y, &p), f1_macro(&y, &p), hamming_loss(&y, &p)] {
            let v = v.unwrap();
            prop_assert!((0.0..=1.0).contains(&v), "{}", v);
        }
        prop_assert_eq!(hamming_loss(&y, &y).unwrap(), 0.0);
        let any_label = y.iter().any(|s| !s.is_empty());
        prop_assert_eq!(f1_micro(&y, &y).unwrap(), if any_label { 1.0 } else { 0.0 });
        let nonempty = y.iter().filter(|s| !s.is_empty()).count() as f64 / y.n_rows() as f64;
        prop_assert!((f1_samples(&y, &y).unwrap() - nonempty).abs() < 1e-12);
        let pk = precision_at_k(scores.as_ref(), &y, k).unwrap();
        prop_assert!((0.0..=1.0).contains(&pk));
        let max_hits: usize = y.iter().map(|s| s.len().min(k)).sum();
        prop_assert!(pk <= max_hits as f64 / (k * y.n_rows()) as f64 + 1e-12);
        // the true indicator as scores ranks every positive first
        let ideal = precision_at_k(y.to_indicator().as_ref(), &y, k).unwrap();
        prop_assert!((ideal - max_hits as f64 / (k * y.n_rows()) as f64).abs() < 1e-12);
        if let Ok(auc) = instance_auc(scores.as_ref(), &y) {
            prop_assert!((0.0..=1.0).contains(&auc));
            prop_assert_eq!(instance_auc(y.to_indicator().as_ref(), &y).unwrap(), 1.0);
        }
    }

    #[test]
    fn top_k_accuracy_is_monotone(ranked in proptest::collection::vec(proptest::collection::vec(0usize..8, 0..6), 1..10), seed in any::<u64>()) {
        let truth: Vec<usize> = (0..ranked.len()).map(|i| ((seed >> (i % 60)) % 8) as usize).collect();
        let mut last = 0.0;
        for k in 1..8 {
            let a = top_k_accuracy(&ranked, &truth, k).unwrap();
            prop_assert!(a >= last && a <= 1.0);
            last = a;
        }
    }

    #[test]
    fn kfold_partitions_exactly(n in 2usize..200, k in 2usize..12, shuffle in any::<bool>(), seed in any::<u64>()) {
        prop_assume!(k <= n);
        let kf = if shuffle { KFold::new(k).shuffle(seed) } else { KFold::new(k) };
        let folds = kf.split(n).unwrap();
        prop_assert_eq!(folds.len(), k);
        let mut count = vec![0usize; n];
        let sizes: Vec<usize> = folds.iter().map(|f| f.1.len()).collect();
        prop_assert!(sizes.iter().max().unwrap() - sizes.iter().min().unwrap() <= 1);
        for (train, val) in &folds {
            prop_assert!(train.windows(2).all(|w| w[0] < w[1]) && val.windows(2).all(|w| w[0] < w[1]));
            prop_assert_eq!(train.len() + val.len(), n);
            for &i in val {
                count[i] += 1;
                prop_assert!(train.binary_search(&i).is_err());
            }
        }
        prop_assert!(count.iter().all(|&c| c == 1));
        prop_assert_eq!(kf.split(n).unwrap(), folds);
    }

    #[test]
    fn splits_are_deterministic_partitions(n in 2usize..300, frac in 0.05f64..0.95, seed in any::<u64>()) {
        prop_assume!(((frac * n as f64).ceil() as usize) < n);
        let (train, test) = train_test_split(n, frac, seed).unwrap();
        prop_assert_eq!(test.len(), (frac * n as f64).ceil() as usize);
        let mut all: Vec<usize> = train.iter().chain(&test).copied().collect();
        all.sort_unstable();
        prop_assert_eq!(all, (0..n).collect::<Vec<_>>());
        prop_assert_eq!(train_test_split(n, frac, seed).unwrap(), (train, test));
        let ss = ShuffleSplit::new(3, frac, seed);
        let splits = ss.split(n).unwrap();
        prop_assert_eq!(ss.split(n).unwrap(), splits.clone());
        for (tr, te) in &splits {
            prop_assert_eq!(tr.len() + te.len(), n);
        }
    }

    #[test]
    fn standin_is_deterministic(seed in any::<u64>(), sparse in any::<bool>()) {
        let mut spec = StandinSpec::new("p", 30, 10, 12, 5, 1.7).seed(seed);
        if sparse {
            spec = spec.density(0.3);
        }
        let (a, b) = spec.generate().unwrap();
        prop_assert_eq!(spec.generate().unwrap(), (a.clone(), b));
        prop_assert!(a.y.iter().all(|s| !s.is_empty()));
    }

    #[test]
    fn standardized_columns_have_zero_mean_unit_std(data in dataset()) {
        prop_assume!(data.n_features() > 0);
        let scale_ok = data.x.to_dense().col_iter().all(|c| c.iter().all(|v| v.abs() < 1e100));
        prop_assume!(scale_ok);
        let s = Standardizer::fit(&data.x).unwrap();
        let dense = DenseRows::new(data.x.to_dense()).unwrap();
        let z = s.transform(&dense).unwrap();
        let n = z.n_rows() as f64;
        for j in 0..z.n_features() {
            let col: Vec<f64> = (0..z.n_rows()).map(|i| z.as_mat()[(i, j)]).collect();
            let mean = col.iter().sum::<f64>() / n;
            prop_assert!(mean.abs() < 1e-6, "column {} mean {}", j, mean);
            if s.scale()[j] != 1.0 {
                let var = col.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
                prop_assert!((var - 1.0).abs() < 1e-6, "column {} var {}", j, var);
            }
        }
        if let Features::Sparse(x) = &data.x {
            prop_assert_eq!(s.scale_sparse(x).unwrap().nnz(), x.nnz());
        }
    }
}

#[test]
fn metrics_and_records_types_are_send_sync() {
    fn check<T: Send + Sync>() {}
    check::<Dataset>();
    check::<okr_eval::Error>();
    check::<Standardizer>();
    check::<okr_eval::MetricRecord>();
    check::<StandinSpec>();
    let _ = Path::new("");
}
