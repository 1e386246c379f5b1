//! Reads every Mulan ARFF file of the shared data directory and checks the
//! shapes listed in its README. Skipped (with a printed note) when the data is
//! not there, so CI passes without it.

use std::time::Instant;

use okr_eval::{Dataset, data_dir, find_mulan_in, read_arff};
use okr_kernels::Rows;

/// `(name, n_train, n_test, n_features, n_labels, sparse, label cardinality over
/// train + test)`; shapes from the data README, cardinalities from Mulan's tables.
const EXPECTED: [(&str, usize, usize, usize, usize, bool, f64); 7] = [
    ("bibtex", 4880, 2515, 1836, 159, true, 2.402),
    ("corel5k", 4500, 500, 499, 374, false, 3.522),
    ("delicious", 12920, 3185, 500, 983, true, 19.020),
    ("emotions", 391, 202, 72, 6, false, 1.869),
    ("enron", 1123, 579, 1001, 53, true, 3.378),
    ("yeast", 1500, 917, 103, 14, false, 4.237),
    ("scene", 1211, 1196, 294, 6, false, 1.074),
];

fn timed_read(path: &std::path::Path, n_labels: usize) -> Dataset {
    let start = Instant::now();
    let data = read_arff(path, n_labels).unwrap_or_else(|e| panic!("{e}"));
    println!("read {} in {:.3} s", path.display(), start.elapsed().as_secs_f64());
    data
}

#[test]
fn mulan_files_read_with_readme_shapes() {
    let dir = data_dir();
    if !dir.join("bibtex").is_dir() {
        println!("note: benchmark data not found in {} (set OKR_DATA_DIR); skipping", dir.display());
        return;
    }
    for (name, n_train, n_test, d, l, sparse, cardinality) in EXPECTED {
        let (train_path, test_path, n_labels) = find_mulan_in(&dir, name).unwrap();
        assert_eq!(n_labels, l, "{name}");
        let train = timed_read(&train_path, n_labels);
        let test = timed_read(&test_path, n_labels);
        for (part, data, n) in [("train", &train, n_train), ("test", &test, n_test)] {
            assert_eq!(data.n_samples(), n, "{name} {part} samples");
            assert_eq!(data.n_features(), d, "{name} {part} features");
            assert_eq!(data.n_labels(), l, "{name} {part} labels");
            assert_eq!(data.x.is_sparse(), sparse, "{name} {part} representation");
            assert_eq!(data.y.n_rows(), n);
            assert_eq!(data.feature_names.len(), d);
            assert_eq!(data.label_names.len(), l);
        }
        assert_eq!(train.feature_names, test.feature_names, "{name}");
        assert_eq!(train.label_names, test.label_names, "{name}");
        let total_labels = train.y.mean_cardinality() * n_train as f64 + test.y.mean_cardinality() * n_test as f64;
        let card = total_labels / (n_train + n_test) as f64;
        assert!((card - cardinality).abs() < 0.01, "{name}: {card:.4} labels/point, expected {cardinality}");
        println!("{name}: {n_train}/{n_test}, {d} features, {l} labels, {card:.3} labels/point, {} nnz", train.x.nnz());
    }
}

#[test]
fn mulan_quirks() {
    let dir = data_dir();
    if !dir.join("delicious").is_dir() {
        println!("note: benchmark data not found in {} (set OKR_DATA_DIR); skipping", dir.display());
        return;
    }
    // delicious: an unquoted name with an escaped quote, kept as written (as in delicious.xml)
    let (train, _, l) = find_mulan_in(&dir, "delicious").unwrap();
    let data = read_arff(train, l).unwrap();
    assert!(data.label_names.iter().any(|n| n == "TAG_m\\'usica"));
    assert!(data.label_names.iter().any(|n| n == "TAG_dise\\~no"));
    // bibtex: binary features, labels are the last 159 attributes
    let (train, _, l) = find_mulan_in(&dir, "bibtex").unwrap();
    let data = read_arff(train, l).unwrap();
    let x = data.x.as_sparse().unwrap();
    assert!(x.values().iter().all(|&v| v == 1.0));
    assert!((data.y.mean_cardinality() - 2.38).abs() < 0.01);
    assert!(data.label_names.get(0).unwrap().starts_with("TAG_"));
}

#[test]
fn usps_files_read_with_readme_shapes() {
    let dir = data_dir();
    let Ok((train, test)) = okr_eval::find_usps_in(&dir) else {
        println!("note: USPS not found in {} (set OKR_DATA_DIR); skipping", dir.display());
        return;
    };
    let (train, test) = (okr_eval::read_usps(train).unwrap(), okr_eval::read_usps(test).unwrap());
    assert_eq!((train.len(), test.len()), (7291, 2007));
    // Class counts of zip.train as listed in the ESL zip.info file.
    let mut counts = [0usize; 10];
    train.labels().iter().for_each(|&l| counts[l as usize] += 1);
    assert_eq!(counts, [1194, 1005, 731, 658, 652, 556, 664, 645, 542, 644]);
}
