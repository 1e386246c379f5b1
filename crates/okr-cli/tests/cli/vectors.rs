//! Fingerprint and vector outputs end to end (issue 17, item 2): `okr fit
//! --output-kind`, predict / eval / rank / info on such models, against the
//! library (same kernels, same ridge) to 1e-12; and the USPS acceptance run.

use faer::Mat;
use okr_decode::CandidateDecoder;
use okr_estimators::{Fit, Iokr, SurrogateModel};
use okr_eval::Features;
use okr_kernels::{DenseRows, Gaussian, KernelSpec, LabelSets, Rows, Tanimoto};
use serde_json::Value;

use super::{Dir, Output, assert_one_line_error, okr, p};

fn ok(out: Output) -> String {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn csv(m: &Mat<f64>) -> String {
    (0..m.nrows())
        .map(|i| (0..m.ncols()).map(|j| format!("{:?}", m[(i, j)])).collect::<Vec<_>>().join(",") + "\n")
        .collect()
}

/// Seeded-looking deterministic inputs `(n, 4)`.
fn inputs(n: usize, shift: f64) -> Mat<f64> {
    Mat::from_fn(n, 4, |i, j| ((i as f64 + shift) * 0.37 + j as f64 * 1.3).sin())
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * (1.0 + b.abs())
}

#[test]
fn vector_outputs_match_the_library() {
    let dir = Dir::new();
    let (x, xt) = (inputs(30, 0.0), inputs(7, 100.0));
    let y = Mat::from_fn(30, 3, |i, j| (x[(i, 0)] * (j as f64 + 1.0)).cos() + x[(i, 1)]);
    let yt = Mat::from_fn(7, 3, |i, j| (xt[(i, 0)] * (j as f64 + 1.0)).cos() + xt[(i, 1)]);
    let (xf, yf, xtf, ytf) = (
        dir.write("x.csv", &csv(&x)),
        dir.write("y.csv", &csv(&y)),
        dir.write("xt.csv", &csv(&xt)),
        dir.write("yt.csv", &csv(&yt)),
    );
    let model = dir.path("v.okr");
    let fit = [
        "fit",
        "--train",
        p(&xf),
        "--csv-header",
        "no",
        "--output-kind",
        "vector",
        "--outputs",
        p(&yf),
        "--gamma",
        "0.3",
        "--output-gamma",
        "0.5",
        "--lambda",
        "1e-3",
        "--no-standardize",
        "-m",
        p(&model),
    ];
    ok(okr(&fit));
    // The library oracle: the same IOKR on the same rows.
    let kx: KernelSpec = Gaussian::new(0.3).unwrap().into();
    let ky: KernelSpec = Gaussian::new(0.5).unwrap().into();
    let ytr = DenseRows::new(y.clone()).unwrap();
    let lib =
        Iokr::params(kx, ky.clone()).lambda(1e-3).fit(&Features::Dense(DenseRows::new(x).unwrap()), &ytr).unwrap();
    let xtest = Features::Dense(DenseRows::new(xt).unwrap());
    let decoded = CandidateDecoder::new().top_k(2).decode(&lib, &xtest, lib.atoms()).unwrap();

    // predict (json): candidate ids and scores.
    let common = ["-m", p(&model), "-i", p(&xtf), "--csv-header", "no"];
    let text = ok(okr(&[&["predict"][..], &common, &["--top-k", "2", "--output-format", "json"]].concat()));
    for (t, line) in text.lines().enumerate() {
        let v: Value = serde_json::from_str(line).unwrap();
        let ids: Vec<usize> =
            v["candidate_ids"].as_array().unwrap().iter().map(|c| c.as_u64().unwrap() as usize).collect();
        assert_eq!(ids, decoded.top(t), "row {t}");
        for (s, want) in v["scores"].as_array().unwrap().iter().zip(decoded.top_scores(t)) {
            assert!(close(s.as_f64().unwrap(), *want), "{s} vs {want}");
        }
    }
    // predict (labels format): the decoded vectors' values.
    let text = ok(okr(&[&["predict"][..], &common].concat()));
    let best = decoded.best();
    for (t, line) in text.lines().enumerate() {
        let vals: Vec<f64> = line.split(',').map(|v| v.parse().unwrap()).collect();
        assert_eq!(vals, (0..3).map(|j| y[(best[t], j)]).collect::<Vec<_>>());
    }
    // eval: output-kernel loss (= RBF loss 2 - 2k for the Gaussian kernel) and mse_h.
    let text = ok(okr(&[&["eval"][..], &common, &["--outputs", p(&ytf)]].concat()));
    let v: Value = serde_json::from_str(&text).unwrap();
    let truth = DenseRows::new(yt).unwrap();
    let losses = okr_eval::output_kernel_losses(&ky, &ytr.select(&best), &truth).unwrap();
    let want = losses.iter().sum::<f64>() / 7.0;
    assert!(close(v["output_kernel_loss"].as_f64().unwrap(), want), "{v}");
    let rbf: f64 = (0..7)
        .map(|t| {
            let row = |m: &DenseRows, i: usize| (0..3).map(|j| m.as_mat()[(i, j)]).collect::<Vec<_>>();
            okr_eval::gaussian_rbf_loss(&row(&ytr, best[t]), &row(&truth, t), 0.5).unwrap()
        })
        .sum::<f64>()
        / 7.0;
    assert!((want - rbf).abs() < 1e-12, "Gaussian output-kernel loss is the RBF loss");
    let errs = lib.rkhs_sq_errors(&xtest, &truth).unwrap();
    assert!(close(v["mse_h"].as_f64().unwrap(), errs.iter().sum::<f64>() / 7.0), "{v}");
    assert_eq!(
        (v["n_test"].as_u64(), v["n_candidates"].as_u64(), v["output_dim"].as_u64()),
        (Some(7), Some(30), Some(3))
    );

    // rank: inline vector candidates, the same scores as predict's.
    let rows: Vec<String> =
        (0..3).map(|c| (0..3).map(|j| format!("{:?}", y[(c, j)])).collect::<Vec<_>>().join(" ")).collect();
    let q =
        dir.write("q.txt", &format!("okr-candidates 1 inline\nquery a 0\n{}\n*{}\n{}\n", rows[0], rows[1], rows[2]));
    let text = ok(okr(&[&["rank"][..], &common, &["--candidates-per-query", p(&q)]].concat()));
    let all = CandidateDecoder::new().top_k(30).decode(&lib, &xtest, lib.atoms()).unwrap();
    for line in text.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        let c: usize = f[2].parse().unwrap();
        let pos = all.top(0).iter().position(|&k| k == c).unwrap();
        assert!(close(f[3].parse().unwrap(), all.top_scores(0)[pos]), "{line}");
    }
    // info
    let info: Value = serde_json::from_str(&ok(okr(&["info", "--json", p(&model)]))).unwrap();
    assert_eq!(info["output_kind"], "Vectors");
    assert_eq!(info["parameters"]["output_dim"], 3);

    // Errors: one line, exit 2.
    assert_one_line_error(&okr(&[&["eval"][..], &common].concat()), &["vector model", "--outputs"]);
    let short = dir.write("short.csv", "1,2,3\n");
    assert_one_line_error(
        &okr(&[&["eval"][..], &common, &["--outputs", p(&short)]].concat()),
        &["1 outputs", "7 rows"],
    );
    let mut no_outputs = fit.to_vec();
    no_outputs.retain(|a| *a != "--outputs" && *a != p(&yf));
    assert_one_line_error(&okr(&no_outputs), &["--outputs"]);
    let mut leml = fit.to_vec();
    leml.extend(["--estimator", "leml"]);
    assert_one_line_error(&okr(&leml), &["kernel-output estimator"]);
}

#[test]
fn fingerprint_outputs_match_the_library_dense_and_sparse() {
    let dir = Dir::new();
    let (x, xt) = (inputs(24, 0.0), inputs(5, 50.0));
    let bits = |x: &Mat<f64>, i: usize| -> Vec<usize> {
        (0..8).filter(|&b| (x[(i, b % 4)] * (b as f64 + 1.0)).sin() > 0.0).collect()
    };
    let fp: Vec<Vec<usize>> = (0..24).map(|i| bits(&x, i)).collect();
    let fpt: Vec<Vec<usize>> = (0..5).map(|i| bits(&xt, i)).collect();
    let dense = |sets: &[Vec<usize>]| -> String {
        sets.iter()
            .map(|s| (0..8).map(|b| if s.contains(&b) { "1" } else { "0" }).collect::<Vec<_>>().join(",") + "\n")
            .collect()
    };
    let sparse = |sets: &[Vec<usize>]| -> String {
        sets.iter()
            .map(|s| {
                if s.is_empty() {
                    "-\n".into()
                } else {
                    s.iter().map(usize::to_string).collect::<Vec<_>>().join(" ") + "\n"
                }
            })
            .collect()
    };
    let (xf, xtf) = (dir.write("x.csv", &csv(&x)), dir.write("xt.csv", &csv(&xt)));
    let (fd, fs, ftd) =
        (dir.write("fp.csv", &dense(&fp)), dir.write("fp.txt", &sparse(&fp)), dir.write("fpt.csv", &dense(&fpt)));
    let fit = |model: &std::path::Path, extra: &[&str]| {
        let base = [
            "fit",
            "--train",
            p(&xf),
            "--csv-header",
            "no",
            "--output-kind",
            "fingerprint",
            "--output-kernel",
            "tanimoto",
            "--gamma",
            "0.3",
            "--lambda",
            "1e-3",
            "--no-standardize",
            "-m",
            p(model),
        ];
        ok(okr(&[&base[..], extra].concat()));
    };
    let (md, ms) = (dir.path("d.okr"), dir.path("s.okr"));
    fit(&md, &["--outputs", p(&fd)]);
    fit(&ms, &["--outputs", p(&fs), "--fingerprint-format", "sparse", "--n-bits", "8"]);
    let predict =
        |m: &std::path::Path| ok(okr(&["predict", "-m", p(m), "-i", p(&xtf), "--csv-header", "no", "--top-k", "3"]));
    let text = predict(&md);
    assert_eq!(text, predict(&ms), "dense and sparse fingerprint files give the same model");

    let kx: KernelSpec = Gaussian::new(0.3).unwrap().into();
    let ky: KernelSpec = Tanimoto::new().into();
    let y = LabelSets::new(8, fp).unwrap();
    let lib = Iokr::params(kx, ky.clone()).lambda(1e-3).fit(&Features::Dense(DenseRows::new(x).unwrap()), &y).unwrap();
    let xtest = Features::Dense(DenseRows::new(xt).unwrap());
    let decoded = CandidateDecoder::new().top_k(3).decode(&lib, &xtest, lib.atoms()).unwrap();
    for (t, line) in text.lines().enumerate() {
        let want: Vec<String> = decoded
            .top(t)
            .iter()
            .map(|&c| lib.atoms().set(c).iter().map(usize::to_string).collect::<Vec<_>>().join(","))
            .collect();
        assert_eq!(line, want.join(";"), "row {t}");
    }
    // eval against --outputs: the set metrics on bits and the Tanimoto output-kernel loss.
    let v: Value = serde_json::from_str(&ok(okr(&[
        "eval",
        "-m",
        p(&md),
        "-i",
        p(&xtf),
        "--csv-header",
        "no",
        "--outputs",
        p(&ftd),
    ])))
    .unwrap();
    let truth = LabelSets::new(8, fpt).unwrap();
    let pred = lib.atoms().select(&decoded.best());
    let losses = okr_eval::output_kernel_losses(&ky, &pred, &truth).unwrap();
    assert!(close(v["output_kernel_loss"].as_f64().unwrap(), losses.iter().sum::<f64>() / 5.0), "{v}");
    assert!(close(v["f1_samples"].as_f64().unwrap(), okr_eval::f1_samples(&truth, &pred).unwrap()), "{v}");
    let info: Value = serde_json::from_str(&ok(okr(&["info", "--json", p(&md)]))).unwrap();
    assert_eq!(info["n_labels"], 8);

    assert_one_line_error(
        &okr(&[
            "fit",
            "--train",
            p(&xf),
            "--csv-header",
            "no",
            "--output-kind",
            "fingerprint",
            "--outputs",
            p(&fs),
            "--fingerprint-format",
            "sparse",
            "-m",
            p(&dir.path("e.okr")),
        ]),
        &["--n-bits"],
    );
    let wide = dir.write("wide.csv", &dense(&vec![vec![0]; 5]).replace("\n", ",0\n"));
    assert_one_line_error(
        &okr(&["eval", "-m", p(&md), "-i", p(&xtf), "--csv-header", "no", "--outputs", p(&wide)]),
        &["9 bits", "8"],
    );
}

/// Issue 17's acceptance: USPS through the CLI with vector outputs gives
/// `rr-usps`'s IOKR test RBF loss (docs/results/rr-usps.md: c = 1, i.e. gamma
/// = 1 / median squared distance of the 1000 training inputs, lambda = 1e-4,
/// output sigma^2 = 10, candidates = the 7291 training bottom halves).
/// Skipped (passes) when OKR_DATA_DIR has no USPS files; about 10 s otherwise.
#[test]
fn usps_vector_outputs_reproduce_rr_usps_iokr() {
    use rand::SeedableRng;
    use rand::seq::SliceRandom;
    let Ok((train, test)) = okr_eval::find_usps_in(&okr_eval::data_dir()) else {
        eprintln!("skipped: no USPS files in OKR_DATA_DIR");
        return;
    };
    let (train, test) = (okr_eval::read_usps(train).unwrap(), okr_eval::read_usps(test).unwrap());
    let (x_all, y_all) = (train.top_half(true).unwrap(), train.bottom_half(true).unwrap());
    let mut perm: Vec<usize> = (0..x_all.n_rows()).collect();
    perm.shuffle(&mut rand_chacha::ChaCha8Rng::seed_from_u64(0));
    let idx = &perm[..1000];
    let (x, y) = (x_all.select(idx), y_all.select(idx));
    let gamma = 1.0 / okr_kernels::median_sq_distance(&x, 2000);
    assert!((gamma - 0.03435480503781266).abs() < 1e-15, "rr-usps's gamma: {gamma}");
    let dir = Dir::new();
    let w = |name: &str, m: &DenseRows| dir.write(name, &csv(&m.as_mat().to_owned()));
    let (xf, yf) = (w("x.csv", &x), w("y.csv", &y));
    let (xtf, ytf) = (w("xt.csv", &test.top_half(true).unwrap()), w("yt.csv", &test.bottom_half(true).unwrap()));
    let cf = w("cands.csv", &y_all);
    let model = dir.path("usps.okr");
    let g = format!("{gamma:?}");
    ok(okr(&[
        "fit",
        "--train",
        p(&xf),
        "--csv-header",
        "no",
        "--output-kind",
        "vector",
        "--outputs",
        p(&yf),
        "--estimator",
        "iokr",
        "--gamma",
        &g,
        "--output-kernel",
        "gaussian",
        "--output-sigma2",
        "10",
        "--lambda",
        "1e-4",
        "--no-standardize",
        "-m",
        p(&model),
    ]));
    let text = ok(okr(&[
        "eval",
        "-m",
        p(&model),
        "-i",
        p(&xtf),
        "--csv-header",
        "no",
        "--outputs",
        p(&ytf),
        "--candidates",
        p(&cf),
    ]));
    let v: Value = serde_json::from_str(&text).unwrap();
    let loss = v["output_kernel_loss"].as_f64().unwrap();
    eprintln!("USPS IOKR through the CLI: {text}");
    // docs/results/rr-usps.json, method iokr, metric rbf_loss.
    assert!((loss - 0.7377753227103419).abs() < 1e-9, "{loss}");
    assert_eq!((v["n_test"].as_u64(), v["n_candidates"].as_u64()), (Some(2007), Some(7291)));
}

#[test]
fn tune_on_vector_outputs_matches_the_library_search() {
    let dir = Dir::new();
    let x = inputs(45, 0.0);
    let y = Mat::from_fn(45, 2, |i, j| (x[(i, 0)] * (j as f64 + 1.0)).cos() + x[(i, 1)] * x[(i, 2)]);
    let (xf, yf) = (dir.write("x.csv", &csv(&x)), dir.write("y.csv", &csv(&y)));
    let (widths, lambdas) = ([0.25, 1.0, 4.0], [1e-5, 1e-2]);
    let model = dir.path("t.okr");
    let args = ["tune", "--train", p(&xf), "--csv-header", "no", "--output-kind", "vector", "--outputs", p(&yf)];
    let search = ["--widths", "0.25,1,4", "--lambdas", "1e-5,1e-2", "--no-standardize", "--seed", "3", "--json"];
    let v: Value = serde_json::from_str(&ok(okr(&[&args[..], &search, &["-o", p(&model)]].concat()))).unwrap();
    assert!(v["criterion"].as_str().unwrap().contains("mean squared error of the decoded vectors"), "{v}");

    // The library oracle: RefitSearch with IOKR on the same folds, kernels and metric.
    let (xs, ys) = (Features::Dense(DenseRows::new(x).unwrap()), DenseRows::new(y).unwrap());
    let out_median = okr_kernels::median_sq_distance(&ys, okr_kernels::MEDIAN_SAMPLE_ROWS);
    let ky: KernelSpec = Gaussian::new(okr_kernels::median_heuristic_gamma(out_median)).unwrap().into();
    let folds = okr_eval::KFold::new(3).shuffle(3).split(45).unwrap();
    let fit = |x: &Features, y: &DenseRows, gamma: f64, lambda: f64| -> Result<_, okr_decode::Error> {
        let kx: KernelSpec = Gaussian::new(gamma).unwrap().into();
        Ok(Iokr::params(kx, ky.clone()).lambda(lambda).fit(x, y)?)
    };
    let neg_mse = |t: &DenseRows, p: &DenseRows| -> Result<f64, okr_decode::Error> {
        Ok(-(t.as_mat() - p.as_mat()).squared_norm_l2() / t.n_rows() as f64)
    };
    let lib = okr_decode::select::RefitSearch::new(widths.to_vec(), lambdas.to_vec())
        .run(&xs, &ys, &folds, fit, neg_mse, &mut || {})
        .unwrap();
    let cells = v["grid"]["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 6);
    for cell in cells {
        let (wi, li) = (
            widths.iter().position(|&w| w == cell["c"].as_f64().unwrap()).unwrap(),
            lambdas.iter().position(|&l| l == cell["lambda"].as_f64().unwrap()).unwrap(),
        );
        let got: Vec<f64> = cell["fold_scores"].as_array().unwrap().iter().map(|s| s.as_f64().unwrap()).collect();
        for (g, w) in got.iter().zip(&lib.fold_scores[wi][li]) {
            assert!(close(*g, *w), "c {} lambda {}: {g} vs {w}", widths[wi], lambdas[li]);
        }
    }
    assert_eq!(v["chosen"]["c"].as_f64().unwrap(), lib.c());
    assert_eq!(v["chosen"]["lambda"].as_f64().unwrap(), lib.lambda());
    let info: Value = serde_json::from_str(&ok(okr(&["info", "--json", p(&model)]))).unwrap();
    assert_eq!(info["estimator"], "iokr", "{info}");

    assert_one_line_error(
        &okr(&[&args[..], &["--cv", "loo", "-o", p(&model)]].concat()),
        &["--cv loo is a closed form for label sets", "vector outputs"],
    );
    let text = ok(okr(&[&args[..], &["--estimator", "nystroem", "--anchors", "20", "-o", p(&model)]].concat()));
    assert!(text.contains("squared error") && text.contains("chosen: c = "), "{text}");
}
