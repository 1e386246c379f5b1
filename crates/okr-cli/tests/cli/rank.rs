//! `okr rank` (issue 17, item 1): per-query candidate sets against the
//! oracle of `okr predict --candidates` (the same scores through the global
//! decoder), inline and pool modes, the retrieval summary, one-line errors.

use serde_json::Value;

use super::{Dir, assert_one_line_error, fit_toy, okr, p};

fn run(args: &[&str]) -> (String, String) {
    let out = okr(args);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    (String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap())
}

type Row = (String, usize, usize, f64, String, String);

/// Rows of the rank table: (query_id, rank, candidate_id, score, optimistic, pessimistic).
fn table(text: &str) -> Vec<Row> {
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("query_id,rank,candidate_id,score,true_rank_optimistic,true_rank_pessimistic"));
    lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[0].into(), f[1].parse().unwrap(), f[2].parse().unwrap(), f[3].parse().unwrap(), f[4].into(), f[5].into())
        })
        .collect()
}

/// Every candidate's decoding score for test row `row` from `okr predict
/// --candidates --top-k all --scores --output-format json`.
fn oracle(dir: &Dir, model: &std::path::Path, candidates: &[&str], row: usize) -> Vec<f64> {
    let file = dir.write("oracle.txt", &(candidates.join("\n") + "\n"));
    let train = dir.path("train.arff");
    let k = candidates.len().to_string();
    let args = ["predict", "-m", p(model), "-i", p(&train), "--candidates", p(&file), "--top-k", &k];
    let (text, _) = run(&[&args[..], &["--scores", "--output-format", "json"]].concat());
    let v: Value = serde_json::from_str(text.lines().nth(row).unwrap()).unwrap();
    let parse = |c: &str| -> Vec<u64> { c.split(',').filter(|t| !t.is_empty()).map(|t| t.parse().unwrap()).collect() };
    candidates
        .iter()
        .map(|c| {
            let want = serde_json::json!(parse(c));
            let hit = v["top"].as_array().unwrap().iter().find(|x| x["label_ids"] == want).unwrap();
            hit["score"].as_f64().unwrap()
        })
        .collect()
}

#[test]
fn inline_and_pool_rankings_match_the_global_decoder() {
    let dir = Dir::new();
    let model = fit_toy(&dir);
    let train = dir.path("train.arff");
    let file =
        dir.write("q.txt", "okr-candidates 1 inline\n# two queries\nquery a 0\n0\n*1\n0 1\nquery b 4\n-\n*0 1\n1\n");
    let (text, stderr) = run(&["rank", "-m", p(&model), "-i", p(&train), "--candidates-per-query", p(&file)]);
    let rows = table(&text);
    assert_eq!(rows.len(), 6);
    let mut true_ranks = Vec::new();
    for (query, test_row, cands, truth) in [("a", 0, ["0", "1", "0,1"], 1), ("b", 4, ["", "0,1", "1"], 1)] {
        let scores = oracle(&dir, &model, &cands, test_row);
        let ranked: Vec<_> = rows.iter().filter(|r| r.0 == query).collect();
        assert_eq!(ranked.iter().map(|r| r.1).collect::<Vec<_>>(), [1, 2, 3]);
        // Lower decoding score first; ties by position in the list.
        let mut order: Vec<usize> = (0..3).collect();
        order.sort_by(|&i, &j| scores[i].total_cmp(&scores[j]).then(i.cmp(&j)));
        assert_eq!(ranked.iter().map(|r| r.2).collect::<Vec<_>>(), order, "{query}: {scores:?}");
        for r in &ranked {
            let want = scores[r.2];
            assert!((r.3 - want).abs() <= 1e-12 * (1.0 + want.abs()), "{query}: {} vs {want}", r.3);
        }
        let true_rank = 1 + order.iter().position(|&c| c == truth).unwrap();
        assert!(ranked.iter().all(|r| r.4 == true_rank.to_string() && r.5 == true_rank.to_string()));
        true_ranks.push(true_rank);
    }
    assert!(stderr.contains("2 queries, 2 with a true candidate"), "{stderr}");
    // The summary as JSON: brute force over the oracle's true ranks.
    let summary = dir.path("s.json");
    run(&["rank", "-m", p(&model), "-i", p(&train), "--candidates-per-query", p(&file), "--summary", p(&summary)]);
    let s: Value = serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
    let top1 = true_ranks.iter().filter(|&&r| r == 1).count() as f64 / 2.0;
    let mean = true_ranks.iter().sum::<usize>() as f64 / 2.0;
    for side in ["optimistic", "pessimistic"] {
        assert_eq!(s[side]["top_1"].as_f64(), Some(top1), "{s}");
        assert_eq!(s[side]["top_5"].as_f64(), Some(1.0), "{s}");
        assert_eq!(s[side]["mean_rank"].as_f64(), Some(mean), "{s}");
        assert_eq!(s[side]["median_rank"].as_f64(), Some(mean), "{s}");
    }
    assert_eq!((s["n_queries"].as_u64(), s["n_with_truth"].as_u64()), (Some(2), Some(2)));

    // Pool mode, --top-k, -o: the same scores for the same candidates.
    let pool = dir.write("pool.txt", "0\n1\n0 1\n-\n");
    let file = dir.write("qp.txt", "okr-candidates 1 pool\nquery a 0\n0 *1 2\nquery c 2\n3 2\n");
    let out = dir.path("ranked.csv");
    let args = ["rank", "-m", p(&model), "-i", p(&train), "--candidates-per-query", p(&file), "--pool", p(&pool)];
    run(&[&args[..], &["--top-k", "2", "-o", p(&out)]].concat());
    let pooled = table(&std::fs::read_to_string(&out).unwrap());
    assert_eq!(pooled.iter().filter(|r| r.0 == "a").count(), 2, "top-k 2");
    let inline_a: Vec<_> = rows.iter().filter(|r| r.0 == "a").take(2).map(|r| (r.2, r.3)).collect();
    let pool_a: Vec<_> = pooled.iter().filter(|r| r.0 == "a").map(|r| (r.2, r.3)).collect();
    assert_eq!(pool_a, inline_a, "pool indices 0, 1, 2 are the inline list of query a");
    let c: Vec<_> = pooled.iter().filter(|r| r.0 == "c").collect();
    assert!(c.iter().all(|r| r.4.is_empty() && r.5.is_empty()), "no true candidate marked");
    assert_eq!(c.len(), 2);
}

#[test]
fn ties_are_counted_both_ways() {
    let dir = Dir::new();
    let model = fit_toy(&dir);
    let train = dir.path("train.arff");
    // The same candidate twice: the true one (second) ties with the first.
    let file = dir.write("t.txt", "okr-candidates 1 inline\nquery a 0\n1\n*1\n0 1\n0\n");
    let (text, _) = run(&["rank", "-m", p(&model), "-i", p(&train), "--candidates-per-query", p(&file)]);
    let rows = table(&text);
    let pos = |c: usize| rows.iter().position(|r| r.2 == c).unwrap();
    assert_eq!(pos(1), pos(0) + 1, "ties: lowest position first");
    assert_eq!(rows[pos(0)].3, rows[pos(1)].3, "identical candidates score exactly the same");
    let (opt, pes): (usize, usize) = (rows[0].4.parse().unwrap(), rows[0].5.parse().unwrap());
    assert_eq!((opt + 1, pes), (pos(1) + 1, pos(1) + 1));
}

#[test]
fn rank_errors_are_one_line() {
    let dir = Dir::new();
    let model = fit_toy(&dir);
    let train = dir.path("train.arff");
    let base = |file: &std::path::Path, extra: &[&str]| {
        let mut a = vec!["rank", "-m", p(&model), "-i", p(&train), "--candidates-per-query", p(file)];
        a.extend_from_slice(extra);
        okr(&a)
    };
    let empty = dir.write("e.txt", "okr-candidates 1 inline\nquery lonely 0\nquery b 1\n1\n");
    assert_one_line_error(&base(&empty, &[]), &["lonely"]);
    let pooled = dir.write("p.txt", "okr-candidates 1 pool\nquery a 0\n0\n");
    assert_one_line_error(&base(&pooled, &[]), &["pool mode", "--pool"]);
    let inline = dir.write("i.txt", "okr-candidates 1 inline\nquery a 0\n0\n");
    assert_one_line_error(&base(&inline, &["--pool", p(&inline)]), &["--pool does not apply"]);
    let far = dir.write("f.txt", "okr-candidates 1 inline\nquery a 99\n0\n");
    assert_one_line_error(&base(&far, &[]), &["test row 99 out of range"]);
    assert_one_line_error(&base(&inline, &["--top-k", "0"]), &["--top-k", "at least 1"]);
    let wide = dir.write("w.txt", "okr-candidates 1 inline\nquery a 0\n5\n");
    assert_one_line_error(&base(&wide, &[]), &["w.txt"]);
    let bad = dir.write("b.txt", "okr-candidates 2 inline\n");
    assert_one_line_error(&base(&bad, &[]), &["b.txt", "okr-candidates 1"]);
    assert_one_line_error(&base(&inline, &["-o", p(&inline)]), &["candidate file"]);
}
