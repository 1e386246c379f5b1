//! Reader for the TU Dortmund graph-dataset text format (Morris et al. 2020).
//!
//! A dataset `DS` is a folder with `DS_A.txt` (one `row, col` edge per line,
//! 1-based node ids over all graphs), `DS_graph_indicator.txt` (graph id of
//! each node, 1-based), `DS_graph_labels.txt` (one class per graph) and
//! optionally `DS_node_labels.txt` (one integer per node; all nodes get label
//! 0 without it) and `DS_edge_labels.txt` (one integer per line of `DS_A.txt`).

use std::path::Path;

use okr_kernels::{Graph, Graphs};

use super::{excerpt, lines, read_text};
use crate::{Error, Result};

/// A TU graph classification dataset.
///
/// # Example
/// ```
/// use okr_eval::readers::tu::read_tu;
/// let dir = tempfile::tempdir()?;
/// let p = |f: &str| dir.path().join(format!("T_{f}.txt"));
/// std::fs::write(p("A"), "1, 2\n2, 1\n3, 3\n")?;
/// std::fs::write(p("graph_indicator"), "1\n1\n2\n")?;
/// std::fs::write(p("graph_labels"), "1\n-1")?;
/// std::fs::write(p("node_labels"), "0\n1\n0\n")?;
/// let ds = read_tu(dir.path(), "T")?;
/// assert_eq!(ds.labels, vec![1, -1]);
/// assert_eq!(ds.graphs.graph(0).n_edges(), 1);
/// Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct TuDataset {
    /// The graphs, in graph-id order.
    pub graphs: Graphs,
    /// One class label per graph, as in `DS_graph_labels.txt`.
    pub labels: Vec<i64>,
}

fn int_column(path: &Path) -> Result<Vec<i64>> {
    let text = read_text(path)?;
    let mut out = Vec::new();
    for (line, l) in lines(&text) {
        let t = l.trim();
        if t.is_empty() {
            continue;
        }
        // Some files carry extra comma-separated columns; the first one is the label.
        let first = t.split(',').next().unwrap_or("").trim();
        out.push(first.parse::<i64>().map_err(|_| Error::Parse {
            path: path.to_path_buf(),
            line,
            msg: format!("expected an integer, got {:?}", excerpt(t)),
        })?);
    }
    Ok(out)
}

/// Reads dataset `name` from folder `dir` (files `name_*.txt`).
///
/// # Errors
/// [`Error::Io`] for a missing mandatory file, [`Error::Parse`] (path and
/// line) for malformed lines, node ids out of range, edges across graphs,
/// graph ids out of order, or label files of the wrong length.
pub fn read_tu(dir: &Path, name: &str) -> Result<TuDataset> {
    let file = |suffix: &str| dir.join(format!("{name}_{suffix}.txt"));
    let indicator_path = file("graph_indicator");
    let indicator = int_column(&indicator_path)?;
    let labels = int_column(&file("graph_labels"))?;
    let n_graphs = labels.len();
    let n_nodes = indicator.len();
    let node_labels_path = file("node_labels");
    let node_labels = if node_labels_path.exists() { int_column(&node_labels_path)? } else { vec![0; n_nodes] };
    if let Some(v) = node_labels.iter().position(|&l| l < 0 || l > u32::MAX as i64) {
        return Err(Error::Parse {
            path: node_labels_path,
            line: v + 1,
            msg: format!("node label {} is not in 0..=u32::MAX", node_labels[v]),
        });
    }
    if node_labels.len() != n_nodes {
        return Err(Error::Parse {
            path: node_labels_path,
            line: node_labels.len().min(n_nodes) + 1,
            msg: format!("{} node labels for {n_nodes} nodes", node_labels.len()),
        });
    }
    // Node ranges per graph (graph ids must be 1..=N and non-decreasing).
    let mut first_node = vec![usize::MAX; n_graphs];
    let mut count = vec![0usize; n_graphs];
    let mut prev = 0i64;
    for (v, &g) in indicator.iter().enumerate() {
        if g < 1 || g as usize > n_graphs || g < prev {
            return Err(Error::Parse {
                path: indicator_path,
                line: v + 1,
                msg: format!("graph id {g} out of order or outside 1..={n_graphs}"),
            });
        }
        let gi = g as usize - 1;
        if first_node[gi] == usize::MAX {
            first_node[gi] = v;
        }
        count[gi] += 1;
        prev = g;
    }
    let a_path = file("A");
    let a_text = read_text(&a_path)?;
    let edge_labels_path = file("edge_labels");
    let edge_labels = if edge_labels_path.exists() { Some(int_column(&edge_labels_path)?) } else { None };
    let mut edges: Vec<Vec<(usize, usize)>> = vec![Vec::new(); n_graphs];
    let mut elabels: Vec<Vec<((u32, u32), u32)>> = vec![Vec::new(); n_graphs];
    let mut k = 0usize;
    for (line, l) in lines(&a_text) {
        let t = l.trim();
        if t.is_empty() {
            continue;
        }
        let bad = |msg: String| Error::Parse { path: a_path.clone(), line, msg };
        let mut parts = t.split(',').map(|s| s.trim().parse::<usize>());
        let (u, v) = match (parts.next(), parts.next(), parts.next()) {
            (Some(Ok(u)), Some(Ok(v)), None) if u >= 1 && v >= 1 && u <= n_nodes && v <= n_nodes => (u - 1, v - 1),
            _ => return Err(bad(format!("expected `row, col` with node ids in 1..={n_nodes}, got {:?}", excerpt(t)))),
        };
        let g = indicator[u] as usize - 1;
        if indicator[v] as usize - 1 != g {
            return Err(bad(format!("edge ({}, {}) joins two graphs", u + 1, v + 1)));
        }
        let (lu, lv) = (u - first_node[g], v - first_node[g]);
        edges[g].push((lu, lv));
        if let Some(el) = &edge_labels {
            let lab = *el.get(k).ok_or_else(|| bad("more edges than edge labels".into()))?;
            elabels[g].push(((lu.min(lv) as u32, lu.max(lv) as u32), lab.clamp(0, u32::MAX as i64) as u32));
        }
        k += 1;
    }
    let mut graphs = Vec::with_capacity(n_graphs);
    for g in 0..n_graphs {
        let start = if count[g] == 0 { 0 } else { first_node[g] };
        let nl: Vec<u32> = node_labels[start..start + count[g]]
            .iter()
            .map(|&l| l as u32) // range checked above
            .collect();
        let mut graph = Graph::new(nl, &edges[g]).map_err(|e| Error::Parse {
            path: a_path.clone(),
            line: 0,
            msg: format!("graph {}: {e}", g + 1),
        })?;
        if edge_labels.is_some() {
            let mut el = std::mem::take(&mut elabels[g]);
            el.sort_unstable();
            el.dedup();
            graph = graph.with_edge_labels(el);
        }
        graphs.push(graph);
    }
    Ok(TuDataset { graphs: Graphs::new(graphs), labels })
}

/// The files of a TU data set `NAME`, by suffix (`NAME_A.txt`, ...).
const TU_SUFFIXES: [&str; 5] =
    ["_A.txt", "_graph_indicator.txt", "_graph_labels.txt", "_node_labels.txt", "_edge_labels.txt"];

/// The prefix `DIR/NAME` of the TU data set named by `path` (the prefix
/// itself or any one of its files).
fn tu_prefix(path: &Path) -> String {
    let text = path.to_string_lossy();
    TU_SUFFIXES.iter().find_map(|s| text.strip_suffix(s)).unwrap_or(&text).to_string()
}

/// Every file a TU data set named by `path` (its prefix `DIR/NAME`, or any
/// one of its files) may have: `DIR/NAME_A.txt`, `DIR/NAME_graph_indicator.txt`,
/// `DIR/NAME_graph_labels.txt`, `DIR/NAME_node_labels.txt`,
/// `DIR/NAME_edge_labels.txt`, whether they exist or not.
///
/// # Example
/// ```
/// let files = okr_eval::readers::tu_files("g/G_A.txt".as_ref());
/// assert_eq!(files[1], std::path::Path::new("g/G_graph_indicator.txt"));
/// assert_eq!(files, okr_eval::readers::tu_files("g/G".as_ref()));
/// ```
pub fn tu_files(path: &Path) -> Vec<std::path::PathBuf> {
    let prefix = tu_prefix(path);
    TU_SUFFIXES.iter().map(|s| std::path::PathBuf::from(format!("{prefix}{s}"))).collect()
}

/// Reads the graphs of the TU data set named by `path`: the prefix
/// `DIR/NAME` of its files, or any one of them (`DIR/NAME_A.txt`, ...).
/// This is how `okr` takes graph outputs and candidates.
///
/// # Errors
/// As [`read_tu`].
pub fn read_tu_graphs(path: &Path) -> Result<Graphs> {
    let prefix = tu_prefix(path);
    let prefix = Path::new(&prefix);
    let dir = prefix.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = prefix.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    Ok(read_tu(dir, &name)?.graphs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use okr_kernels::Rows;

    fn write(dir: &Path, name: &str, files: &[(&str, &str)]) {
        for (suffix, text) in files {
            std::fs::write(dir.join(format!("{name}_{suffix}.txt")), text).unwrap();
        }
    }

    #[test]
    fn two_tiny_graphs_with_edge_labels() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            "X",
            &[
                ("A", "1, 2\n2, 1\n2, 3\n3, 2\n4, 5\n5, 4"),
                ("graph_indicator", "1\n1\n1\n2\n2\n"),
                ("graph_labels", "1\n0\n"),
                ("node_labels", "6\n0\n6\n1\n1\n"),
                ("edge_labels", "0\n0\n1\n1\n2\n2\n"),
            ],
        );
        let ds = read_tu(dir.path(), "X").unwrap();
        assert_eq!(ds.graphs.n_rows(), 2);
        let g0 = ds.graphs.graph(0);
        assert_eq!(g0.node_labels(), &[6, 0, 6]);
        assert_eq!(g0.neighbors(1), &[0, 2]);
        assert_eq!(g0.n_edges(), 2);
        assert_eq!(g0.edge_labels().unwrap(), &[((0, 1), 0), ((1, 2), 1)]);
        assert_eq!(ds.graphs.graph(1).neighbors(0), &[1]);
        assert_eq!(ds.labels, vec![1, 0]);
        // By prefix or by any of its files.
        assert_eq!(read_tu_graphs(&dir.path().join("X")).unwrap(), ds.graphs);
        assert_eq!(read_tu_graphs(&dir.path().join("X_node_labels.txt")).unwrap(), ds.graphs);
    }

    #[test]
    fn malformed_files_name_the_line() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "Y", &[("A", "1, 2\n2, x\n"), ("graph_indicator", "1\n1\n"), ("graph_labels", "1\n")]);
        match read_tu(dir.path(), "Y") {
            Err(Error::Parse { line, .. }) => assert_eq!(line, 2),
            other => panic!("{other:?}"),
        }
        write(dir.path(), "Z", &[("A", "1, 3\n"), ("graph_indicator", "1\n1\n2\n"), ("graph_labels", "1\n1\n")]);
        assert!(matches!(read_tu(dir.path(), "Z"), Err(Error::Parse { line: 1, .. })));
        assert!(matches!(read_tu(dir.path(), "missing"), Err(Error::Io { .. })));
    }
}
