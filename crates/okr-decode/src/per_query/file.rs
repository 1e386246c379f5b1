//! The `okr-candidates 1` file format and candidate pool files: text rows
//! ([`TextRows`]) and the query stream ([`CandidateFileReader`]); the format
//! is described in the [parent module](super).

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::marker::PhantomData;
use std::path::Path;

use okr_kernels::{DenseRows, Graphs, LabelSets, Rankings, Rows};

use faer::Mat;

use super::{CandidateList, Query};
use crate::{Error, Result};

/// Row containers built from text, one row per line ([module docs](super)).
pub trait TextRows: Rows {
    /// Builds a container from rows of text of `width` features or labels,
    /// taken one at a time (a reader passes rows of its text without
    /// collecting them).
    ///
    /// # Errors
    /// The index of the first malformed row and what is wrong with it.
    fn parse_rows<'a>(
        rows: impl IntoIterator<Item = &'a str>,
        width: usize,
    ) -> std::result::Result<Self, (usize, String)>;
}

fn tokens(text: &str) -> impl Iterator<Item = &str> {
    okr_io::rows::fields(text)
}

/// Label sets and binary fingerprints: the 0-based indices of the set bits
/// (`-` for none), each `< width` ([`okr_io::rows::parse_index_set`]);
/// stored compressed as they are read (no vector per row).
impl TextRows for LabelSets {
    fn parse_rows<'a>(
        rows: impl IntoIterator<Item = &'a str>,
        width: usize,
    ) -> std::result::Result<Self, (usize, String)> {
        let mut indptr = vec![0];
        let mut labels = Vec::new();
        for (i, row) in rows.into_iter().enumerate() {
            let mut set = okr_io::rows::parse_index_set(row, width).map_err(|e| (i, e.to_string()))?;
            set.sort_unstable();
            set.dedup();
            labels.extend_from_slice(&set);
            indptr.push(labels.len());
        }
        indptr.shrink_to_fit();
        labels.shrink_to_fit();
        LabelSets::from_compressed(width, indptr, labels).map_err(|e| (0, e.to_string()))
    }
}

/// Dense vectors: `width` finite values ([`okr_io::rows::parse_values`]).
impl TextRows for DenseRows {
    fn parse_rows<'a>(
        rows: impl IntoIterator<Item = &'a str>,
        width: usize,
    ) -> std::result::Result<Self, (usize, String)> {
        let mut flat = Vec::new();
        let mut n = 0;
        for (i, row) in rows.into_iter().enumerate() {
            let values = okr_io::rows::parse_values(row).map_err(|e| (i, e.to_string()))?;
            okr_io::rows::check_width(&mut Some(width), values.len()).map_err(|e| (i, e.to_string()))?;
            flat.extend_from_slice(&values);
            n += 1;
        }
        DenseRows::new(Mat::from_fn(n, width, |i, j| flat[i * width + j])).map_err(|e| (0, e.to_string()))
    }
}

/// Rankings: the `width` ranks of the items, 1 = most preferred (the rank
/// columns of a label-ranking file), a permutation of `1..=width`.
impl TextRows for Rankings {
    fn parse_rows<'a>(
        rows: impl IntoIterator<Item = &'a str>,
        width: usize,
    ) -> std::result::Result<Self, (usize, String)> {
        let mut out = Vec::new();
        for (i, row) in rows.into_iter().enumerate() {
            let mut ranks = Vec::with_capacity(width);
            let mut seen = vec![false; width];
            for tok in tokens(row) {
                let r: usize = tok.parse().map_err(|_| (i, format!("expected a rank, found {tok:?}")))?;
                if r == 0 || r > width {
                    return Err((i, format!("rank {r} out of range 1..={width}")));
                }
                if std::mem::replace(&mut seen[r - 1], true) {
                    return Err((
                        i,
                        format!("rank {r} appears twice: a ranking has no ties (a permutation of 1..={width})"),
                    ));
                }
                ranks.push(r - 1);
            }
            if ranks.len() != width {
                return Err((i, format!("expected {width} ranks, found {}", ranks.len())));
            }
            out.push(ranks);
        }
        Rankings::new(width, out).map_err(|e| (0, e.to_string()))
    }
}

/// Graphs have no one-line syntax: their candidates are indices into a pool
/// of graphs (a TU data set, read by the caller), never inline rows.
impl TextRows for Graphs {
    fn parse_rows<'a>(
        _rows: impl IntoIterator<Item = &'a str>,
        _width: usize,
    ) -> std::result::Result<Self, (usize, String)> {
        Err((0, "graphs cannot be listed inline: use a pool-mode file with a pool of graphs (TU data set)".into()))
    }
}

/// Reads a candidate pool file: one output per line in the row syntax of
/// [`TextRows`]; `#` comment lines and blank lines are skipped. The rows
/// are parsed from the file's text as they come, so memory is the text and
/// the container (a label-set pool of `-` lines: 2 bytes of text and 8 of
/// container per row).
///
/// # Errors
/// [`Error::Io`], [`Error::Parse`] naming the line.
pub fn read_candidate_pool<Y: TextRows>(path: impl AsRef<Path>, width: usize) -> Result<Y> {
    let path = path.as_ref();
    let name = path.display().to_string();
    let text = okr_io::bounded::read_text(path, okr_io::bounded::MAX_INPUT_BYTES)
        .map_err(|e| Error::Io { path: name.clone(), msg: e.to_string() })?;
    let rows = okr_io::rows::data_lines(&text).map(|(_, row)| row);
    Y::parse_rows(rows, width).map_err(|(i, msg)| Error::Parse {
        path: name,
        // Found again only on error: no line table is kept while reading.
        line: okr_io::rows::data_lines(&text).nth(i).map_or(0, |(line, _)| line),
        msg,
    })
}

/// Mode of a candidate file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CandidateFileMode {
    /// Candidate outputs inline, one per line.
    Inline,
    /// Indices into a pool file.
    Pool,
}

/// Streams the queries of an `okr-candidates 1` file (format in the
/// [module docs](super)), one query at a time.
#[derive(Debug)]
pub struct CandidateFileReader<Y, R = BufReader<File>> {
    path: String,
    reader: R,
    width: usize,
    mode: CandidateFileMode,
    line_no: usize,
    /// The header of the next query, already read: (id, test row, its line).
    pending: Option<(String, usize, usize)>,
    /// Rows of the pool pool-mode indices refer to, when known.
    pool_rows: Option<usize>,
    done: bool,
    _rows: PhantomData<Y>,
}

impl<Y: TextRows> CandidateFileReader<Y> {
    /// Opens a candidate file; `width` is the number of labels / features of
    /// inline candidate outputs (ignored in pool mode).
    ///
    /// # Errors
    /// [`Error::Io`], or [`Error::Parse`] for a bad first line.
    pub fn open(path: impl AsRef<Path>, width: usize) -> Result<Self> {
        let path = path.as_ref();
        let name = path.display().to_string();
        let file = File::open(path).map_err(|e| Error::Io { path: name.clone(), msg: e.to_string() })?;
        Self::from_reader(name, BufReader::new(file), width)
    }
}

impl<Y: TextRows, R: BufRead> CandidateFileReader<Y, R> {
    /// Reads from any buffered reader; `path` names it in errors.
    ///
    /// # Errors
    /// [`Error::Io`], or [`Error::Parse`] for a bad first line.
    pub fn from_reader(path: impl Into<String>, reader: R, width: usize) -> Result<Self> {
        let mut me = Self {
            path: path.into(),
            reader,
            width,
            mode: CandidateFileMode::Inline,
            line_no: 0,
            pending: None,
            pool_rows: None,
            done: false,
            _rows: PhantomData,
        };
        let first = me.next_line()?.unwrap_or_default();
        let words: Vec<&str> = first.split_whitespace().collect();
        me.mode = match words.as_slice() {
            ["okr-candidates", "1", "inline"] => CandidateFileMode::Inline,
            ["okr-candidates", "1", "pool"] => CandidateFileMode::Pool,
            _ => return Err(me.parse_error(format!("expected `okr-candidates 1 inline|pool`, found {first:?}"))),
        };
        Ok(me)
    }

    /// Whether candidates are inline or pool indices.
    pub fn mode(&self) -> CandidateFileMode {
        self.mode
    }

    /// Checks pool-mode queries against a pool of `n_rows` rows as they are
    /// read: an index `>= n_rows`, or more indices in one query than the pool
    /// has rows (a longer list only repeats pool entries), is an error naming
    /// its line before the list is stored ([`okr_io::check_count`]), so a
    /// query of 40 million indices into a small pool costs no memory.
    pub fn pool_rows(mut self, n_rows: usize) -> Self {
        self.pool_rows = Some(n_rows);
        self
    }

    fn parse_error(&self, msg: String) -> Error {
        Error::Parse { path: self.path.clone(), line: self.line_no, msg }
    }

    /// The next line that is neither blank nor a comment.
    fn next_line(&mut self) -> Result<Option<String>> {
        let mut line = String::new();
        loop {
            line.clear();
            // Bounded: a stream without newlines (a device, a binary file)
            // must not grow one line without limit.
            let n = okr_io::bounded::read_line(&mut self.reader, &mut line, okr_io::bounded::MAX_INPUT_BYTES).map_err(
                |e| Error::Io { path: format!("{} line {}", self.path, self.line_no + 1), msg: e.to_string() },
            )?;
            if n == 0 {
                return Ok(None);
            }
            self.line_no += 1;
            let t = line.trim();
            if !t.is_empty() && !t.starts_with('#') {
                return Ok(Some(t.to_string()));
            }
        }
    }

    fn parse_header(&self, line: &str) -> Result<(String, usize, usize)> {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["query", id, row] => {
                let row = row.parse().map_err(|_| self.parse_error(format!("expected a test row, found {row:?}")))?;
                Ok((id.to_string(), row, self.line_no))
            }
            _ => Err(self.parse_error(format!("expected `query <query_id> <test_row>`, found {line:?}"))),
        }
    }

    fn second_truth(&self, line: usize, id: &str) -> Error {
        Error::Parse { path: self.path.clone(), line, msg: format!("query {id}: a second true candidate") }
    }

    /// Reads one query. Pool indices are parsed (and checked against the
    /// pool's size) line by line as they come; inline rows are kept as one
    /// text (with the line of each row) until the query ends.
    fn read_query(&mut self) -> Result<Option<Query<Y>>> {
        if self.pending.is_none() {
            match self.next_line()? {
                None => return Ok(None),
                Some(line) => self.pending = Some(self.parse_header(&line)?),
            }
        }
        let (id, test_row, _) = self.pending.take().expect("set above");
        let mut truth = None;
        let mut indices = Vec::new();
        let (mut rows, mut row_lines) = (String::new(), Vec::new());
        while let Some(line) = self.next_line()? {
            if line.starts_with("query") && line.split_whitespace().next() == Some("query") {
                self.pending = Some(self.parse_header(&line)?);
                break;
            }
            match self.mode {
                CandidateFileMode::Pool => {
                    for tok in tokens(&line) {
                        let (star, num) = tok.strip_prefix('*').map_or((false, tok), |n| (true, n));
                        let i: usize = num
                            .parse()
                            .map_err(|_| self.parse_error(format!("expected a pool index, found {tok:?}")))?;
                        if let Some(n) = self.pool_rows {
                            if i >= n {
                                return Err(self.parse_error(format!(
                                    "query {id}: pool index {i} out of range (pool of {n} rows)"
                                )));
                            }
                            okr_io::check_count(indices.len() + 1, n, "pool indices", || {
                                format!("the pool has {n} rows (a longer list only repeats pool entries)")
                            })
                            .map_err(|e| self.parse_error(format!("query {id}: {e}")))?;
                        }
                        if star && truth.replace(indices.len()).is_some() {
                            return Err(self.second_truth(self.line_no, &id));
                        }
                        indices.push(i);
                    }
                }
                CandidateFileMode::Inline => {
                    let row = match line.strip_prefix('*') {
                        Some(rest) => {
                            if truth.replace(row_lines.len()).is_some() {
                                return Err(self.second_truth(self.line_no, &id));
                            }
                            rest
                        }
                        None => line.as_str(),
                    };
                    rows.push_str(row);
                    rows.push('\n');
                    row_lines.push(self.line_no);
                }
            }
        }
        let candidates = match self.mode {
            CandidateFileMode::Pool => CandidateList::Pool(indices),
            CandidateFileMode::Inline => {
                let y = Y::parse_rows(rows.split_terminator('\n'), self.width).map_err(|(i, msg)| Error::Parse {
                    path: self.path.clone(),
                    line: row_lines.get(i).copied().unwrap_or(self.line_no),
                    msg,
                })?;
                CandidateList::Inline(y)
            }
        };
        Ok(Some(Query { id, test_row, candidates, truth }))
    }
}

impl<Y: TextRows, R: BufRead> Iterator for CandidateFileReader<Y, R> {
    type Item = Result<Query<Y>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let q = self.read_query().transpose();
        if !matches!(q, Some(Ok(_))) {
            self.done = true;
        }
        q
    }
}

/// The per-query candidate file fuzz target (`cargo xtask fuzz per-query`):
/// reads `data` as an `okr-candidates 1` file of label-set, vector and
/// ranking rows (width 5), checks every query it yields (the true candidate
/// among its candidates; an empty query is the ranker's error), and parses
/// its lines as a candidate pool. It panics only on a bug of the reader.
#[doc(hidden)]
pub fn fuzz_candidate_file(data: &[u8]) {
    fn run<Y: TextRows>(data: &[u8]) {
        let reader = CandidateFileReader::<Y, _>::from_reader("fuzz", std::io::Cursor::new(data), 5);
        for query in reader.into_iter().flatten().take(1000) {
            let Ok(query) = query else { break };
            let n = match &query.candidates {
                CandidateList::Pool(indices) => indices.len(),
                CandidateList::Inline(rows) => rows.n_rows(),
            };
            assert!(query.truth.is_none_or(|t| t < n), "query {}: truth outside the list", query.id);
        }
        if let Ok(text) = std::str::from_utf8(data) {
            let rows: Vec<&str> = text.lines().collect();
            if let Ok(pool) = Y::parse_rows(rows.iter().copied(), 5) {
                assert_eq!(pool.n_rows(), rows.len(), "pool rows");
            }
        }
    }
    run::<LabelSets>(data);
    run::<DenseRows>(data);
    run::<Rankings>(data);
}
