"""Per-row candidate sets (``rank_candidates``), checked against brute force:
every candidate of the pool scored by ``predict_topk`` over the pool's own
model decode, rankings restricted to each row's group, true-candidate ranks
counted from the scores with ties both ways, and the retrieval summary
recomputed with numpy."""

import numpy as np
import pytest

import okr


def _data(seed=0, n=90, d=5, l=6):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    Y = (X @ rng.normal(size=(d, l)) + 0.4 * rng.normal(size=(n, l)) > 0.2).astype(np.int64)
    return X, Y


MAKERS = [
    lambda: okr.IOKR(lam=1e-2, gamma=0.2, output_gamma=0.3),
    lambda: okr.NystroemKRR(n_components=30, lam=1e-2, gamma=0.2, output_gamma=0.3, random_state=0),
    lambda: okr.SISOKR(input_sketch="uniform:40", output_sketch="gaussian:6", lam=1e-2, random_state=0),
    lambda: okr.NystroemReducedRankIOKR(n_components=30, subset_size=40, rank=3, random_state=0),
]


def _pool_scores(model, Xt, pool):
    """Brute force: the score of every pool row for every test row, by
    refitting nothing: decode against the pool with groups = the whole pool."""
    full = model.rank_candidates(Xt, pool)
    out = np.empty((len(Xt), len(pool)))
    for q in range(len(Xt)):
        out[q, full.indices[q]] = full.scores[q]
    return out


@pytest.mark.parametrize("make", MAKERS)
def test_whole_pool_ranking_equals_predict_topk_over_the_training_outputs(make):
    X, Y = _data()
    Xt = _data(seed=1)[0][:25]
    model = make().fit(X, Y)
    pool = model.candidates_
    out, scores = model.predict_topk(Xt, k=len(pool), return_scores=True)
    ranked = model.rank_candidates(Xt, pool)
    assert len(ranked) == len(Xt) and ranked.true_rank is None
    for q in range(len(Xt)):
        np.testing.assert_array_equal(pool[ranked.indices[q]], out[q])
        np.testing.assert_allclose(ranked.scores[q], scores[q], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("make", MAKERS)
def test_groups_rank_their_own_candidates_with_true_ranks_counted_both_ways(make):
    X, Y = _data(seed=2)
    Xt, Yt = _data(seed=3)
    Xt, Yt = Xt[:30], Yt[:30]
    model = make().fit(X, Y)
    rng = np.random.default_rng(7)
    # The pool: the test outputs, then distractors; duplicates make ties.
    pool = np.vstack([Yt, rng.integers(0, 2, size=(40, Y.shape[1])), Yt[:5]])
    every = _pool_scores(model, Xt, pool)
    groups, truth = [], []
    for q in range(len(Xt)):
        g = rng.choice(np.arange(30, len(pool)), size=int(rng.integers(1, 20)), replace=False)
        g = np.concatenate([g, [q]])
        rng.shuffle(g)
        groups.append(g)
        truth.append(q)
    truth[3] = -1  # a row without a known truth
    ranked = model.rank_candidates(Xt, pool, groups, true_candidates=truth, k=None)
    for q, g in enumerate(groups):
        s = every[q, g]
        order = np.argsort(s, kind="stable")  # ties: the earlier group member first
        np.testing.assert_array_equal(ranked.indices[q], g[order])
        np.testing.assert_allclose(ranked.scores[q], s[order], rtol=1e-10, atol=1e-12)
        if truth[q] < 0:
            assert tuple(ranked.true_rank[q]) == (-1, -1)
            continue
        st = every[q, truth[q]]
        assert ranked.true_rank[q, 0] == 1 + np.sum(s < st)
        assert ranked.true_rank[q, 1] == np.sum(s <= st)
    # top-k keeps the best k of each group.
    top = model.rank_candidates(Xt, pool, groups, true_candidates=truth, k=2)
    for q in range(len(Xt)):
        np.testing.assert_array_equal(top.indices[q], ranked.indices[q][:2])
    np.testing.assert_array_equal(top.true_rank, ranked.true_rank)
    # The summary, recomputed.
    m = ranked.metrics()
    known = ranked.true_rank[ranked.true_rank[:, 0] >= 1]
    assert m["n_queries"] == len(known) == len(Xt) - 1
    for j, name in enumerate(["optimistic", "pessimistic"]):
        r = known[:, j]
        for k in (1, 5, 10, 20):
            assert m[name][f"top_{k}"] == pytest.approx(np.mean(r <= k))
        assert m[name]["mean_rank"] == pytest.approx(r.mean())
        assert m[name]["median_rank"] == pytest.approx(np.median(r))


def test_vector_and_class_outputs():
    X, Y = _data(seed=4)
    Xt = _data(seed=5)[0][:12]
    V = Y + np.linspace(0.1, 0.5, Y.shape[1])
    model = okr.IOKR(lam=1e-2).fit(X, V)
    ranked = model.rank_candidates(Xt, V[:20], [np.arange(5), np.arange(3, 20)] * 6, true_candidates=[4] * 12)
    assert [len(i) for i in ranked.indices] == [5, 17] * 6
    out, scores = model.predict_topk(Xt, k=len(model.candidates_), return_scores=True)
    whole = model.rank_candidates(Xt, model.candidates_, k=3)
    np.testing.assert_allclose(np.vstack(whole.scores), scores[:, :3], rtol=1e-12, atol=1e-12)
    y = np.digitize(X[:, 0], [-0.5, 0.5])
    clf = okr.IOKR(lam=1e-2).fit(X, y)
    ranked = clf.rank_candidates(Xt, np.array([2, 0, 1]), true_candidates=[0] * 12)
    np.testing.assert_array_equal(
        np.array([clf.classes_.tolist().index(c) for c in [2, 0, 1]])[np.vstack(ranked.indices)[:, 0]],
        np.searchsorted(clf.classes_, clf.predict(Xt)),
    )


def test_bad_inputs_raise_one_clear_error():
    X, Y = _data(seed=6)
    Xt = _data(seed=7)[0][:4]
    model = okr.IOKR(lam=1e-2).fit(X, Y)
    pool = model.candidates_[:10]
    with pytest.raises(ValueError, match="query 1 has no candidates|query 1"):
        model.rank_candidates(Xt, pool, [[0], [], [1], [2]])
    with pytest.raises(ValueError, match="pool index 10 out of range"):
        model.rank_candidates(Xt, pool, [[0], [10], [1], [2]])
    with pytest.raises(ValueError, match="true candidate 5 is not among its candidates"):
        model.rank_candidates(Xt, pool, [[0], [1], [2], [3]], true_candidates=[0, 1, 5, 3])
    with pytest.raises(ValueError, match="3 candidate groups for 4 rows"):
        model.rank_candidates(Xt, pool, [[0], [1], [2]])
    with pytest.raises(ValueError, match="candidates have 3 columns"):
        model.rank_candidates(Xt, pool[:, :3])
    with pytest.raises(ValueError, match="negative value"):
        model.rank_candidates(Xt, pool, [[0], [-1], [1], [2]])
    with pytest.raises(ValueError, match="invalid k"):
        model.rank_candidates(Xt, pool, k=0)
    with pytest.raises(ValueError, match="no true candidates"):
        model.rank_candidates(Xt, pool).metrics()
