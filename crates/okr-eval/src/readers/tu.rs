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

/// The integers of a one-column file (the first comma-separated field of
/// each non-blank line). With `at_most = Some((n, bound))`, a line beyond
/// the `n`-th value is an error naming it and `bound` (the file that sets
/// `n`), before the value is stored ([`okr_io::check_count`]).
fn int_column(path: &Path, at_most: Option<(usize, &dyn Fn() -> String)>, what: &'static str) -> Result<Vec<i64>> {
    let text = read_text(path)?;
    let mut out = Vec::new();
    for (line, l) in lines(&text) {
        let t = l.trim();
        if t.is_empty() {
            continue;
        }
        if let Some((n, bound)) = at_most {
            okr_io::check_count(out.len() + 1, n, what, bound).map_err(|e| Error::Parse {
                path: path.to_path_buf(),
                line,
                msg: e.to_string(),
            })?;
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
/// The graph indicator file declares the nodes and the graphs: its graph
/// ids run from 1 without a gap (every graph has a node), in order. The
/// other files are checked against it as they are read, so a file longer
/// than the indicator declares (20 million graph labels for 2 nodes) is an
/// error at its first extra line, not an allocation of its length.
///
/// # Errors
/// [`Error::Io`] for a missing mandatory file, [`Error::Parse`] (path and
/// line) for malformed lines, node ids out of range, edges across graphs,
/// graph ids out of order or skipping a graph, or label files of the wrong
/// length.
pub fn read_tu(dir: &Path, name: &str) -> Result<TuDataset> {
    let file = |suffix: &str| dir.join(format!("{name}_{suffix}.txt"));
    let indicator_path = file("graph_indicator");
    let indicator = int_column(&indicator_path, None, "nodes")?;
    let n_nodes = indicator.len();
    // Node ranges per graph: ids 1, 1, 2, 3, 3, ... (each graph's nodes
    // contiguous, no graph without nodes).
    let mut first_node = Vec::new();
    let mut prev = 0i64;
    for (v, &g) in indicator.iter().enumerate() {
        if g != prev + 1 && (v == 0 || g != prev) {
            let expected = if prev == 0 { "1".to_string() } else { format!("{prev} or {}", prev + 1) };
            return Err(Error::Parse {
                path: indicator_path,
                line: v + 1,
                msg: format!(
                    "graph id {g} where {expected} is expected (graph ids run from 1 in order, every graph with a node)"
                ),
            });
        }
        if g != prev {
            first_node.push(v);
        }
        prev = g;
    }
    let n_graphs = first_node.len();
    let count: Vec<usize> =
        (0..n_graphs).map(|g| first_node.get(g + 1).copied().unwrap_or(n_nodes) - first_node[g]).collect();
    let indicator_name = indicator_path.display().to_string();
    let graphs_bound = || format!("{indicator_name} declares {n_graphs} graphs");
    let labels_path = file("graph_labels");
    let labels = int_column(&labels_path, Some((n_graphs, &graphs_bound)), "graph labels")?;
    if labels.len() != n_graphs {
        return Err(Error::Parse {
            path: labels_path,
            line: labels.len() + 1,
            msg: format!("{} graph labels for the {n_graphs} graphs of {indicator_name}", labels.len()),
        });
    }
    let node_labels_path = file("node_labels");
    let nodes_bound = || format!("{indicator_name} declares {n_nodes} nodes");
    let node_labels = if node_labels_path.exists() {
        int_column(&node_labels_path, Some((n_nodes, &nodes_bound)), "node labels")?
    } else {
        vec![0; n_nodes]
    };
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
    let a_path = file("A");
    let a_text = read_text(&a_path)?;
    let edge_labels_path = file("edge_labels");
    let edge_labels =
        if edge_labels_path.exists() { Some(int_column(&edge_labels_path, None, "edge labels")?) } else { None };
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
        let start = first_node[g];
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

    /// M2 (issue 35): the indicator file declares the graphs and nodes; a
    /// label file longer than that is refused at its first extra line, a
    /// graph id that skips a graph (a graph without nodes) at its line.
    #[test]
    fn label_files_longer_than_the_indicator_declares_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let err = |name: &str, files: &[(&str, &str)]| {
            write(dir.path(), name, files);
            match read_tu(dir.path(), name) {
                Err(Error::Parse { path, line, msg }) => {
                    (path.file_name().unwrap().to_string_lossy().into_owned(), line, msg)
                }
                other => panic!("{name}: {other:?}"),
            }
        };
        let (file, line, msg) =
            err("L", &[("A", ""), ("graph_indicator", "1\n2\n"), ("graph_labels", &"1\n".repeat(50))]);
        assert_eq!((file.as_str(), line), ("L_graph_labels.txt", 3));
        assert!(
            msg.starts_with("more than 2 graph labels: ") && msg.ends_with("L_graph_indicator.txt declares 2 graphs"),
            "{msg}"
        );
        let (file, line, msg) = err(
            "N",
            &[("A", ""), ("graph_indicator", "1\n1\n"), ("graph_labels", "1\n"), ("node_labels", "0\n0\n0\n")],
        );
        assert_eq!((file.as_str(), line), ("N_node_labels.txt", 3));
        assert!(msg.contains("more than 2 node labels"), "{msg}");
        for (indicator, line, found) in
            [("1\n3\n", 2, "graph id 3"), ("2\n2\n", 1, "graph id 2"), ("1\n0\n", 2, "graph id 0")]
        {
            let (file, l, msg) = err("S", &[("A", ""), ("graph_indicator", indicator), ("graph_labels", "1\n1\n1\n")]);
            assert_eq!((file.as_str(), l), ("S_graph_indicator.txt", line), "{indicator:?}");
            assert!(msg.contains(found), "{msg}");
        }
        let (file, line, msg) = err("F", &[("A", ""), ("graph_indicator", "1\n2\n3\n"), ("graph_labels", "1\n1\n")]);
        assert_eq!((file.as_str(), line), ("F_graph_labels.txt", 3));
        assert!(msg.starts_with("2 graph labels for the 3 graphs"), "{msg}");
        write(dir.path(), "G", &[("A", ""), ("graph_indicator", "1\n2\n2\n"), ("graph_labels", "1\n0\n")]);
        let ds = read_tu(dir.path(), "G").unwrap();
        assert_eq!((ds.graphs.n_rows(), ds.graphs.graph(1).node_labels().len()), (2, 2));
    }
}
