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
