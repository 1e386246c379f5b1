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
    /// Builds a container from rows of text of `width` features or labels.
    ///
    /// # Errors
    /// The index of the first malformed row and what is wrong with it.
    fn parse_rows(rows: &[&str], width: usize) -> std::result::Result<Self, (usize, String)>;
}

fn tokens(text: &str) -> impl Iterator<Item = &str> {
    okr_io::rows::fields(text)
}

/// Label sets and binary fingerprints: the 0-based indices of the set bits
/// (`-` for none), each `< width` ([`okr_io::rows::parse_index_set`]).
impl TextRows for LabelSets {
    fn parse_rows(rows: &[&str], width: usize) -> std::result::Result<Self, (usize, String)> {
        let sets = rows
            .iter()
            .enumerate()
            .map(|(i, row)| okr_io::rows::parse_index_set(row, width).map_err(|e| (i, e.to_string())))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        LabelSets::new(width, sets).map_err(|e| (0, e.to_string()))
    }
}

/// Dense vectors: `width` finite values ([`okr_io::rows::parse_values`]).
impl TextRows for DenseRows {
    fn parse_rows(rows: &[&str], width: usize) -> std::result::Result<Self, (usize, String)> {
        let mut data = Mat::zeros(rows.len(), width);
        for (i, row) in rows.iter().enumerate() {
            let values = okr_io::rows::parse_values(row).map_err(|e| (i, e.to_string()))?;
            okr_io::rows::check_width(&mut Some(width), values.len()).map_err(|e| (i, e.to_string()))?;
            for (j, v) in values.into_iter().enumerate() {
                data[(i, j)] = v;
            }
        }
        DenseRows::new(data).map_err(|e| (0, e.to_string()))
    }
}

/// Rankings: the `width` ranks of the items, 1 = most preferred (the rank
/// columns of a label-ranking file), a permutation of `1..=width`.
impl TextRows for Rankings {
    fn parse_rows(rows: &[&str], width: usize) -> std::result::Result<Self, (usize, String)> {
        let mut out = Vec::with_capacity(rows.len());
        for (i, row) in rows.iter().enumerate() {
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
    fn parse_rows(_rows: &[&str], _width: usize) -> std::result::Result<Self, (usize, String)> {
        Err((0, "graphs cannot be listed inline: use a pool-mode file with a pool of graphs (TU data set)".into()))
    }
}

/// Reads a candidate pool file: one output per line in the row syntax of
/// [`TextRows`]; `#` comment lines and blank lines are skipped.
///
/// # Errors
/// [`Error::Io`], [`Error::Parse`] naming the line.
pub fn read_candidate_pool<Y: TextRows>(path: impl AsRef<Path>, width: usize) -> Result<Y> {
    let path = path.as_ref();
    let name = path.display().to_string();
    let text = okr_io::bounded::read_text(path, okr_io::bounded::MAX_INPUT_BYTES)
        .map_err(|e| Error::Io { path: name.clone(), msg: e.to_string() })?;
    let (lines, rows): (Vec<usize>, Vec<&str>) = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .map(|(i, l)| (i + 1, l))
        .unzip();
    Y::parse_rows(&rows, width).map_err(|(i, msg)| Error::Parse {
        path: name,
        line: lines.get(i).copied().unwrap_or(0),
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

    fn read_query(&mut self) -> Result<Option<Query<Y>>> {
        if self.pending.is_none() {
            match self.next_line()? {
                None => return Ok(None),
                Some(line) => self.pending = Some(self.parse_header(&line)?),
            }
        }
        let (id, test_row, _) = self.pending.take().expect("set above");
        // Candidate lines up to the next header.
        let mut body: Vec<(usize, String)> = Vec::new();
        while let Some(line) = self.next_line()? {
            if line.starts_with("query") && line.split_whitespace().next() == Some("query") {
                self.pending = Some(self.parse_header(&line)?);
                break;
            }
            body.push((self.line_no, line));
        }
        let mut truth = None;
        let mut mark = |line: usize, pos: usize| -> Result<()> {
            if truth.replace(pos).is_some() {
                return Err(Error::Parse {
                    path: self.path.clone(),
                    line,
                    msg: format!("query {id}: a second true candidate"),
                });
            }
            Ok(())
        };
        let candidates = match self.mode {
            CandidateFileMode::Pool => {
                let mut idx = Vec::new();
                for (line, text) in &body {
                    for tok in tokens(text) {
                        let (star, num) = tok.strip_prefix('*').map_or((false, tok), |n| (true, n));
                        let i: usize = num.parse().map_err(|_| Error::Parse {
                            path: self.path.clone(),
                            line: *line,
                            msg: format!("expected a pool index, found {tok:?}"),
                        })?;
                        if star {
                            mark(*line, idx.len())?;
                        }
                        idx.push(i);
                    }
                }
                CandidateList::Pool(idx)
            }
            CandidateFileMode::Inline => {
                let mut rows = Vec::with_capacity(body.len());
                for (pos, (line, text)) in body.iter().enumerate() {
                    let row = match text.strip_prefix('*') {
                        Some(rest) => {
                            mark(*line, pos)?;
                            rest
                        }
                        None => text.as_str(),
                    };
                    rows.push(row);
                }
                let y = Y::parse_rows(&rows, self.width).map_err(|(i, msg)| Error::Parse {
                    path: self.path.clone(),
                    line: body.get(i).map_or(self.line_no, |b| b.0),
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
            if let Ok(pool) = Y::parse_rows(&rows, 5) {
                assert_eq!(pool.n_rows(), rows.len(), "pool rows");
            }
        }
    }
    run::<LabelSets>(data);
    run::<DenseRows>(data);
    run::<Rankings>(data);
}
