//! Metrics of graph and ranking outputs (`okr eval` on models fitted with
//! `--output-kind graph | ranking`).
//!
//! - Graphs: top-1 exact match, $\frac1n \sum_i [\hat G_i = G_i]$ (same node
//!   labels in the same order, same edges; edge labels are ignored, as the WL
//!   kernel ignores them), beside the output-kernel loss
//!   ([`output_kernel_losses`](crate::output_kernel_losses)), which for the
//!   normalized WL kernel is the normalized RBF loss $2 - 2k(\hat G, G)$.
//! - Rankings: Kendall's tau $1 - 2 n_d / \binom k2$ and the pairwise
//!   disagreement $n_d / \binom k2 = (1 - \tau)/2$, with $n_d$ the number of
//!   item pairs the two rankings order differently.

use okr_kernels::{Graph, Graphs, Rankings, Rows};

use crate::{Error, Result};

fn same_rows(pred: usize, truth: usize) -> Result<()> {
    if pred != truth {
        return Err(Error::ShapeMismatch { what: "predicted outputs", expected: truth, got: pred });
    }
    Ok(())
}

/// Whether two graphs are identical: node labels in order and neighbour lists.
pub fn same_graph(a: &Graph, b: &Graph) -> bool {
    a.node_labels() == b.node_labels() && (0..a.n_nodes()).all(|v| a.neighbors(v) == b.neighbors(v))
}

/// Fraction of predicted graphs identical to the true ones ([`same_graph`]).
///
/// # Errors
/// [`Error::ShapeMismatch`] for different numbers of graphs; [`Error::Empty`]
/// when there are none.
///
/// # Example
/// ```
/// use okr_kernels::{Graph, Graphs};
/// let a = Graph::new(vec![0, 1], &[(0, 1)])?;
/// let b = Graph::new(vec![0, 1], &[])?;
/// let truth = Graphs::new(vec![a.clone(), a.clone()]);
/// let pred = Graphs::new(vec![a, b]);
/// assert_eq!(okr_eval::output_metrics::exact_match(&pred, &truth)?, 0.5);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn exact_match(pred: &Graphs, truth: &Graphs) -> Result<f64> {
    same_rows(pred.n_rows(), truth.n_rows())?;
    if truth.n_rows() == 0 {
        return Err(Error::Empty { what: "no graphs to compare" });
    }
    let hits = pred.iter().zip(truth.iter()).filter(|(p, t)| same_graph(p, t)).count();
    Ok(hits as f64 / truth.n_rows() as f64)
}

/// Per row, Kendall's tau and the pairwise disagreement of the predicted and
/// the true ranking (both 1 and 0 for rankings of a single item).
///
/// # Errors
/// [`Error::ShapeMismatch`] for different numbers of rankings or items.
///
/// # Example
/// ```
/// use okr_kernels::Rankings;
/// let truth = Rankings::new(3, vec![vec![0, 1, 2]])?;
/// let pred = Rankings::new(3, vec![vec![1, 0, 2]])?; // one of 3 pairs swapped
/// let (tau, dis) = okr_eval::output_metrics::ranking_agreement(&pred, &truth)?;
/// assert!((tau[0] - 1.0 / 3.0).abs() < 1e-15 && (dis[0] - 1.0 / 3.0).abs() < 1e-15);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn ranking_agreement(pred: &Rankings, truth: &Rankings) -> Result<(Vec<f64>, Vec<f64>)> {
    same_rows(pred.n_rows(), truth.n_rows())?;
    if pred.n_items() != truth.n_items() {
        return Err(Error::ShapeMismatch { what: "ranked items", expected: truth.n_items(), got: pred.n_items() });
    }
    let pairs = truth.n_pairs() as f64;
    let dis: Vec<f64> = (0..truth.n_rows())
        .map(|i| if pairs == 0.0 { 0.0 } else { pred.discordant_pairs(i, truth, i) as f64 / pairs })
        .collect();
    Ok((dis.iter().map(|d| 1.0 - 2.0 * d).collect(), dis))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ranking_metrics::kendall_tau;

    /// Tau agrees with `kendall_tau` on rank vectors, and disagreement = (1 - tau) / 2.
    #[test]
    fn ranking_agreement_matches_kendall_tau() {
        let rows = vec![vec![0, 1, 2, 3], vec![3, 1, 0, 2], vec![2, 3, 1, 0]];
        let truth = Rankings::new(4, rows.clone()).unwrap();
        let pred = Rankings::new(4, vec![rows[1].clone(), rows[1].clone(), rows[0].clone()]).unwrap();
        let (tau, dis) = ranking_agreement(&pred, &truth).unwrap();
        for i in 0..3 {
            let p: Vec<usize> = pred.ranks(i).iter().map(|&r| r as usize).collect();
            assert!((tau[i] - kendall_tau(&p, &rows[i])).abs() < 1e-15, "{i}");
            assert!((dis[i] - (1.0 - tau[i]) / 2.0).abs() < 1e-15);
        }
        assert_eq!(tau[1], 1.0);
        let short = Rankings::new(3, vec![vec![0, 1, 2]; 3]).unwrap();
        assert!(ranking_agreement(&short, &truth).is_err());
    }

    #[test]
    fn exact_match_compares_labels_and_edges() {
        let g = Graph::new(vec![0, 1, 2], &[(0, 1), (1, 2)]).unwrap();
        let relabelled = Graph::new(vec![0, 2, 1], &[(0, 1), (1, 2)]).unwrap();
        let other_edges = Graph::new(vec![0, 1, 2], &[(0, 1), (0, 2)]).unwrap();
        let truth = Graphs::new(vec![g.clone(); 3]);
        let pred = Graphs::new(vec![g, relabelled, other_edges]);
        assert!((exact_match(&pred, &truth).unwrap() - 1.0 / 3.0).abs() < 1e-15);
        assert!(exact_match(&pred.select(&[0]), &truth).is_err());
    }
}
