"""``okr.SearchCV(scoring="top5" | ...)``: model selection by the rank of
each training row's true candidate among its own candidate set. The same
grid scores and choice as ``okr tune --scoring ... --candidates-per-query``
on the same rows and folds (inline and pool files, grouped folds too), and
every fold score recomputed by a brute-force loop over refitted estimators
with the pessimistic rank counted here."""

import json

import numpy as np
import pytest

import okr
from test_recipes import _csv, _run

N_LABELS = 5
LAMBDAS, WIDTHS = [1e-3, 1e-2, 1e-1], [0.5, 2.0]
# A fixed output width: the brute force refits on a fold's rows, and the
# default width would be resolved from those rows instead of all of them.
OUTPUT_GAMMA = 0.5
N_DECOYS, NOISE = 15, 1.0


def _molecules(n_mol=20, per=3, seed=0):
    """Spectra-like data: ``per`` noisy rows of each of ``n_mol`` structures
    (one label set each), a pool of every label set over ``N_LABELS`` bits,
    and per row N_DECOYS + 1 pool candidates including its own structure."""
    rng = np.random.default_rng(seed)
    pool = np.array([[(i >> b) & 1 for b in range(N_LABELS)] for i in range(2**N_LABELS)], dtype=np.int64)
    mol = rng.choice(np.arange(1, 2**N_LABELS), size=n_mol, replace=False)
    centers = pool[mol] * 2.0 - 1.0 + 0.3 * rng.normal(size=(n_mol, N_LABELS))
    groups = np.repeat(np.arange(n_mol), per)
    X = centers[groups] + NOISE * rng.normal(size=(n_mol * per, N_LABELS))
    Y = pool[mol[groups]]
    cand = []
    for q, g in enumerate(groups):
        others = rng.choice(np.setdiff1d(np.arange(2**N_LABELS), [mol[g]]), size=N_DECOYS, replace=False)
        rows = np.concatenate([others, [mol[g]]])
        rng.shuffle(rows)
        cand.append(rows)
    # Row 1 is no query, row 2 has no marked truth: neither is scored.
    cand[1] = None
    return X, Y, groups, pool, cand, mol[groups]


def _candidate_file(path, pool, cand, truth, inline):
    lines = [f"okr-candidates 1 {'inline' if inline else 'pool'}"]
    for q, rows in enumerate(cand):
        if rows is None:
            continue
        lines.append(f"query s{q} {q}")
        for r in rows:
            mark = "*" if r == truth[q] else ""
            if inline:
                bits = " ".join(str(b) for b in np.flatnonzero(pool[r])) or "-"
                lines.append(mark + bits)
            else:
                lines.append(mark + str(r))
    path.write_text("\n".join(lines) + "\n")
    return path


def _search(scoring, groups, inline, X, Y, pool, cand, truth):
    est = okr.IOKR(output_gamma=OUTPUT_GAMMA)
    search = okr.SearchCV(est, cv=3, lambdas=LAMBDAS, widths=WIDTHS, scoring=scoring)
    if inline:
        cands = [None if c is None else pool[c] for c in cand]
        marks = [-1 if c is None else int(np.flatnonzero(c == truth[q])[0]) for q, c in enumerate(cand)]
        marks[2] = -1
        return search.fit(X, Y, groups, candidates=cands, true_candidates=marks)
    marks = np.array(truth)
    marks[2] = -1
    return search.fit(X, Y, groups, candidates=pool, candidate_groups=cand, true_candidates=marks)


@pytest.mark.parametrize(
    "scoring,grouped,inline",
    [("top5", True, False), ("top5", False, True), ("top1", True, True), ("mean-rank", False, False)],
    ids=["top5-grouped-pool", "top5-inline", "top1-grouped-inline", "mean-rank-pool"],
)
def test_retrieval_search_equals_okr_tune(tmp_path, scoring, grouped, inline):
    X, Y, groups, pool, cand, truth = _molecules()
    search = _search(scoring, groups if grouped else None, inline, X, Y, pool, cand, truth)
    train = _csv(tmp_path / "train.csv", X, Y)
    cli_truth = np.array(truth)
    cli_truth[2] = -1
    queries = _candidate_file(tmp_path / "q.txt", pool, cand, cli_truth, inline)
    flags = []
    if not inline:
        (tmp_path / "pool.txt").write_text("\n".join(" ".join(map(str, np.flatnonzero(p))) or "-" for p in pool) + "\n")
        flags += ["--pool", tmp_path / "pool.txt"]
    if grouped:
        (tmp_path / "g.txt").write_text("\n".join(f"mol{g}" for g in groups) + "\n")
        flags += ["--groups", tmp_path / "g.txt"]
    out = _run(
        "tune", "--train", train, "--label-count", N_LABELS, "--no-standardize", "--cv", 3,
        "--output-gamma", OUTPUT_GAMMA, "--lambdas", ",".join(map(str, LAMBDAS)),
        "--widths", ",".join(map(str, WIDTHS)), "--scoring", scoring,
        "--candidates-per-query", queries, *flags, "--json", "-m", tmp_path / "m.okr",
    )
    cli = json.loads(out)
    cells = cli["grid"]["cells"]
    assert len(search.cv_results_["params"]) == len(cells) == 6
    np.testing.assert_allclose(search.cv_results_["mean_test_score"], [c["mean"] for c in cells], rtol=0, atol=1e-10)
    for i in range(3):
        np.testing.assert_allclose(
            search.cv_results_[f"split{i}_test_score"], [c["fold_scores"][i] for c in cells], rtol=0, atol=1e-10
        )
    assert search.best_params_["lam"] == cli["chosen"]["lambda"]
    assert search.best_params_["gamma"] == pytest.approx(cli["chosen"]["gamma"], rel=1e-12)
    assert search.best_score_ == pytest.approx(cli["chosen"]["mean"], abs=1e-10)
    assert "candidate" in search.criterion_
    # The scores are not all equal: the grid chooses something.
    assert np.ptp(search.cv_results_["mean_test_score"]) > 0


@pytest.mark.parametrize("scoring", ["top5", "top1", "mean-rank"])
@pytest.mark.parametrize("grouped", [True, False], ids=["grouped", "kfold"])
def test_retrieval_scores_equal_a_brute_force_loop(scoring, grouped):
    X, Y, groups, pool, cand, truth = _molecules(seed=1)
    g = groups if grouped else None
    search = _search(scoring, g, False, X, Y, pool, cand, truth)
    folds = list(search.split(X, groups=g))
    assert len(folds) == search.n_splits_ == 3
    if grouped:  # every structure in one fold
        for _, va in folds:
            assert not set(groups[va]) & set(np.setdiff1d(groups, groups[va]))
    for i, p in enumerate(search.cv_results_["params"]):
        for f, (tr, va) in enumerate(folds):
            est = okr.IOKR(gamma=p["gamma"], lam=p["lam"], output_gamma=OUTPUT_GAMMA).fit(X[tr], Y[tr])
            # Scored queries: rows with candidates and a marked truth (row 2 has none).
            rows = [q for q in va if cand[q] is not None and q != 2]
            ranked = est.rank_candidates(X[rows], pool, [cand[q] for q in rows])
            ranks = []
            for j, q in enumerate(rows):
                s = ranked.scores[j]
                s_true = s[list(ranked.indices[j]).index(truth[q])]
                ranks.append(int(np.sum(s <= s_true)))  # ties count against the truth
            ranks = np.array(ranks)
            want = -ranks.mean() if scoring == "mean-rank" else np.mean(ranks <= int(scoring[3:]))
            got = search.cv_results_[f"split{f}_test_score"][i]
            assert got == pytest.approx(want, abs=1e-10), (p, f)


def test_true_candidates_default_to_the_candidate_equal_to_y():
    X, Y, groups, pool, cand, truth = _molecules(seed=2)
    est = okr.IOKR(output_gamma=OUTPUT_GAMMA)
    kw = dict(cv=3, lambdas=LAMBDAS, widths=WIDTHS, scoring="top5")
    inferred = okr.SearchCV(est, **kw).fit(X, Y, groups, candidates=pool, candidate_groups=cand)
    marked = okr.SearchCV(est, **kw).fit(X, Y, groups, candidates=pool, candidate_groups=cand, true_candidates=truth)
    np.testing.assert_array_equal(inferred.cv_results_["mean_test_score"], marked.cv_results_["mean_test_score"])
    inline = okr.SearchCV(est, **kw).fit(X, Y, groups, candidates=[None if c is None else pool[c] for c in cand])
    np.testing.assert_array_equal(inline.cv_results_["mean_test_score"], marked.cv_results_["mean_test_score"])
    # The refitted estimator is the choice, fitted on every row.
    assert inferred.best_estimator_.lam == inferred.best_params_["lam"]


def test_retrieval_errors_are_clear():
    X, Y, groups, pool, cand, truth = _molecules(seed=3)
    est = okr.IOKR(output_gamma=OUTPUT_GAMMA)
    with pytest.raises(ValueError, match=r"ranks per-query candidate sets: give them to fit\(X, y, candidates=...\)"):
        okr.SearchCV(est, cv=3, lambdas=LAMBDAS, widths=WIDTHS, scoring="top5").fit(X, Y)
    with pytest.raises(ValueError, match="invalid scoring"):
        okr.SearchCV(est, cv=3, scoring="top0").fit(X, Y, candidates=pool)
    with pytest.raises(ValueError, match="candidates apply to a retrieval scoring"):
        okr.SearchCV(est, cv=3, lambdas=LAMBDAS, widths=WIDTHS).fit(X, Y, candidates=pool)
    with pytest.raises(ValueError, match="give a fold count"):
        okr.SearchCV(est, cv="loo", lambdas=LAMBDAS, widths=WIDTHS, scoring="top1").fit(X, Y, candidates=pool)
    with pytest.raises(ValueError, match="not among row 0's candidate"):
        bad = np.array(truth)
        bad[0] = next(r for r in range(len(pool)) if r not in cand[0])
        okr.SearchCV(est, cv=3, scoring="top1").fit(X, Y, candidates=pool, candidate_groups=cand, true_candidates=bad)
    with pytest.raises(ValueError, match="candidates have 4 columns"):
        okr.SearchCV(est, cv=3, scoring="top1").fit(X, Y, candidates=pool[:, :4])


def test_retrieval_search_on_a_precomputed_gram_equals_the_features_at_its_width():
    X, Y, groups, pool, cand, truth = _molecules(seed=4)
    kw = dict(cv=3, lambdas=LAMBDAS, scoring="top5")
    feats = okr.SearchCV(okr.IOKR(output_gamma=OUTPUT_GAMMA), widths=[1.0], **kw)
    feats.fit(X, Y, groups, candidates=pool, candidate_groups=cand)
    gamma = feats.cv_results_["param_gamma"][0]
    K = np.exp(-gamma * ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    gram = okr.SearchCV(okr.IOKR(kernel="precomputed", output_gamma=OUTPUT_GAMMA), **kw)
    gram.fit(K, Y, groups, candidates=pool, candidate_groups=cand)
    assert "precomputed Gram" in gram.criterion_
    np.testing.assert_allclose(
        gram.cv_results_["mean_test_score"], feats.cv_results_["mean_test_score"], rtol=0, atol=1e-10
    )
    assert gram.best_params_["lam"] == feats.best_params_["lam"]
    assert [list(v) for _, v in gram.split(K, groups=groups)] == [list(v) for _, v in feats.split(X, groups=groups)]
