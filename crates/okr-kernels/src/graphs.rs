//! Labelled graphs and the Weisfeiler-Lehman subtree kernel
//! (Shervashidze et al., JMLR 2011).

use std::collections::HashMap;
use std::sync::Arc;

use faer::{MatMut, Par};
use serde::{Deserialize, Serialize};

use crate::{CsrRows, Error, Kernel, Linear, Result, Rows};

/// One undirected graph with integer node labels (and optional edge labels,
/// kept for readers and other kernels; the WL subtree kernel ignores them).
///
/// # Example
/// ```
/// use okr_kernels::Graph;
/// // A path a - b - a.
/// let g = Graph::new(vec![0, 1, 0], &[(0, 1), (1, 2)])?;
/// assert_eq!(g.n_nodes(), 3);
/// assert_eq!(g.neighbors(1), &[0, 2]);
/// Ok::<(), okr_kernels::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "GraphParts")]
pub struct Graph {
    node_labels: Vec<u32>,
    /// CSR adjacency: neighbours of node `v` are `adjacency[offsets[v]..offsets[v + 1]]`, sorted, no repeats.
    offsets: Vec<usize>,
    adjacency: Vec<u32>,
    edge_labels: Option<Vec<((u32, u32), u32)>>,
}

/// The serialized fields of [`Graph`], checked on the way in (the WL kernel
/// indexes node labels by neighbour ids).
#[derive(Deserialize)]
struct GraphParts {
    node_labels: Vec<u32>,
    offsets: Vec<usize>,
    adjacency: Vec<u32>,
    edge_labels: Option<Vec<((u32, u32), u32)>>,
}

impl TryFrom<GraphParts> for Graph {
    type Error = Error;
    fn try_from(p: GraphParts) -> Result<Self> {
        let n = p.node_labels.len();
        let bad = |what: &str| Err(Error::InvalidStructure(format!("graph adjacency: {what}")));
        if p.offsets.len() != n + 1 || p.offsets[0] != 0 || p.offsets[n] != p.adjacency.len() {
            return bad("offsets do not frame the neighbour lists");
        }
        if p.offsets.windows(2).any(|w| w[0] > w[1]) {
            return bad("offsets decrease");
        }
        for v in 0..n {
            let nb = &p.adjacency[p.offsets[v]..p.offsets[v + 1]];
            if nb.windows(2).any(|w| w[0] >= w[1]) || nb.last().is_some_and(|&u| u as usize >= n) {
                return bad("neighbours not sorted, repeated or out of range");
            }
        }
        Ok(Self { node_labels: p.node_labels, offsets: p.offsets, adjacency: p.adjacency, edge_labels: p.edge_labels })
    }
}

impl Graph {
    /// A graph from node labels and undirected edges `(u, v)` (either or both
    /// directions may be listed; repeats and self-loops are kept once).
    ///
    /// # Errors
    /// [`Error::IndexOutOfRange`] for an edge end `>= node_labels.len()`.
    pub fn new(node_labels: Vec<u32>, edges: &[(usize, usize)]) -> Result<Self> {
        let n = node_labels.len();
        let mut adj: Vec<Vec<u32>> = vec![Vec::new(); n];
        for &(u, v) in edges {
            for w in [u, v] {
                if w >= n {
                    return Err(Error::IndexOutOfRange { what: "edge end (node)", index: w, bound: n });
                }
            }
            adj[u].push(v as u32);
            if u != v {
                adj[v].push(u as u32);
            }
        }
        let mut offsets = Vec::with_capacity(n + 1);
        offsets.push(0);
        let mut adjacency = Vec::new();
        for mut a in adj {
            a.sort_unstable();
            a.dedup();
            adjacency.extend(a);
            offsets.push(adjacency.len());
        }
        Ok(Self { node_labels, offsets, adjacency, edge_labels: None })
    }

    /// Attaches edge labels, one per undirected edge `(min, max)`.
    pub fn with_edge_labels(mut self, labels: Vec<((u32, u32), u32)>) -> Self {
        self.edge_labels = Some(labels);
        self
    }

    /// Number of nodes.
    pub fn n_nodes(&self) -> usize {
        self.node_labels.len()
    }
    /// Number of undirected edges (self-loops count once).
    pub fn n_edges(&self) -> usize {
        let loops = (0..self.n_nodes()).filter(|&v| self.neighbors(v).contains(&(v as u32))).count();
        (self.adjacency.len() - loops) / 2 + loops
    }
    /// Node labels.
    pub fn node_labels(&self) -> &[u32] {
        &self.node_labels
    }
    /// Sorted neighbours of node `v`.
    ///
    /// # Panics
    /// If `v >= n_nodes()`.
    pub fn neighbors(&self, v: usize) -> &[u32] {
        &self.adjacency[self.offsets[v]..self.offsets[v + 1]]
    }
    /// Edge labels, if any.
    pub fn edge_labels(&self) -> Option<&[((u32, u32), u32)]> {
        self.edge_labels.as_deref()
    }
}

/// A set of labelled graphs, the container of graph kernels (cheap to clone).
///
/// # Example
/// ```
/// use okr_kernels::{Graph, Graphs, Rows};
/// let g = Graph::new(vec![0, 1], &[(0, 1)])?;
/// let h = Graph::new(vec![2], &[])?;
/// let set = Graphs::new(vec![g, h]);
/// assert_eq!(set.n_rows(), 2);
/// assert_eq!(set.select(&[1]).graph(0).n_nodes(), 1);
/// Ok::<(), okr_kernels::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "Vec<Graph>", into = "Vec<Graph>")]
pub struct Graphs {
    graphs: Arc<Vec<Graph>>,
    index: Vec<usize>,
}

impl Graphs {
    /// Wraps a vector of graphs.
    pub fn new(graphs: Vec<Graph>) -> Self {
        let index = (0..graphs.len()).collect();
        Self { graphs: Arc::new(graphs), index }
    }
    /// The `i`-th graph.
    ///
    /// # Panics
    /// If `i >= n_rows()`.
    pub fn graph(&self, i: usize) -> &Graph {
        &self.graphs[self.index[i]]
    }
    /// Iterates over the graphs in order.
    pub fn iter(&self) -> impl Iterator<Item = &Graph> + '_ {
        self.index.iter().map(|&i| &self.graphs[i])
    }
}

impl From<Vec<Graph>> for Graphs {
    fn from(graphs: Vec<Graph>) -> Self {
        Self::new(graphs)
    }
}

impl From<Graphs> for Vec<Graph> {
    fn from(g: Graphs) -> Self {
        g.iter().cloned().collect()
    }
}

impl Rows for Graphs {
    fn n_rows(&self) -> usize {
        self.index.len()
    }
    fn select(&self, indices: &[usize]) -> Self {
        Self { graphs: Arc::clone(&self.graphs), index: indices.iter().map(|&i| self.index[i]).collect() }
    }
}

/// The Weisfeiler-Lehman subtree kernel with `h` iterations:
/// $k(G, G') = \sum_{t=0}^{h} \langle c_t(G), c_t(G') \rangle$, where $c_t(G)$
/// counts the nodes of $G$ per WL label after $t$ relabelling rounds (round
/// $t$ label = compressed pair of the round $t-1$ label and the sorted
/// multiset of the neighbours' round $t-1$ labels). With `normalized`, the
/// cosine-normalized $k / \sqrt{k(G,G)k(G',G')}$ (unit diagonal).
///
/// Label compression is shared by all graphs of one call, so a block
/// $k(A, B)$ is computed on the union of $A$ and $B$; the explicit features
/// ([`features`](Self::features)) are sparse counts and Gram blocks go
/// through the sparse linear kernel.
///
/// # Example
/// ```
/// use okr_kernels::{Graph, Graphs, Kernel, WlSubtree};
/// // Two triangles with the same labels: identical WL features.
/// let t = Graph::new(vec![0, 0, 1], &[(0, 1), (1, 2), (2, 0)])?;
/// let set = Graphs::new(vec![t.clone(), t]);
/// let k = WlSubtree::new(2).normalized(true).gram(&set);
/// assert!((k[(0, 1)] - 1.0).abs() < 1e-12);
/// Ok::<(), okr_kernels::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct WlSubtree {
    iterations: usize,
    normalized: bool,
}

impl WlSubtree {
    /// `iterations` relabelling rounds, unnormalized.
    pub fn new(iterations: usize) -> Self {
        Self { iterations, normalized: false }
    }
    /// Cosine normalization on or off.
    pub fn normalized(mut self, normalized: bool) -> Self {
        self.normalized = normalized;
        self
    }
    /// Number of relabelling rounds $h$.
    pub fn iterations(&self) -> usize {
        self.iterations
    }
    /// Whether the kernel is cosine-normalized.
    pub fn is_normalized(&self) -> bool {
        self.normalized
    }

    /// Sparse WL feature counts of `graphs`, one row per graph; feature ids
    /// are assigned in order of first appearance (round 0 labels first).
    pub fn features(&self, graphs: &Graphs) -> CsrRows {
        let gs: Vec<&Graph> = graphs.iter().collect();
        let mut counts: Vec<HashMap<u32, f64>> = vec![HashMap::new(); gs.len()];
        let mut next_id: u32 = 0;
        let mut round0: HashMap<u32, u32> = HashMap::new();
        let mut labels: Vec<Vec<u32>> = gs
            .iter()
            .map(|g| {
                g.node_labels()
                    .iter()
                    .map(|l| {
                        *round0.entry(*l).or_insert_with(|| {
                            next_id += 1;
                            next_id - 1
                        })
                    })
                    .collect()
            })
            .collect();
        for (c, l) in counts.iter_mut().zip(&labels) {
            for &id in l {
                *c.entry(id).or_insert(0.0) += 1.0;
            }
        }
        for _ in 0..self.iterations {
            let mut dict: HashMap<Vec<u32>, u32> = HashMap::new();
            let mut new_labels = Vec::with_capacity(gs.len());
            for (g, l) in gs.iter().zip(&labels) {
                let mut nl = Vec::with_capacity(l.len());
                for v in 0..g.n_nodes() {
                    let mut sig: Vec<u32> = Vec::with_capacity(1 + g.neighbors(v).len());
                    sig.extend(g.neighbors(v).iter().map(|&u| l[u as usize]));
                    sig.sort_unstable();
                    sig.insert(0, l[v]);
                    let id = *dict.entry(sig).or_insert_with(|| {
                        next_id += 1;
                        next_id - 1
                    });
                    nl.push(id);
                }
                new_labels.push(nl);
            }
            labels = new_labels;
            for (c, l) in counts.iter_mut().zip(&labels) {
                for &id in l {
                    *c.entry(id).or_insert(0.0) += 1.0;
                }
            }
        }
        let rows: Vec<Vec<(usize, f64)>> = counts
            .into_iter()
            .map(|c| {
                let mut r: Vec<(usize, f64)> = c.into_iter().map(|(k, v)| (k as usize, v)).collect();
                r.sort_unstable_by_key(|e| e.0);
                r
            })
            .collect();
        CsrRows::from_rows(next_id as usize, rows).expect("feature ids are < next_id by construction")
    }

    fn normalize(&self, mut k: MatMut<'_, f64>, da: &[f64], db: &[f64]) {
        if !self.normalized {
            return;
        }
        for j in 0..k.ncols() {
            for i in 0..k.nrows() {
                let d = (da[i] * db[j]).sqrt();
                k[(i, j)] = if d > 0.0 { k[(i, j)] / d } else { 0.0 };
            }
        }
    }
}

impl Kernel<Graphs> for WlSubtree {
    fn eval(&self, a: &Graphs, i: usize, b: &Graphs, j: usize) -> f64 {
        let pair = Graphs::new(vec![a.graph(i).clone(), b.graph(j).clone()]);
        self.gram(&pair)[(0, 1)]
    }

    fn gram_block_into(&self, a: &Graphs, b: &Graphs, mut dst: MatMut<'_, f64>, par: Par) {
        assert_eq!((dst.nrows(), dst.ncols()), (a.n_rows(), b.n_rows()), "gram block shape");
        let both = Graphs::new(a.iter().chain(b.iter()).cloned().collect());
        let f = self.features(&both);
        let na = a.n_rows();
        let fa = f.slice(0..na);
        let fb = f.slice(na..na + b.n_rows());
        Linear.gram_block_into(&fa, &fb, dst.as_mut(), par);
        let (da, db) = (Linear.diag(&fa), Linear.diag(&fb));
        self.normalize(dst, &da, &db);
    }

    fn gram_into(&self, a: &Graphs, mut dst: MatMut<'_, f64>, par: Par) {
        let f = self.features(a);
        Linear.gram_into(&f, dst.as_mut(), par);
        let d = Linear.diag(&f);
        self.normalize(dst, &d, &d);
    }

    fn diag(&self, a: &Graphs) -> Vec<f64> {
        if self.normalized {
            // Empty graphs have no features: k = 0 after normalization.
            return a.iter().map(|g| if g.n_nodes() > 0 { 1.0 } else { 0.0 }).collect();
        }
        Linear.diag(&self.features(a))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hand-counted WL features. Path a - b - a (labels 0, 1, 0) and a single
    /// edge a - b:
    /// round 0: P: {a: 2, b: 1}, E: {a: 1, b: 1};
    /// round 1 signatures: P: (a; b) x2, (b; a, a) x1; E: (a; b) x1, (b; a) x1.
    /// k(P, E) = round 0: 2*1 + 1*1 = 3; round 1: (a;b) 2*1 = 2 -> 5.
    /// k(P, P) = 4 + 1 + 4 + 1 = 10; k(E, E) = 1 + 1 + 1 + 1 = 4.
    #[test]
    fn wl_counts_by_hand() {
        let p = Graph::new(vec![0, 1, 0], &[(0, 1), (1, 2)]).unwrap();
        let e = Graph::new(vec![0, 1], &[(0, 1), (1, 0)]).unwrap();
        let set = Graphs::new(vec![p, e]);
        let wl = WlSubtree::new(1);
        let f = wl.features(&set);
        // Features: a, b (round 0), (a;b), (b;a,a), (b;a) (round 1).
        assert_eq!(f.n_features(), 5);
        assert_eq!(f.to_dense().row(0).iter().copied().collect::<Vec<_>>(), vec![2.0, 1.0, 2.0, 1.0, 0.0]);
        assert_eq!(f.to_dense().row(1).iter().copied().collect::<Vec<_>>(), vec![1.0, 1.0, 1.0, 0.0, 1.0]);
        let k = wl.gram(&set);
        assert_eq!((k[(0, 0)], k[(0, 1)], k[(1, 1)]), (10.0, 5.0, 4.0));
        assert_eq!(wl.eval(&set, 0, &set, 1), 5.0);
        let kn = wl.normalized(true).gram(&set);
        assert!((kn[(0, 1)] - 5.0 / 40f64.sqrt()).abs() < 1e-15);
        // h = 0 is the label histogram kernel.
        assert_eq!(WlSubtree::new(0).gram(&set)[(0, 1)], 3.0);
        // Blocks agree with the full Gram.
        let b = wl.gram_block(&set.select(&[1]), &set);
        assert_eq!((b[(0, 0)], b[(0, 1)]), (5.0, 4.0));
        assert_eq!(wl.diag(&set), vec![10.0, 4.0]);
    }

    /// Deserialized graphs are checked: neighbour ids in range, sorted lists,
    /// offsets that frame them.
    #[test]
    fn deserialized_adjacency_is_checked() {
        let g = Graph::new(vec![0, 1], &[(0, 1)]).unwrap();
        let bytes = postcard::to_stdvec(&g).unwrap();
        assert_eq!(bytes, vec![2, 0, 1, 3, 0, 1, 2, 2, 1, 0, 0]);
        assert_eq!(postcard::from_bytes::<Graph>(&bytes).unwrap(), g);
        for (at, value) in [(8, 5), (5, 2), (6, 0), (4, 1)] {
            let mut bad = bytes.clone();
            bad[at] = value;
            assert!(postcard::from_bytes::<Graph>(&bad).is_err(), "byte {at} = {value}");
        }
    }

    #[test]
    fn bad_edge_is_an_error() {
        assert!(matches!(Graph::new(vec![0, 1], &[(0, 2)]), Err(Error::IndexOutOfRange { .. })));
        let g = Graph::new(vec![0, 1, 2], &[(0, 1), (1, 0), (1, 2), (2, 2)]).unwrap();
        assert_eq!(g.n_edges(), 3);
    }
}
