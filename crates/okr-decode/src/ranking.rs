//! Ranking and SELF decoders for the trace-norm surrogate (spec 2.2-2.3).
//!
//! - [`best_order`]: the minimum weighted feedback arc set / linear ordering
//!   problem. Given an antisymmetric preference matrix `pref` (`m x m`,
//!   row-major, `pref[a * m + b]` = evidence that `b` ranks **above** `a`),
//!   find the order (least to most relevant) maximizing
//!   $\sum_{a \text{ before } b} \mathrm{pref}_{ab}$. With edge weights
//!   $w(a\to b) = \max(\mathrm{pref}_{ab}, 0)$ this is exactly "remove a minimum
//!   weight feedback arc set, then sort topologically". Exact dynamic
//!   programming over subsets for `m <= 18` ($O(2^m m^2)$), otherwise the
//!   weighted Eades-Lin-Smyth heuristic and the net-score (Borda) order, each
//!   improved by insertion local search, the better one kept.
//! - [`kendall_embedding`] / [`decode_kendall`]: label ranking with the Kendall
//!   embedding $\phi(\sigma)_{ab} = \operatorname{sign}(\sigma_a - \sigma_b)$, $a < b$.
//! - [`decode_hamming`]: multi-label decoding under the Hamming loss,
//!   $\hat y_l = 1 \iff \sum_i \alpha_i (2y_{il} - 1) > 0$.
// Index loops mirror the matrix formulas (pairs a < b, entries (i, j)).
#![allow(clippy::needless_range_loop)]

use okr_kernels::LabelSets;

/// Largest number of items solved exactly by [`best_order`].
pub const EXACT_MAX_ITEMS: usize = 18;

/// The agreement $\sum_{i<j} \mathrm{pref}\[o_i\]\[o_j\]$ of an order `o` (least to most relevant).
///
/// # Example
/// ```
/// use okr_decode::ranking::order_agreement;
/// // Item 1 above item 0 with weight 2.
/// let pref = [0.0, 2.0, -2.0, 0.0];
/// assert_eq!(order_agreement(&pref, &[0, 1]), 2.0);
/// assert_eq!(order_agreement(&pref, &[1, 0]), -2.0);
/// ```
pub fn order_agreement(pref: &[f64], order: &[usize]) -> f64 {
    let m = order.len();
    let mut s = 0.0;
    for i in 0..m {
        for j in i + 1..m {
            s += pref[order[i] * m + order[j]];
        }
    }
    s
}

/// Exact maximum-agreement order by dynamic programming over subsets
/// ($f(S \cup v) = f(S) + \sum_{u\in S}\mathrm{pref}_{uv}$, $v$ placed above all of $S$).
/// Ties go to the lowest item index first.
///
/// # Panics
/// If `pref.len() != m * m` or `m > 24` (memory $2^m$).
///
/// # Example
/// ```
/// use okr_decode::ranking::exact_order;
/// // Scores mu = [3, 1, 2]: pref_ab = mu_b - mu_a.
/// let mu = [3.0, 1.0, 2.0];
/// let pref: Vec<f64> = (0..9).map(|k| mu[k % 3] - mu[k / 3]).collect();
/// assert_eq!(exact_order(&pref, 3), vec![1, 2, 0]);
/// ```
#[track_caller]
pub fn exact_order(pref: &[f64], m: usize) -> Vec<usize> {
    assert_eq!(pref.len(), m * m, "preference matrix shape");
    assert!(m <= 24, "exact order limited to 24 items");
    if m == 0 {
        return Vec::new();
    }
    let full = 1usize << m;
    let mut best = vec![f64::NEG_INFINITY; full];
    let mut choice = vec![u8::MAX; full];
    best[0] = 0.0;
    for s in 0..full {
        let f = best[s];
        if f == f64::NEG_INFINITY {
            continue;
        }
        for v in 0..m {
            if s & (1 << v) != 0 {
                continue;
            }
            // v goes above everything in s.
            let mut gain = 0.0;
            let mut rest = s;
            while rest != 0 {
                let u = rest.trailing_zeros() as usize;
                gain += pref[u * m + v];
                rest &= rest - 1;
            }
            let t = s | (1 << v);
            if f + gain > best[t] {
                best[t] = f + gain;
                choice[t] = v as u8;
            }
        }
    }
    let mut order = Vec::with_capacity(m);
    let mut s = full - 1;
    while s != 0 {
        let v = choice[s] as usize;
        order.push(v);
        s &= !(1 << v);
    }
    order.reverse();
    order
}

/// Weighted Eades-Lin-Smyth: repeatedly move sinks (no remaining outgoing
/// weight) to the top end, sources to the bottom end, otherwise the vertex
/// with the largest out-minus-in weight to the bottom end.
///
/// # Panics
/// If `pref.len() != m * m`.
#[track_caller]
pub fn eades_lin_smyth(pref: &[f64], m: usize) -> Vec<usize> {
    assert_eq!(pref.len(), m * m, "preference matrix shape");
    let w = |a: usize, b: usize| pref[a * m + b].max(0.0); // edge a -> b: a below b
    let mut alive = vec![true; m];
    let mut out_w = vec![0.0; m];
    let mut in_w = vec![0.0; m];
    for a in 0..m {
        for b in 0..m {
            if a != b {
                out_w[a] += w(a, b);
                in_w[b] += w(a, b);
            }
        }
    }
    let (mut bottom, mut top) = (Vec::with_capacity(m), Vec::with_capacity(m));
    let remove = |v: usize, alive: &mut Vec<bool>, out_w: &mut Vec<f64>, in_w: &mut Vec<f64>| {
        alive[v] = false;
        for u in 0..m {
            if alive[u] {
                out_w[u] -= w(u, v);
                in_w[u] -= w(v, u);
            }
        }
    };
    let eps = |x: f64| x <= 1e-12;
    for _ in 0..m {
        let live = || (0..m).filter(|&v| alive[v]);
        let pick = if let Some(v) = live().find(|&v| eps(out_w[v])) {
            top.push(v);
            v
        } else if let Some(v) = live().find(|&v| eps(in_w[v])) {
            bottom.push(v);
            v
        } else {
            let v = live()
                .max_by(|&a, &b| (out_w[a] - in_w[a]).total_cmp(&(out_w[b] - in_w[b])).then(b.cmp(&a)))
                .expect("a live vertex");
            bottom.push(v);
            v
        };
        remove(pick, &mut alive, &mut out_w, &mut in_w);
    }
    top.reverse();
    bottom.extend(top);
    bottom
}

/// Insertion local search: move single items to their best position until
/// no move improves the agreement (at most `max_passes` passes). Each pass
/// costs $O(m^2)$.
pub fn insertion_local_search(pref: &[f64], order: &mut Vec<usize>, max_passes: usize) {
    let m = order.len();
    for _ in 0..max_passes {
        let mut improved = false;
        for i in 0..m {
            let v = order.remove(i);
            // Contribution of v inserted at position q of the remaining list.
            let mut val: f64 = order.iter().map(|&u| pref[v * m + u]).sum();
            let (mut best_q, mut best_val) = (0, val);
            let mut cur_at_i = f64::NAN;
            for q in 0..=order.len() {
                if q > 0 {
                    let u = order[q - 1];
                    val += pref[u * m + v] - pref[v * m + u];
                }
                if q == i {
                    cur_at_i = val;
                }
                if val > best_val + 1e-12 {
                    best_val = val;
                    best_q = q;
                }
            }
            if best_val > cur_at_i + 1e-12 {
                order.insert(best_q, v);
                improved = true;
            } else {
                order.insert(i, v);
            }
        }
        if !improved {
            break;
        }
    }
}

/// The order by net score $s_a = \sum_b (\mathrm{pref}_{ba} - \mathrm{pref}_{ab})$, ascending
/// (optimal when $\mathrm{pref}_{ab} = \mu_b - \mu_a$).
pub fn net_score_order(pref: &[f64], m: usize) -> Vec<usize> {
    let score: Vec<f64> = (0..m).map(|a| (0..m).map(|b| pref[b * m + a] - pref[a * m + b]).sum()).collect();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| score[a].total_cmp(&score[b]).then(a.cmp(&b)));
    order
}

/// The heuristic order for any `m`: Eades-Lin-Smyth and net-score starts,
/// each followed by insertion local search; the one with the larger agreement.
pub fn heuristic_order(pref: &[f64], m: usize) -> Vec<usize> {
    let mut a = eades_lin_smyth(pref, m);
    insertion_local_search(pref, &mut a, 50);
    let mut b = net_score_order(pref, m);
    insertion_local_search(pref, &mut b, 50);
    if order_agreement(pref, &b) > order_agreement(pref, &a) + 1e-12 { b } else { a }
}

/// The maximum-agreement order (least to most relevant): exact up to
/// [`EXACT_MAX_ITEMS`] items, [`heuristic_order`] beyond. Returns the order
/// and whether it is exact.
///
/// # Panics
/// If `pref.len() != m * m`.
///
/// # Example
/// ```
/// use okr_decode::ranking::best_order;
/// let mu = [0.5, 2.0, -1.0, 1.0];
/// let pref: Vec<f64> = (0..16).map(|k| mu[k % 4] - mu[k / 4]).collect();
/// assert_eq!(best_order(&pref, 4), (vec![2, 0, 3, 1], true));
/// ```
#[track_caller]
pub fn best_order(pref: &[f64], m: usize) -> (Vec<usize>, bool) {
    if m <= EXACT_MAX_ITEMS { (exact_order(pref, m), true) } else { (heuristic_order(pref, m), false) }
}

/// Number of pair coordinates of the Kendall embedding of `k` labels: $k(k-1)/2$.
pub fn n_pairs(k: usize) -> usize {
    k * k.saturating_sub(1) / 2
}

/// The Kendall embedding $\phi(\sigma)_{ab} = \operatorname{sign}(\sigma_a - \sigma_b)$
/// over pairs $a < b$ in lexicographic order; `ranks[a]` is the rank of label `a`
/// (1 = preferred). $\langle\phi(\sigma),\phi(\sigma')\rangle$ is the Kendall kernel
/// and the Kendall distance is $(k(k-1)/2 - \langle\phi,\phi'\rangle)/2$.
///
/// # Example
/// ```
/// use okr_decode::ranking::kendall_embedding;
/// assert_eq!(kendall_embedding(&[2, 1, 3]), vec![1.0, -1.0, -1.0]);
/// ```
pub fn kendall_embedding(ranks: &[usize]) -> Vec<f64> {
    let k = ranks.len();
    let mut e = Vec::with_capacity(n_pairs(k));
    for a in 0..k {
        for b in a + 1..k {
            e.push(match ranks[a].cmp(&ranks[b]) {
                std::cmp::Ordering::Greater => 1.0,
                std::cmp::Ordering::Less => -1.0,
                std::cmp::Ordering::Equal => 0.0,
            });
        }
    }
    e
}

/// Decodes a predicted Kendall embedding $g \in \mathbb R^{k(k-1)/2}$ (for example
/// $\sum_i \alpha_i(x)\phi(\sigma_i)$) into ranks: $\arg\max_\sigma\langle\phi(\sigma), g\rangle$,
/// solved as a linear ordering problem by [`best_order`]. Returns `ranks[a]` in `1..=k`.
///
/// # Panics
/// If `g.len()` is not $k(k-1)/2$.
///
/// # Example
/// ```
/// use okr_decode::ranking::{decode_kendall, kendall_embedding};
/// let sigma = [3, 1, 4, 2];
/// assert_eq!(decode_kendall(&kendall_embedding(&sigma), 4), sigma.to_vec());
/// ```
#[track_caller]
pub fn decode_kendall(g: &[f64], k: usize) -> Vec<usize> {
    assert_eq!(g.len(), n_pairs(k), "Kendall embedding length");
    // Order = ranks ascending (position p has rank p + 1). Placing a before b (a < b)
    // gives sign(sigma_a - sigma_b) = -1, i.e. agreement -g_ab.
    let mut pref = vec![0.0; k * k];
    let mut t = 0;
    for a in 0..k {
        for b in a + 1..k {
            pref[a * k + b] = -g[t];
            pref[b * k + a] = g[t];
            t += 1;
        }
    }
    let (order, _) = best_order(&pref, k);
    let mut ranks = vec![0; k];
    for (p, &a) in order.iter().enumerate() {
        ranks[a] = p + 1;
    }
    ranks
}

/// Multi-label Hamming decoding from SELF weights: label $l$ is on iff
/// $\sum_i \alpha_i (2y_{il} - 1) > 0$, i.e. $2\sum_{i: l\in y_i}\alpha_i > \sum_i\alpha_i$.
///
/// # Panics
/// If `alpha.len() != y_train.n_rows()`.
///
/// # Example
/// ```
/// use okr_decode::ranking::decode_hamming;
/// use okr_kernels::LabelSets;
/// let y = LabelSets::new(3, vec![vec![0, 1], vec![1], vec![2]])?;
/// assert_eq!(decode_hamming(&[0.6, 0.3, 0.1], &y), vec![0, 1]);
/// Ok::<(), okr_kernels::Error>(())
/// ```
#[track_caller]
pub fn decode_hamming(alpha: &[f64], y_train: &LabelSets) -> Vec<usize> {
    assert_eq!(alpha.len(), okr_kernels::Rows::n_rows(y_train), "alpha length");
    let total: f64 = alpha.iter().sum();
    let mut on = vec![0.0; y_train.n_labels()];
    for (i, &a) in alpha.iter().enumerate() {
        for &l in y_train.set(i) {
            on[l] += a;
        }
    }
    (0..y_train.n_labels()).filter(|&l| 2.0 * on[l] - total > 0.0).collect()
}
