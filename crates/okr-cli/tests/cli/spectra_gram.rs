//! `okr gram` end to end: the probability product kernel of MGF / MSP
//! spectra written as .npy and text equals okr_kernels::Ppk on the same
//! parsed spectra (bit for bit), for the square Gram and a --columns block,
//! with each kernel flag; a bad file is one error line, exit 2.

use okr_kernels::{Kernel, PeakWeights, Ppk};

use super::{Dir, assert_one_line_error, okr, p};

const TRAIN_MGF: &str = "\
BEGIN IONS
NAME=a
PEPMASS=200.1
CHARGE=1+
100.0 10
150.5 20
180.02 5
END IONS
BEGIN IONS
NAME=b
PEPMASS=200.102
100.004 8
150.49 30
END IONS
BEGIN IONS
NAME=c
PEPMASS=310.5
60.1 3
150.51 7
290.0 50
END IONS
";

const TEST_MSP: &str = "\
Name: t1
PrecursorMZ: 200.09
Num Peaks: 2
100.002 12
180.03 4

Name: t2
PrecursorMZ: 310.49
Num Peaks: 1
290.003 9
";

fn run_ok(args: &[&str]) -> Vec<u8> {
    let out = okr(args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

#[test]
fn gram_files_equal_the_library_kernel() {
    let dir = Dir::new();
    let train = dir.write("train.mgf", TRAIN_MGF);
    let test = dir.write("test.msp", TEST_MSP);
    let (s_train, s_test) = (okr_eval::read_mgf(&train).unwrap().spectra, okr_eval::read_msp(&test).unwrap().spectra);
    let cases: [(&[&str], Ppk); 4] = [
        (&[], Ppk::params().check().unwrap()),
        (&["--sigma", "0.005"], Ppk::params().peak_width(0.005).check().unwrap()),
        (&["--precursor-sigma", "0.02"], Ppk::params().precursor_width(Some(0.02)).check().unwrap()),
        (
            &["--peak-weights", "uniform", "--intensity-sigma", "0.5"],
            Ppk::params().weights(PeakWeights::Uniform).intensity_width(Some(0.5)).check().unwrap(),
        ),
    ];
    for (flags, ppk) in cases {
        let (k, kt) = (dir.path("k.npy"), dir.path("kt.txt"));
        run_ok(&[&["gram", "-i", p(&train), "-o", p(&k)], flags].concat());
        run_ok(&[&["gram", "-i", p(&test), "--columns", p(&train), "-o", p(&kt)], flags].concat());
        let (got, got_t) = (okr_kernels::read_gram(&k).unwrap(), okr_kernels::read_gram(&kt).unwrap());
        let (want, want_t) = (ppk.gram(&s_train), ppk.gram_block(&s_test, &s_train));
        assert_eq!((got.nrows(), got.ncols(), got_t.nrows(), got_t.ncols()), (3, 3, 2, 3));
        for (g, w) in [(&got, &want), (&got_t, &want_t)] {
            for i in 0..g.nrows() {
                for j in 0..g.ncols() {
                    assert_eq!(g[(i, j)].to_bits(), w[(i, j)].to_bits(), "{flags:?} ({i}, {j})");
                }
            }
        }
        // The training Gram is a valid --input-gram file (square, symmetric).
        okr_kernels::read_train_gram(&k, okr_kernels::GRAM_SYMMETRY_TOL).unwrap();
    }
    // Without -o: text on standard output, one row per line.
    let text = String::from_utf8(run_ok(&["gram", "-i", p(&train)])).unwrap();
    assert_eq!(text.lines().count(), 3);
    assert_eq!(text.lines().next().unwrap().split_whitespace().count(), 3);
}

#[test]
fn bad_spectra_files_are_one_line_errors() {
    let dir = Dir::new();
    let csv = dir.write("s.csv", "1,2\n");
    assert_one_line_error(&okr(&["gram", "-i", p(&csv)]), &["s.csv", ".mgf or .msp"]);
    let bad = dir.write("bad.mgf", "BEGIN IONS\n100.0 abc\nEND IONS\n");
    assert_one_line_error(&okr(&["gram", "-i", p(&bad)]), &["bad.mgf"]);
    let good = dir.write("good.mgf", TRAIN_MGF);
    assert_one_line_error(&okr(&["gram", "-i", p(&good), "--sigma", "0"]), &["peak_width"]);
    assert_one_line_error(&okr(&["gram", "-i", p(&good), "-o", p(&good)]), &["good.mgf"]);
    assert!(okr_eval::read_mgf(&good).is_ok(), "the input was not overwritten");
}

/// `n` spectra in MGF, on a grid of m/z values 0.004 apart so that peaks
/// of different spectra overlap at widths near 0.01.
fn mgf(n: usize, seed: usize) -> String {
    (0..n)
        .map(|i| {
            let k = i + seed;
            let peaks: String = (0..2 + k % 4)
                .map(|q| {
                    let mz = 100.0 + ((k * 7 + q * 11) % 13) as f64 * 0.004 + q as f64 * 25.0;
                    format!("{mz} {}\n", 1 + (k + q) % 5)
                })
                .collect();
            format!("BEGIN IONS\nNAME=s{k}\nPEPMASS={}\n{peaks}END IONS\n", 200.0 + (k % 6) as f64 * 0.005)
        })
        .collect()
}

/// Training rows for `n` spectra: one unused feature, then 3 label columns.
fn labels_csv(n: usize) -> String {
    (0..n).map(|i| format!("0,{},{},{}\n", u8::from(i % 2 == 0), u8::from(i % 3 == 0), u8::from(i % 3 != 0))).collect()
}

/// `okr fit --input-spectra` fits the model `okr fit --input-gram` fits on
/// the Gram `okr gram` writes with the same kernel flags: the same
/// predictions with scores (bit for bit) on the test x train Gram; the
/// recipe records the kernel and replays with `--recipe`; another peak
/// width predicts otherwise.
#[test]
fn fit_on_spectra_equals_fit_on_their_gram() {
    let dir = Dir::new();
    let (train, test) = (dir.write("train.mgf", &mgf(18, 0)), dir.write("test.mgf", &mgf(6, 40)));
    let rows = dir.write("train.csv", &labels_csv(18));
    let read = ["--label-count", "3", "--csv-header", "no", "--lambda", "1e-3", "--train", p(&rows)];
    let predict = |model: &std::path::Path, kt: &std::path::Path| {
        let args = ["predict", "-m", p(model), "--input-gram-test", p(kt), "--top-k", "3", "--scores"];
        String::from_utf8(run_ok(&[&args[..], &["--output-format", "json"]].concat())).unwrap()
    };
    let (k, kt) = (dir.path("k.npy"), dir.path("kt.npy"));
    let cases: [(&[&str], &[&str]); 3] = [
        (&[], &[]),
        (
            &["--sigma", "0.005", "--precursor-sigma", "0.02", "--peak-weights", "sqrt-intensity"],
            &["--peak-width", "0.005", "--precursor-width", "0.02", "--peak-weights", "sqrt-intensity"],
        ),
        (
            &["--peak-weights", "uniform", "--intensity-sigma", "0.5"],
            &["--peak-weights", "uniform", "--intensity-width", "0.5"],
        ),
    ];
    let mut first = None;
    for (gram_flags, fit_flags) in cases {
        run_ok(&[&["gram", "-i", p(&train), "-o", p(&k)], gram_flags].concat());
        run_ok(&[&["gram", "-i", p(&test), "--columns", p(&train), "-o", p(&kt)], gram_flags].concat());
        let (on_gram, direct, again) = (dir.path("g.okr"), dir.path("s.okr"), dir.path("r.okr"));
        run_ok(&[&["fit", "-m", p(&on_gram), "--input-gram", p(&k)], &read[..]].concat());
        run_ok(&[&["fit", "-m", p(&direct), "--input-spectra", p(&train)], &read[..], fit_flags].concat());
        let want = predict(&on_gram, &kt);
        assert_eq!(want.lines().count(), 6);
        assert_eq!(predict(&direct, &kt), want, "{fit_flags:?}");
        let info: serde_json::Value = serde_json::from_slice(&run_ok(&["info", p(&direct), "--json"])).unwrap();
        let kernel = &info["recipe"]["input"]["kernel"];
        assert_eq!(info["recipe"]["input"]["kind"], "spectra", "{info}");
        assert!(kernel["peak_width"].is_number() && kernel["peak_weights"].is_string(), "{info}");
        let recipe = dir.write("recipe.json", &info.to_string());
        run_ok(
            &[&["fit", "-m", p(&again), "--recipe", p(&recipe), "--input-spectra", p(&train)], &read[..4], &read[6..]]
                .concat(),
        );
        assert_eq!(predict(&again, &kt), want, "{fit_flags:?} replayed");
        match &first {
            None => first = Some(want),
            Some(f) => assert_ne!(&want, f, "{fit_flags:?} predicts as the defaults"),
        }
    }
    // Sample weights: the weighted fit of the spectra equals the weighted fit of their Gram.
    run_ok(&["gram", "-i", p(&train), "-o", p(&k)]);
    run_ok(&["gram", "-i", p(&test), "--columns", p(&train), "-o", p(&kt)]);
    let weights: String = (0..18).map(|i| format!("{}\n", 0.5 + (i % 4) as f64 * 2.0)).collect();
    let w = dir.write("w.txt", &weights);
    let (on_gram, direct) = (dir.path("gw.okr"), dir.path("sw.okr"));
    run_ok(&[&["fit", "-m", p(&on_gram), "--input-gram", p(&k), "--sample-weights", p(&w)], &read[..]].concat());
    run_ok(&[&["fit", "-m", p(&direct), "--input-spectra", p(&train), "--sample-weights", p(&w)], &read[..]].concat());
    let want = predict(&on_gram, &kt);
    assert_eq!(predict(&direct, &kt), want, "weighted");
    assert_ne!(Some(&want), first.as_ref(), "the weights changed nothing");
    // The model stores no spectra: predicting needs the test x train Gram, and says how to write it.
    let model = dir.path("s.okr");
    let out = okr(&["predict", "-m", p(&model), "-i", p(&rows), "--label-count", "3", "--csv-header", "no"]);
    assert_one_line_error(&out, &["--input-spectra", "--input-gram-test", "okr gram -i TEST --columns TRAIN"]);
}

#[test]
fn bad_spectra_inputs_are_one_line_errors() {
    let dir = Dir::new();
    let train = dir.write("train.mgf", &mgf(6, 0));
    let rows = dir.write("train.csv", &labels_csv(6));
    let m = dir.path("m.okr");
    let fit = |extra: &[&str]| {
        let base = ["fit", "-m", p(&m), "--train", p(&rows), "--label-count", "3", "--csv-header", "no"];
        okr(&[&base[..], extra].concat())
    };
    let bad = dir.write("bad.mgf", "BEGIN IONS\n100.0 abc\nEND IONS\n");
    assert_one_line_error(&fit(&["--input-spectra", p(&bad)]), &["bad.mgf"]);
    let csv = dir.write("s.csv", "1,2\n");
    assert_one_line_error(&fit(&["--input-spectra", p(&csv)]), &["s.csv", ".mgf or .msp"]);
    let short = dir.write("short.mgf", &mgf(5, 0));
    assert_one_line_error(&fit(&["--input-spectra", p(&short)]), &["5 spectra for the 6 rows"]);
    assert_one_line_error(&fit(&["--input-spectra", p(&train), "--peak-width", "0"]), &["peak_width"]);
    assert_one_line_error(&fit(&["--input-spectra", p(&train), "--precursor-width", "-1"]), &["precursor_width"]);
    assert_one_line_error(&fit(&["--peak-width", "0.01"]), &["--peak-width applies with --input-spectra only"]);
    assert_one_line_error(
        &fit(&["--input-spectra", p(&train), "--input-gamma", "0.5"]),
        &["--input-gamma does not apply with --input-spectra"],
    );
    assert_one_line_error(
        &fit(&["--input-spectra", p(&train), "--estimator", "leml"]),
        &["spectra (a Gram of the probability product kernel) does not apply to estimator leml"],
    );
    assert!(!m.exists());
}
