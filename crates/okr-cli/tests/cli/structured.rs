//! Graph and ranking outputs end to end (issue 17, item 1): `okr fit
//! --output-kind graph | ranking`, predict / eval / rank / info on such
//! models, against the library's decode (same kernels, same ridge: same
//! indices, scores to 1e-12); the one-line errors; the model file round trip.
//! Data are seeded stand-ins written to a tempdir; the real iris label-ranking
//! file is used only when the data directory (`okr_eval::data_dir`) has it.

use faer::Mat;
use okr_decode::{CandidateDecoder, Decoded};
use okr_estimators::persist::{Model, SavedModel, SavedOutputSurrogate};
use okr_estimators::{Fit, Iokr, Nystroem, ReducedRankIokr, SketchedIokr, SurrogateModel};
use okr_eval::Features;
use okr_kernels::{DenseRows, Gaussian, Graph, Graphs, KernelSpec, RankingKernel, Rankings, Rows, WlSubtree};
use serde_json::Value;

use super::{Dir, Output, assert_one_line_error, okr, p};

fn ok(out: Output) -> String {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * (1.0 + b.abs())
}

/// Seeded-looking deterministic inputs `(n, 3)`.
fn inputs(n: usize, shift: f64) -> Mat<f64> {
    Mat::from_fn(n, 3, |i, j| ((i as f64 + shift) * 0.37 + j as f64 * 1.3).sin())
}

fn csv(m: &Mat<f64>) -> String {
    (0..m.nrows())
        .map(|i| (0..m.ncols()).map(|j| format!("{:?}", m[(i, j)])).collect::<Vec<_>>().join(",") + "\n")
        .collect()
}

/// A graph that depends on the inputs: a path whose length and labels follow
/// the signs of the features, closed into a cycle for some rows.
fn graph_of(x: &Mat<f64>, i: usize) -> Graph {
    let n = 2 + usize::from(x[(i, 0)] > 0.0) + 2 * usize::from(x[(i, 1)] > 0.3);
    let mut edges: Vec<(usize, usize)> = (1..n).map(|v| (v - 1, v)).collect();
    if x[(i, 2)] > 0.5 {
        edges.push((0, n - 1));
    }
    let labels = (0..n).map(|v| u32::from(x[(i, v % 3)] > 0.0) + (v % 2) as u32).collect();
    Graph::new(labels, &edges).unwrap()
}

/// Writes graphs as the TU data set `dir/name` and returns its prefix.
fn write_tu(dir: &Dir, name: &str, graphs: &[Graph]) -> String {
    let (mut a, mut ind, mut lab, mut nl) = (String::new(), String::new(), String::new(), String::new());
    let mut base = 0;
    for (g, graph) in graphs.iter().enumerate() {
        for v in 0..graph.n_nodes() {
            ind += &format!("{}\n", g + 1);
            nl += &format!("{}\n", graph.node_labels()[v]);
            for &u in graph.neighbors(v) {
                a += &format!("{}, {}\n", base + v + 1, base + u as usize + 1);
            }
        }
        lab += "1\n";
        base += graph.n_nodes();
    }
    for (suffix, text) in [("A", a), ("graph_indicator", ind), ("graph_labels", lab), ("node_labels", nl)] {
        dir.write(&format!("{name}_{suffix}.txt"), &text);
    }
    p(&dir.path(name)).to_string()
}

/// Ranks of 4 items scored by the inputs (1-based, as in label-ranking files).
fn ranking_of(x: &Mat<f64>, i: usize) -> Vec<usize> {
    let score: Vec<f64> = (0..4).map(|j| (x[(i, j % 3)] * (j as f64 + 1.0)).sin() + 0.1 * j as f64).collect();
    let mut order: Vec<usize> = (0..4).collect();
    order.sort_by(|&a, &b| score[b].total_cmp(&score[a]));
    let mut ranks = vec![0; 4];
    for (r, &item) in order.iter().enumerate() {
        ranks[item] = r + 1;
    }
    ranks
}

/// A label-ranking file of `x` and its rankings.
fn label_ranking_file(x: &Mat<f64>) -> (String, Rankings) {
    let mut text = format!("{},3,4\n", x.nrows());
    let mut rows = Vec::new();
    for i in 0..x.nrows() {
        let r = ranking_of(x, i);
        let feats: Vec<String> = (0..3).map(|j| format!("{:?}", x[(i, j)])).collect();
        text += &format!("{},{}\n", feats.join(","), r.iter().map(usize::to_string).collect::<Vec<_>>().join(","));
        rows.push(r.iter().map(|v| v - 1).collect());
    }
    (text, Rankings::new(4, rows).unwrap())
}

fn features(x: &Mat<f64>) -> Features {
    Features::Dense(DenseRows::new(x.clone()).unwrap())
}

fn kx() -> KernelSpec {
    Gaussian::new(0.3).unwrap().into()
}

/// `okr predict --output-format json --top-k 2` agrees with `decoded`: ids, and scores to 1e-12.
fn assert_json_matches(text: &str, decoded: &Decoded) {
    assert_eq!(text.lines().count(), decoded.n_rows());
    for (t, line) in text.lines().enumerate() {
        let v: Value = serde_json::from_str(line).unwrap();
        let ids: Vec<usize> =
            v["candidate_ids"].as_array().unwrap().iter().map(|c| c.as_u64().unwrap() as usize).collect();
        assert_eq!(ids, decoded.top(t), "row {t}");
        for (s, want) in v["scores"].as_array().unwrap().iter().zip(decoded.top_scores(t)) {
            assert!(close(s.as_f64().unwrap(), *want), "{s} vs {want}");
        }
    }
}

#[test]
fn graph_outputs_match_the_library() {
    let dir = Dir::new();
    let (x, xt) = (inputs(24, 0.0), inputs(6, 40.0));
    let g: Vec<Graph> = (0..24).map(|i| graph_of(&x, i)).collect();
    let gt: Vec<Graph> = (0..6).map(|i| graph_of(&xt, i)).collect();
    let (xf, xtf) = (dir.write("x.csv", &csv(&x)), dir.write("xt.csv", &csv(&xt)));
    let (train_g, test_g) = (write_tu(&dir, "G", &g), write_tu(&dir, "T", &gt));
    let model = dir.path("g.okr");
    let fit = [
        "fit",
        "--train",
        p(&xf),
        "--csv-header",
        "no",
        "--output-kind",
        "graph",
        "--outputs",
        train_g.as_str(),
        "--output-kernel",
        "wl",
        "--wl-iterations",
        "2",
        "--gamma",
        "0.3",
        "--lambda",
        "1e-3",
        "--no-standardize",
        "-m",
        p(&model),
    ];
    ok(okr(&fit));
    let wl = WlSubtree::new(2).normalized(true);
    let graphs = Graphs::new(g.clone());
    let lib = Iokr::params(kx(), wl).lambda(1e-3).fit(&features(&x), &graphs).unwrap();
    let xtest = features(&xt);
    let decoded = CandidateDecoder::new().top_k(2).decode(&lib, &xtest, &graphs).unwrap();

    let common = ["-m", p(&model), "-i", p(&xtf), "--csv-header", "no"];
    let json = ok(okr(&[&["predict"][..], &common, &["--top-k", "2", "--output-format", "json"]].concat()));
    assert_json_matches(&json, &decoded);
    // Default format: the chosen candidate's index (training graph order).
    let best = decoded.best();
    let text = ok(okr(&[&["predict"][..], &common].concat()));
    let got: Vec<usize> = text.lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(got, best);
    // csv: input,rank,candidate_id,score.
    let csv_text = ok(okr(&[&["predict"][..], &common, &["--output-format", "csv"]].concat()));
    assert_eq!(csv_text.lines().next(), Some("input,rank,candidate_id,score"));
    assert_eq!(csv_text.lines().count(), 7);

    // eval: exact match and the normalized RBF loss 2 - 2 k(yhat, y) of the decoded graphs.
    let eval = ok(okr(&[&["eval"][..], &common, &["--outputs", test_g.as_str()]].concat()));
    let v: Value = serde_json::from_str(&eval).unwrap();
    let truth = Graphs::new(gt.clone());
    let predicted = graphs.select(&best);
    let exact = okr_eval::output_metrics::exact_match(&predicted, &truth).unwrap();
    assert_eq!(v["top1_exact_match"].as_f64(), Some(exact));
    let losses = okr_eval::output_kernel_losses(&wl, &predicted, &truth).unwrap();
    let rbf = losses.iter().sum::<f64>() / 6.0;
    assert!(close(v["rbf_loss"].as_f64().unwrap(), rbf), "{v}");
    for (l, (p, t)) in losses.iter().zip(predicted.iter().zip(truth.iter())) {
        let pair = Graphs::new(vec![p.clone(), t.clone()]);
        assert!((l - (2.0 - 2.0 * okr_kernels::Kernel::gram(&wl, &pair)[(0, 1)])).abs() < 1e-12);
    }
    let errs = lib.rkhs_sq_errors(&xtest, &truth).unwrap();
    assert!(close(v["mse_h"].as_f64().unwrap(), errs.iter().sum::<f64>() / 6.0), "{v}");
    assert_eq!((v["output_kind"].as_str(), v["n_candidates"].as_u64()), (Some("graphs"), Some(24)));

    // --candidates: another TU data set (here the test graphs).
    let on_test = ok(okr(&[&["predict"][..], &common, &["--candidates", test_g.as_str()]].concat()));
    let want = CandidateDecoder::new().decode(&lib, &xtest, &truth).unwrap().best();
    assert_eq!(on_test.lines().map(|l| l.parse().unwrap()).collect::<Vec<usize>>(), want);

    // Model file round trip: the loaded model decodes as the library's.
    let saved = SavedModel::load(&model).unwrap();
    assert_eq!(
        SavedModel::from_bytes(&saved.to_bytes().unwrap()).unwrap().to_bytes().unwrap(),
        saved.to_bytes().unwrap()
    );
    let Model::Graphs(m) = &saved.model else { panic!("{}", saved.model.name()) };
    assert_eq!(m.output_kernel(), &wl);
    let again = CandidateDecoder::new().top_k(2).decode(m.surrogate(), &xtest, m.candidates()).unwrap();
    assert_eq!((again.top(0), again.top_scores(0)), (decoded.top(0), decoded.top_scores(0)));

    // rank: pool mode with the training graphs as pool; scores are predict's.
    let q = dir.write("q.txt", "okr-candidates 1 pool\nquery a 0\n3 1 *7\nquery b 5\n0 2\n");
    let ranked =
        ok(okr(&[&["rank"][..], &common, &["--candidates-per-query", p(&q), "--pool", train_g.as_str()]].concat()));
    let all = CandidateDecoder::new().top_k(24).decode(&lib, &xtest, &graphs).unwrap();
    for line in ranked.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        let (row, c): (usize, usize) = (if f[0] == "a" { 0 } else { 5 }, f[2].parse().unwrap());
        let pos = all.top(row).iter().position(|&k| k == c).unwrap();
        assert!(close(f[3].parse().unwrap(), all.top_scores(row)[pos]), "{line}");
    }
    assert_eq!(ranked.lines().count(), 6);

    let info: Value = serde_json::from_str(&ok(okr(&["info", "--json", p(&model)]))).unwrap();
    assert_eq!(info["output_kind"], "Graphs");
    assert_eq!(info["parameters"]["output_kernel"]["iterations"], 2);

    // Errors: one line, exit 2.
    assert_one_line_error(&okr(&[&["eval"][..], &common].concat()), &["graph model", "--outputs"]);
    let inline = dir.write("i.txt", "okr-candidates 1 inline\nquery a 0\n0 1\n");
    assert_one_line_error(
        &okr(&[&["rank"][..], &common, &["--candidates-per-query", p(&inline)]].concat()),
        &["inline", "pool"],
    );
    let empty = dir.write("e.txt", "okr-candidates 1 pool\nquery a 0\nquery b 1\n0\n");
    assert_one_line_error(
        &okr(&[&["rank"][..], &common, &["--candidates-per-query", p(&empty), "--pool", train_g.as_str()]].concat()),
        &["query a", "empty"],
    );
    let vectors = dir.write("v.csv", "1,2\n");
    assert_one_line_error(&okr(&[&["predict"][..], &common, &["--candidates", p(&vectors)]].concat()), &["v.csv"]);
    let mut no_wl = fit.to_vec();
    no_wl.retain(|a| !["--output-kernel", "wl", "--wl-iterations", "2"].contains(a));
    // The output kernel of graphs defaults to WL (the library's default for the kind).
    let out = okr(&no_wl);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("normalized WL subtree, 3 iterations"));
}

/// IOKR, reduced rank, SIOKR with sub-sampling and Nystroem on ranking
/// outputs, through the CLI and the library: same decoded rankings and scores.
// One push per case: each argument coerces to the boxed trait object.
#[allow(clippy::vec_init_then_push)]
#[test]
fn ranking_outputs_match_the_library() {
    let dir = Dir::new();
    let (x, xt) = (inputs(30, 0.0), inputs(8, 70.0));
    let (train_text, y) = label_ranking_file(&x);
    let (test_text, yt) = label_ranking_file(&xt);
    let (train, test) = (dir.write("lr.csv", &train_text), dir.write("lrt.csv", &test_text));
    let mallows = RankingKernel::mallows(0.5).unwrap();
    let (xs, xtest) = (features(&x), features(&xt));
    type Lib = Box<SavedOutputSurrogate<Rankings, RankingKernel>>;
    let mut cases: Vec<(&[&str], Lib)> = Vec::new();
    cases.push((&[], Box::new(Iokr::params(kx(), mallows).lambda(1e-3).fit(&xs, &y).unwrap())));
    cases.push((
        &["--estimator", "reduced-rank", "--rank", "3"],
        Box::new(ReducedRankIokr::params(kx(), mallows).rank(3).lambda1(1e-3).lambda2(1e-3).fit(&xs, &y).unwrap()),
    ));
    cases.push((
        &["--estimator", "siokr", "--input-sketch", "uniform:12", "--seed", "4"],
        Box::new(
            SketchedIokr::params(kx(), mallows)
                .lambda(1e-3)
                .input_sketch(Some("uniform:12".parse().unwrap()))
                .seed(4)
                .fit(&xs, &y)
                .unwrap(),
        ),
    ));
    cases.push((
        &["--estimator", "nystroem", "--anchors", "10", "--seed", "2"],
        Box::new(
            Nystroem::params(kx(), mallows)
                .lambda(1e-3)
                .anchors(okr_estimators::nystroem::Anchors::Uniform(10))
                .seed(2)
                .fit(&xs, &y)
                .unwrap(),
        ),
    ));

    let (distinct, _) = y.group_duplicates();
    for (k, (extra, lib)) in cases.iter().enumerate() {
        let extra: &[&str] = extra;
        let model = dir.path(&format!("r{k}.okr"));
        let base = [
            "fit",
            "--train",
            p(&train),
            "--output-kind",
            "ranking",
            "--output-kernel",
            "mallows",
            "--mallows-lambda",
            "0.5",
            "--gamma",
            "0.3",
            "--lambda",
            "1e-3",
            "--no-standardize",
            "-m",
            p(&model),
        ];
        ok(okr(&[&base[..], extra].concat()));
        let decoded = CandidateDecoder::new().top_k(2).decode(lib.as_ref(), &xtest, &distinct).unwrap();
        let common = ["-m", p(&model), "-i", p(&test)];
        let json = ok(okr(&[&["predict"][..], &common, &["--top-k", "2", "--output-format", "json"]].concat()));
        assert_json_matches(&json, &decoded);
        // Default format: the decoded ranking, 1-based ranks of the items.
        let text = ok(okr(&[&["predict"][..], &common].concat()));
        for (t, line) in text.lines().enumerate() {
            let want: Vec<String> = distinct.ranks(decoded.top(t)[0]).iter().map(|r| (r + 1).to_string()).collect();
            assert_eq!(line, want.join(","), "{extra:?} row {t}");
        }
        // eval: Kendall tau and pairwise disagreement of the decoded rankings.
        let v: Value = serde_json::from_str(&ok(okr(&[&["eval"][..], &common].concat()))).unwrap();
        let predicted = distinct.select(&decoded.best());
        let (tau, dis) = okr_eval::output_metrics::ranking_agreement(&predicted, &yt).unwrap();
        assert!(close(v["kendall_tau"].as_f64().unwrap(), tau.iter().sum::<f64>() / 8.0), "{v}");
        assert!(close(v["pairwise_disagreement"].as_f64().unwrap(), dis.iter().sum::<f64>() / 8.0), "{v}");
        assert_eq!((v["n_items"].as_u64(), v["output_kind"].as_str()), (Some(4), Some("rankings")));
    }

    // Kendall kernel, --candidates of rankings, rank with inline rankings.
    let model = dir.path("k.okr");
    ok(okr(&[
        "fit",
        "--train",
        p(&train),
        "--output-kind",
        "ranking",
        "--output-kernel",
        "kendall",
        "--gamma",
        "0.3",
        "--lambda",
        "1e-3",
        "--no-standardize",
        "-m",
        p(&model),
    ]));
    let lib = Iokr::params(kx(), RankingKernel::Kendall).lambda(1e-3).fit(&xs, &y).unwrap();
    let cands = Rankings::new(4, vec![vec![0, 1, 2, 3], vec![3, 2, 1, 0], vec![1, 0, 3, 2]]).unwrap();
    let cfile = dir.write("c.txt", "# three rankings\n1,2,3,4\n4 3 2 1\n2,1,4,3\n");
    let common = ["-m", p(&model), "-i", p(&test)];
    let json =
        ok(okr(&[&["predict"][..], &common, &["--candidates", p(&cfile), "--top-k", "2", "--output-format", "json"]]
            .concat()));
    assert_json_matches(&json, &CandidateDecoder::new().top_k(2).decode(&lib, &xtest, &cands).unwrap());
    let q = dir.write("q.txt", "okr-candidates 1 inline\nquery a 2\n1 2 3 4\n*4 3 2 1\n");
    let ranked = ok(okr(&[&["rank"][..], &common, &["--candidates-per-query", p(&q)]].concat()));
    let all = CandidateDecoder::new().top_k(2).decode(&lib, &xtest, &cands.select(&[0, 1])).unwrap();
    for line in ranked.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        let c: usize = f[2].parse().unwrap();
        let pos = all.top(2).iter().position(|&k| k == c).unwrap();
        assert!(close(f[3].parse().unwrap(), all.top_scores(2)[pos]), "{line}");
    }
    let saved = SavedModel::load(&model).unwrap();
    assert_eq!(saved.info.n_labels, 4);
    let info: Value = serde_json::from_str(&ok(okr(&["info", "--json", p(&model)]))).unwrap();
    assert_eq!((info["output_kind"].as_str(), info["parameters"]["output_dim"].as_u64()), (Some("Rankings"), Some(4)));

    // Errors: one line, exit 2.
    let empty = dir.write("empty.txt", "# no rankings\n");
    assert_one_line_error(
        &okr(&[&["predict"][..], &common, &["--candidates", p(&empty)]].concat()),
        &["candidate set is empty"],
    );
    let features_only = dir.write("x.csv", &csv(&x));
    assert_one_line_error(
        &okr(&[
            "fit",
            "--train",
            p(&features_only),
            "--output-kind",
            "ranking",
            "--output-kernel",
            "kendall",
            "-m",
            p(&dir.path("z.okr")),
        ]),
        &["x.csv", "n,d,k"],
    );
    assert_one_line_error(&okr(&["predict", "-m", p(&model), "-i", p(&features_only)]), &["x.csv"]);
    let five = dir.write("c5.txt", "1,2,3,4,5\n");
    assert_one_line_error(&okr(&[&["predict"][..], &common, &["--candidates", p(&five)]].concat()), &["c5.txt"]);
}

/// Structured output kernels on other data, and structured flags out of place.
#[test]
fn structured_kernels_on_other_data_are_one_line_errors() {
    let dir = Dir::new();
    let train = dir.write("t.arff", super::ARFF);
    let m = dir.path("m.okr");
    let base = ["fit", "--train", p(&train), "--label-count", "2", "-m", p(&m)];
    assert_one_line_error(&okr(&[&base[..], &["--output-kernel", "wl"]].concat()), &["wl", "graph or ranking kernel"]);
    assert_one_line_error(&okr(&[&base[..], &["--input-kernel", "wl"]].concat()), &["--input-kernel wl"]);
    assert_one_line_error(&okr(&[&base[..], &["--output-kernel", "kendall"]].concat()), &["ranking kernel"]);
    assert_one_line_error(&okr(&[&base[..], &["--wl-iterations", "2"]].concat()), &["--wl-iterations"]);
    let graph = ["fit", "--train", p(&train), "-m", p(&m), "--output-kind", "graph", "--outputs", "nowhere/G"];
    assert_one_line_error(
        &okr(&[&graph[..], &["--output-kernel", "wl", "--output-gamma", "1"]].concat()),
        &["--output-gamma", "wl"],
    );
    assert_one_line_error(
        &okr(&[&graph[..], &["--output-kernel", "kendall"]].concat()),
        &["graph outputs need output kernel wl"],
    );
}

/// The real iris label-ranking file (150 rows, 3 labels), when present:
/// IOKR with the Kendall kernel beats chance clearly on its training rows.
#[test]
fn iris_label_ranking_when_present() {
    let iris = okr_eval::data_dir().join("label_ranking/iris.csv");
    if !iris.exists() {
        eprintln!("skipped: {} not found", iris.display());
        return;
    }
    let dir = Dir::new();
    let model = dir.path("iris.okr");
    ok(okr(&["fit", "--train", p(&iris), "--output-kind", "ranking", "--output-kernel", "kendall", "-m", p(&model)]));
    let v: Value = serde_json::from_str(&ok(okr(&["eval", "-m", p(&model), "-i", p(&iris)]))).unwrap();
    assert!(v["kendall_tau"].as_f64().unwrap() > 0.5, "{v}");
}
