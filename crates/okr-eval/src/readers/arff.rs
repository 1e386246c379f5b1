//! Mulan ARFF: a header of `@attribute` lines, then dense or sparse data rows.
//!
//! The format as read here:
//!
//! - `@relation`, `@attribute` and `@data` (any case). Lines starting with `%`
//!   are comments; blank lines are skipped; CRLF and a missing final newline are fine.
//! - `@attribute NAME TYPE`: `NAME` is either quoted (`'...'` or `"..."`, with the
//!   escapes `\'`, `\"`, `\\`, `\%`, `\t`, `\n`, `\r`; any other `\x` is kept as
//!   written) or a bare word taken verbatim up to white space or `{` (so Mulan's
//!   `TAG_m\'usica` stays `TAG_m\'usica`, as in its XML label list). `TYPE` is
//!   `numeric`, `real`, `integer` or a nominal list `{v1,v2,...}`. A nominal value
//!   reads as the number it spells when every value of the list is a number
//!   (`{0,1}`), otherwise as its 0-based position in the list. `string`, `date`
//!   and `relational` attributes are rejected.
//! - Dense rows: one comma-separated value per attribute. Sparse rows:
//!   `{index value, ...}` with 0-based attribute indices in any order (each at
//!   most once); omitted attributes are 0. Text after a `%` on a data line is a comment.
//! - The labels are the **last `n_labels` attributes**; their values must be 0 or 1.
//! - Missing values (`?`) are rejected with a parse error: the Mulan benchmark
//!   files have none, and silently imputing them would change the data.
//!
//! The first data row decides the representation: a sparse first row gives
//! [`Features::Sparse`], a dense one [`Features::Dense`]; rows of the other kind
//! are converted (zeros of dense rows are dropped in sparse data).

use std::io::Write;
use std::path::Path;

use okr_kernels::{CsrRows, DenseRows, LabelSets, Rows};

use super::{LabelCount, excerpt, lines, parse_finite, push_f64, read_text, write_atomic};
use crate::{Dataset, Error, Features, Result};

/// Reads a Mulan ARFF file whose last `n_labels` attributes are the labels.
///
/// Sparse data rows give [`Features::Sparse`], dense rows [`Features::Dense`];
/// see the [module docs](self) for the accepted syntax.
///
/// # Errors
/// - [`Error::Io`] if the file cannot be read;
/// - [`Error::Parse`] (`path:line: what was expected`) for a malformed header line,
///   an unsupported attribute type, `n_labels` larger than the number of
///   attributes, a row with the wrong number of values, a missing (`?`), NaN or
///   infinite value, a label value other than 0/1, an attribute index out of
///   range or repeated, or a file without `@data`.
///
/// # Example
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("tiny.arff");
/// std::fs::write(&path, "@relation t\n@attribute 'x 1' numeric\n@attribute y {0,1}\n\
///                         @data\n{0 2.5,1 1}\n{}\n")?;
/// let data = okr_eval::read_arff(&path, 1)?;
/// assert_eq!((data.n_samples(), data.n_features(), data.n_labels()), (2, 1, 1));
/// assert!(data.x.is_sparse());
/// assert_eq!(data.feature_names, ["x 1"]);
/// assert_eq!(data.y.set(0), &[0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_arff(path: impl AsRef<Path>, n_labels: usize) -> Result<Dataset> {
    let path = path.as_ref();
    let text = read_text(path)?;
    parse_arff(&text, path, n_labels)
}

/// Writes `data` as an ARFF file: sparse rows (`{index value, ...}`) when the
/// features are sparse, dense rows otherwise. Features are declared `numeric`
/// and labels `{0,1}`, after the features, so `read_arff(path, data.n_labels())`
/// gives `data` back. Names are quoted when needed.
///
/// Data sets without samples read back dense (the representation follows the
/// first row); dense rows need at least one attribute (an empty dense row would be
/// a blank line).
///
/// # Errors
/// [`Error::ShapeMismatch`] if `data` is inconsistent ([`Dataset::check`]),
/// [`Error::InvalidArgument`] for dense samples without any attribute,
/// [`Error::Write`] if the file cannot be written.
///
/// # Example
/// ```
/// use okr_eval::{read_arff, write_arff, Dataset};
/// use okr_kernels::{DenseRows, LabelSets};
/// let x = DenseRows::from_rows(&[vec![0.5, -1.0], vec![2.0, 0.0]])?;
/// let data = Dataset::new(x.into(), LabelSets::new(3, vec![vec![0, 2], vec![]])?)?;
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("out.arff");
/// write_arff(&path, &data, "demo")?;
/// assert_eq!(read_arff(&path, 3)?, data);
/// Ok::<(), okr_eval::Error>(())
/// ```
pub fn write_arff(path: impl AsRef<Path>, data: &Dataset, relation: &str) -> Result<()> {
    data.check()?;
    if !data.x.is_sparse() && data.n_features() + data.n_labels() == 0 && data.n_samples() > 0 {
        return Err(Error::invalid("data", "dense rows without attributes", "at least one feature or label"));
    }
    let d = data.n_features();
    write_atomic(path.as_ref(), |w| {
        writeln!(w, "@relation {}\n", quote_name(relation))?;
        for name in data.feature_names.iter() {
            writeln!(w, "@attribute {} numeric", quote_name(&name))?;
        }
        for name in data.label_names.iter() {
            writeln!(w, "@attribute {} {{0,1}}", quote_name(&name))?;
        }
        writeln!(w, "\n@data")?;
        let mut line = String::new();
        for i in 0..data.n_samples() {
            line.clear();
            match &data.x {
                Features::Sparse(x) => {
                    line.push('{');
                    let (idx, val) = x.row(i);
                    for (&j, &v) in idx.iter().zip(val) {
                        if line.len() > 1 {
                            line.push(',');
                        }
                        line.push_str(&j.to_string());
                        line.push(' ');
                        push_f64(&mut line, v);
                    }
                    for &l in data.y.set(i) {
                        if line.len() > 1 {
                            line.push(',');
                        }
                        line.push_str(&(d + l).to_string());
                        line.push_str(" 1");
                    }
                    line.push('}');
                }
                Features::Dense(x) => {
                    let x = x.as_mat();
                    for j in 0..d {
                        push_f64(&mut line, x[(i, j)]);
                        line.push(',');
                    }
                    let set = data.y.set(i);
                    for l in 0..data.n_labels() {
                        line.push(if set.binary_search(&l).is_ok() { '1' } else { '0' });
                        line.push(',');
                    }
                    line.pop();
                }
            }
            line.push('\n');
            w.write_all(line.as_bytes())?;
        }
        Ok(())
    })
}

/// Quotes an attribute or relation name when a bare word would not read back as it.
fn quote_name(name: &str) -> String {
    let bare = !name.is_empty()
        && !name.starts_with('%')
        && !name.chars().any(|c| c.is_whitespace() || c.is_control() || "'\"\\{},%".contains(c));
    if bare {
        return name.to_string();
    }
    let mut s = String::with_capacity(name.len() + 2);
    s.push('\'');
    for c in name.chars() {
        match c {
            '\\' => s.push_str("\\\\"),
            '\'' => s.push_str("\\'"),
            '\n' => s.push_str("\\n"),
            '\r' => s.push_str("\\r"),
            '\t' => s.push_str("\\t"),
            c => s.push(c),
        }
    }
    s.push('\'');
    s
}

/// The type of an attribute.
#[derive(Debug)]
enum Kind {
    Numeric,
    /// Declared values and the number each stands for.
    Nominal {
        values: Vec<String>,
        numbers: Vec<f64>,
    },
}

#[derive(Debug)]
struct Attribute {
    name: String,
    kind: Kind,
}

impl Attribute {
    /// The number for a value token of this attribute.
    fn value(&self, tok: &str) -> std::result::Result<f64, String> {
        match &self.kind {
            Kind::Numeric => {
                let tok = unquote_value(tok);
                parse_finite(&tok, || format!("attribute '{}'", self.name))
            }
            Kind::Nominal { values, numbers } => {
                let tok = unquote_value(tok);
                if let Some(k) = values.iter().position(|v| *v == tok) {
                    return Ok(numbers[k]);
                }
                if tok == "?" {
                    return Err(format!(
                        "expected a value of attribute '{}', got the missing value '?' (not supported)",
                        self.name
                    ));
                }
                let shown: Vec<&str> = values.iter().take(10).map(String::as_str).collect();
                let more = if values.len() > 10 { ",..." } else { "" };
                Err(format!(
                    "expected one of {{{}{more}}} for attribute '{}', got '{}'",
                    shown.join(","),
                    self.name,
                    excerpt(&tok)
                ))
            }
        }
    }
}

/// Removes the quotes of a quoted value token (`'a'`, `"a"`), unescaping.
fn unquote_value(tok: &str) -> std::borrow::Cow<'_, str> {
    let b = tok.as_bytes();
    if b.len() >= 2 && (b[0] == b'\'' || b[0] == b'"') && b[b.len() - 1] == b[0] {
        match parse_quoted(tok) {
            Ok((s, "")) => std::borrow::Cow::Owned(s),
            _ => std::borrow::Cow::Borrowed(tok),
        }
    } else {
        std::borrow::Cow::Borrowed(tok)
    }
}

/// Parses a quoted string at the start of `s` (which starts with `'` or `"`),
/// returning it unescaped and the text after the closing quote.
fn parse_quoted(s: &str) -> std::result::Result<(String, &str), String> {
    let mut chars = s.char_indices();
    let (_, q) = chars.next().expect("caller checked the quote");
    let mut out = String::new();
    while let Some((i, c)) = chars.next() {
        if c == q {
            return Ok((out, &s[i + c.len_utf8()..]));
        }
        if c == '\\' {
            match chars.next() {
                Some((_, 'n')) => out.push('\n'),
                Some((_, 't')) => out.push('\t'),
                Some((_, 'r')) => out.push('\r'),
                Some((_, e @ ('\\' | '\'' | '"' | '%'))) => out.push(e),
                Some((_, e)) => {
                    out.push('\\');
                    out.push(e);
                }
                None => break,
            }
        } else {
            out.push(c);
        }
    }
    Err(format!("expected a closing {q} to end the quoted name"))
}

/// Parses the attribute name at the start of `s`; returns it and the rest.
fn parse_name(s: &str) -> std::result::Result<(String, &str), String> {
    let s = s.trim_start();
    if s.starts_with('\'') || s.starts_with('"') {
        return parse_quoted(s);
    }
    let end = s.find(|c: char| c.is_whitespace() || c == '{').unwrap_or(s.len());
    if end == 0 {
        return Err("expected an attribute name after @attribute".into());
    }
    Ok((s[..end].to_string(), &s[end..]))
}

/// Splits the inside of a nominal list `{a, 'b,c', d}` into unquoted values.
fn split_nominal(inner: &str) -> std::result::Result<Vec<String>, String> {
    let mut values = Vec::new();
    let mut rest = inner.trim_start();
    if rest.trim().is_empty() {
        return Err("expected at least one value in the nominal list {...}".into());
    }
    loop {
        let (value, after) = if rest.starts_with('\'') || rest.starts_with('"') {
            parse_quoted(rest)?
        } else {
            let end = rest.find(',').unwrap_or(rest.len());
            (rest[..end].trim().to_string(), &rest[end..])
        };
        if value.is_empty() {
            return Err("expected a value between the commas of the nominal list {...}".into());
        }
        values.push(value);
        let after = after.trim_start();
        match after.strip_prefix(',') {
            Some(next) => rest = next.trim_start(),
            None if after.is_empty() => return Ok(values),
            None => return Err(format!("expected ',' or '}}' in the nominal list, got '{}'", excerpt(after))),
        }
    }
}

/// Parses the type after the attribute name.
fn parse_type(s: &str) -> std::result::Result<Kind, String> {
    let s = s.trim();
    if let Some(body) = s.strip_prefix('{') {
        let close = body.rfind('}').ok_or("expected a closing '}' to end the nominal list")?;
        let tail = body[close + 1..].trim();
        if !tail.is_empty() && !tail.starts_with('%') {
            return Err(format!("expected nothing after the nominal list, got '{}'", excerpt(tail)));
        }
        let values = split_nominal(&body[..close])?;
        let parsed: Vec<Option<f64>> = values.iter().map(|v| v.parse::<f64>().ok().filter(|x| x.is_finite())).collect();
        let numbers = if parsed.iter().all(Option::is_some) {
            parsed.into_iter().map(Option::unwrap).collect()
        } else {
            (0..values.len()).map(|k| k as f64).collect()
        };
        return Ok(Kind::Nominal { values, numbers });
    }
    let (word, tail) = s.split_once(char::is_whitespace).unwrap_or((s, ""));
    let tail = tail.trim();
    if !tail.is_empty() && !tail.starts_with('%') {
        return Err(format!("expected nothing after the attribute type, got '{}'", excerpt(tail)));
    }
    match word.to_ascii_lowercase().as_str() {
        "numeric" | "real" | "integer" => Ok(Kind::Numeric),
        "" => Err("expected an attribute type (numeric, real, integer or {...}) after the name".into()),
        other => Err(format!(
            "expected an attribute type numeric, real, integer or a nominal list {{...}}, got '{}' \
             (string, date and relational attributes are not supported)",
            excerpt(other)
        )),
    }
}

/// Splits a data line at the commas outside quotes (`'a,b'` stays one field).
fn split_quoted_fields(line: &str) -> Vec<&str> {
    let mut fields = Vec::new();
    let mut start = 0;
    let mut quote = None;
    let mut escaped = false;
    for (i, c) in line.char_indices() {
        match quote {
            Some(q) => {
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == q {
                    quote = None;
                }
            }
            None if c == '\'' || c == '"' => quote = Some(c),
            None if c == ',' => {
                fields.push(&line[start..i]);
                start = i + 1;
            }
            None => {}
        }
    }
    fields.push(&line[start..]);
    fields
}

/// Collects rows into dense or CSR storage.
enum Sink {
    Dense { d: usize, data: Vec<f64>, n: usize },
    Sparse { indptr: Vec<usize>, indices: Vec<usize>, values: Vec<f64> },
}

impl Sink {
    fn push_dense(&mut self, row: &[f64]) {
        match self {
            Sink::Dense { data, n, .. } => {
                data.extend_from_slice(row);
                *n += 1;
            }
            Sink::Sparse { indptr, indices, values } => {
                for (j, &v) in row.iter().enumerate() {
                    if v != 0.0 {
                        indices.push(j);
                        values.push(v);
                    }
                }
                indptr.push(indices.len());
            }
        }
    }

    /// `row` sorted by index, no repeats.
    fn push_sparse(&mut self, row: &[(usize, f64)]) {
        match self {
            Sink::Dense { d, data, n } => {
                let start = data.len();
                data.resize(start + *d, 0.0);
                for &(j, v) in row {
                    data[start + j] = v;
                }
                *n += 1;
            }
            Sink::Sparse { indptr, indices, values } => {
                for &(j, v) in row {
                    indices.push(j);
                    values.push(v);
                }
                indptr.push(indices.len());
            }
        }
    }

    fn finish(self, d: usize) -> Result<Features> {
        Ok(match self {
            Sink::Dense { d, data, n } => {
                Features::Dense(DenseRows::new(faer::Mat::from_fn(n, d, |i, j| data[i * d + j]))?)
            }
            Sink::Sparse { indptr, indices, values } => Features::Sparse(CsrRows::new(d, indptr, indices, values)?),
        })
    }
}

/// Parses ARFF text; `path` is only used in messages.
pub(crate) fn parse_arff(text: &str, path: &Path, n_labels: usize) -> Result<Dataset> {
    parse_arff_with(text, path, LabelCount::Fixed(n_labels))
}

/// Parses ARFF text whose label count `labels` decides from the number of attributes.
pub(crate) fn parse_arff_with(text: &str, path: &Path, labels: LabelCount) -> Result<Dataset> {
    let err = |line: usize, msg: String| Error::parse(path, line, msg);
    let mut attrs: Vec<Attribute> = Vec::new();
    let mut it = lines(text);
    let mut last_line = 0;
    let mut data_line = None;
    for (no, raw) in it.by_ref() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('%') {
            continue;
        }
        last_line = no;
        let (kw, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        match kw.to_ascii_lowercase().as_str() {
            "@relation" => {}
            "@attribute" => {
                let (name, rest) = parse_name(rest).map_err(|m| err(no, m))?;
                let kind = parse_type(rest).map_err(|m| err(no, format!("attribute '{name}': {m}")))?;
                attrs.push(Attribute { name, kind });
            }
            "@data" => {
                data_line = Some(no);
                break;
            }
            _ => {
                return Err(err(no, format!("expected @relation, @attribute or @data, got '{}'", excerpt(line))));
            }
        }
    }
    let Some(data_line) = data_line else {
        return Err(err(last_line.max(1), "expected an @data line after the @attribute lines".into()));
    };
    let n_attr = attrs.len();
    let n_labels = labels.resolve(n_attr, "attributes before @data").map_err(|m| err(data_line, m))?;
    let d = n_attr - n_labels;

    let mut sink: Option<Sink> = None;
    let mut sets: Vec<Vec<usize>> = Vec::new();
    let mut dense_row = vec![0.0; n_attr];
    let mut sparse_row: Vec<(usize, f64)> = Vec::new();
    let mut labels: Vec<usize> = Vec::new();
    let label_of = |j: usize, v: f64, labels: &mut Vec<usize>| -> std::result::Result<(), String> {
        if v == 1.0 {
            labels.push(j - d);
        } else if v != 0.0 {
            return Err(format!("expected 0 or 1 for label attribute '{}', got {v}", attrs[j].name));
        }
        Ok(())
    };
    for (no, raw) in it {
        let mut line = raw.trim();
        if line.is_empty() || line.starts_with('%') {
            continue;
        }
        if let Some(p) = line.find('%')
            && !line[..p].contains(['\'', '"'])
        {
            line = line[..p].trim_end();
        }
        labels.clear();
        if let Some(body) = line.strip_prefix('{') {
            let close = body.find('}').ok_or_else(|| err(no, "expected a closing '}' to end the sparse row".into()))?;
            let tail = body[close + 1..].trim();
            if !tail.is_empty() {
                return Err(err(
                    no,
                    format!(
                        "expected the sparse row to end at '}}', got '{}' (instance weights are not supported)",
                        excerpt(tail)
                    ),
                ));
            }
            let body = &body[..close];
            sparse_row.clear();
            if !body.trim().is_empty() {
                for entry in body.split(',') {
                    let entry = entry.trim();
                    let Some((idx, val)) = entry.split_once(char::is_whitespace) else {
                        return Err(err(
                            no,
                            format!("expected 'index value' in the sparse row, got '{}'", excerpt(entry)),
                        ));
                    };
                    let j: usize = idx.parse().map_err(|_| {
                        err(no, format!("expected a 0-based attribute index in the sparse row, got '{}'", excerpt(idx)))
                    })?;
                    if j >= n_attr {
                        return Err(err(no, format!("expected an attribute index < {n_attr} (0-based), got {j}")));
                    }
                    let v = attrs[j].value(val.trim()).map_err(|m| err(no, m))?;
                    sparse_row.push((j, v));
                }
            }
            if !sparse_row.is_sorted_by_key(|e| e.0) {
                sparse_row.sort_unstable_by_key(|e| e.0);
            }
            if let Some(w) = sparse_row.windows(2).find(|w| w[0].0 == w[1].0) {
                return Err(err(no, format!("expected each attribute index at most once, got {} twice", w[0].0)));
            }
            let split = sparse_row.partition_point(|e| e.0 < d);
            for &(j, v) in &sparse_row[split..] {
                label_of(j, v, &mut labels).map_err(|m| err(no, m))?;
            }
            sink.get_or_insert_with(|| Sink::Sparse { indptr: vec![0], indices: Vec::new(), values: Vec::new() })
                .push_sparse(&sparse_row[..split]);
        } else {
            let quoted = if line.contains(['\'', '"']) { Some(split_quoted_fields(line)) } else { None };
            let count = match &quoted {
                Some(f) => f.len(),
                None => line.bytes().filter(|&b| b == b',').count() + 1,
            };
            if count != n_attr {
                return Err(err(
                    no,
                    format!("expected {n_attr} comma-separated values (one per attribute), got {count}"),
                ));
            }
            let fields: Box<dyn Iterator<Item = &str>> = match &quoted {
                Some(f) => Box::new(f.iter().copied()),
                None => Box::new(line.split(',')),
            };
            for (j, tok) in fields.enumerate() {
                let v = attrs[j].value(tok.trim()).map_err(|m| err(no, m))?;
                if j < d {
                    dense_row[j] = v;
                } else {
                    label_of(j, v, &mut labels).map_err(|m| err(no, m))?;
                }
            }
            sink.get_or_insert_with(|| Sink::Dense { d, data: Vec::new(), n: 0 }).push_dense(&dense_row[..d]);
        }
        sets.push(labels.clone());
    }
    let x = sink.unwrap_or(Sink::Dense { d, data: Vec::new(), n: 0 }).finish(d)?;
    let y = LabelSets::new(n_labels, sets)?;
    let mut names = attrs.into_iter().map(|a| a.name);
    let feature_names: Vec<String> = names.by_ref().take(d).collect();
    let label_names: Vec<String> = names.collect();
    debug_assert_eq!(x.n_rows(), y.n_rows());
    Dataset::with_names(x, y, feature_names, label_names)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn parse(text: &str, n_labels: usize) -> Result<Dataset> {
        parse_arff(text, Path::new("data/t.arff"), n_labels)
    }

    /// Asserts a parse error at `line` whose message contains every piece of `expect`.
    fn parse_err(text: &str, n_labels: usize, line: usize, expect: &[&str]) {
        let e = parse(text, n_labels).unwrap_err();
        let msg = e.to_string();
        assert!(msg.starts_with(&format!("data/t.arff:{line}: ")), "{msg}");
        for piece in expect {
            assert!(msg.contains(piece), "{msg:?} lacks {piece:?}");
        }
        assert!(matches!(e, Error::Parse { line: l, .. } if l == line));
    }

    const HEAD: &str =
        "@relation r\n@attribute a numeric\n@attribute b numeric\n@attribute y0 {0,1}\n@attribute y1 {0,1}\n@data\n";

    #[test]
    fn dense_rows() {
        let d = parse(&format!("{HEAD}1,2.5,0,1\n-3e-2,0,1,1\n"), 2).unwrap();
        assert!(!d.x.is_sparse());
        assert_eq!(d.x.to_dense()[(1, 0)], -0.03);
        assert_eq!(d.y.set(0), &[1]);
        assert_eq!(d.y.set(1), &[0, 1]);
        assert_eq!(d.feature_names, ["a", "b"]);
        assert_eq!(d.label_names, ["y0", "y1"]);
    }

    #[test]
    fn sparse_rows_crlf_comments_no_final_newline() {
        let text = "% comment\r\n@RELATION 'r r'\r\n\r\n@ATTRIBUTE a NUMERIC\r\n@attribute 'b\\'c' real % note\r\n\
                    @attribute \"y 0\" {0,1}\r\n@attribute y1 { 0 , 1 }\r\n@data\r\n% c\r\n{1 2,3 1}\r\n\r\n{}\r\n{2 1, 0 -1}";
        let d = parse(text, 2).unwrap();
        assert!(d.x.is_sparse());
        assert_eq!(d.n_samples(), 3);
        assert_eq!(d.feature_names, ["a", "b'c"]);
        assert_eq!(d.label_names, ["y 0", "y1"]);
        let x = d.x.as_sparse().unwrap();
        assert_eq!(x.row(0), (&[1usize][..], &[2.0][..]));
        assert_eq!(x.row(1).0.len(), 0);
        assert_eq!(x.row(2), (&[0usize][..], &[-1.0][..]));
        assert_eq!(d.y.set(0), &[1]);
        assert_eq!(d.y.set(2), &[0]);
    }

    #[test]
    fn mulan_names() {
        let text = "@relation d\n@attribute TAG_m\\'usica {0,1}\n@attribute 'TAG_m\\'usica' {0,1}\n\
                    @attribute TAG_dise\\~no {0,1}\n@attribute TAG_?? {0,1}\n@data\n{0 1,3 1}\n";
        let d = parse(text, 2).unwrap();
        assert_eq!(d.feature_names, ["TAG_m\\'usica", "TAG_m'usica"]);
        assert_eq!(d.label_names, ["TAG_dise\\~no", "TAG_??"]);
        assert_eq!(d.y.set(0), &[1]);
    }

    #[test]
    fn nominal_values() {
        let text =
            "@relation r\n@attribute c {low,'mid, high',top}\n@attribute y {'0','1'}\n@data\n'mid, high','1'\ntop,0\n";
        let d = parse(text, 1).unwrap();
        assert_eq!(d.x.to_dense()[(0, 0)], 1.0);
        assert_eq!(d.x.to_dense()[(1, 0)], 2.0);
        assert_eq!(d.y.set(0), &[0]);
    }

    #[test]
    fn mixed_rows_follow_the_first() {
        let d = parse(&format!("{HEAD}{{0 1,2 1}}\n0,3,0,0\n"), 2).unwrap();
        let x = d.x.as_sparse().unwrap();
        assert_eq!(x.row(1), (&[1usize][..], &[3.0][..]));
        let d = parse(&format!("{HEAD}0,3,0,0\n{{0 1,2 1}}\n"), 2).unwrap();
        assert_eq!(d.x.to_dense()[(1, 0)], 1.0);
        assert_eq!(d.y.set(1), &[0]);
    }

    #[test]
    fn no_rows_and_no_labels() {
        let d = parse(HEAD, 2).unwrap();
        assert_eq!((d.n_samples(), d.n_features(), d.n_labels()), (0, 2, 2));
        let d = parse(&format!("{HEAD}1,2,0,1\n"), 0).unwrap();
        assert_eq!((d.n_features(), d.n_labels()), (4, 0));
    }

    #[test]
    fn errors_name_path_line_and_expectation() {
        parse_err(&format!("{HEAD}1,2,0\n"), 2, 7, &["expected 4 comma-separated values", "got 3"]);
        parse_err(&format!("{HEAD}1,2,0,1\n1,2,0,1,5\n"), 2, 8, &["expected 4", "got 5"]);
        parse_err(&format!("{HEAD}1,2,0,2\n"), 2, 7, &["expected one of {0,1}", "'y1'", "got '2'"]);
        parse_err(&format!("{HEAD}1,?,0,1\n"), 2, 7, &["expected a number for attribute 'b'", "'?'"]);
        parse_err(&format!("{HEAD}1,NaN,0,1\n"), 2, 7, &["expected a finite number", "'b'", "NaN"]);
        parse_err(&format!("{HEAD}1,inf,0,1\n"), 2, 7, &["expected a finite number"]);
        parse_err(&format!("{HEAD}1,x,0,1\n"), 2, 7, &["expected a number for attribute 'b'", "got 'x'"]);
        parse_err(HEAD, 5, 6, &["expected at least n_labels = 5 attributes", "found 4"]);
        parse_err(&format!("{HEAD}{{0 1,7 1}}\n"), 2, 7, &["expected an attribute index < 4", "got 7"]);
        parse_err(&format!("{HEAD}{{0 1,0 2}}\n"), 2, 7, &["at most once", "0 twice"]);
        parse_err(&format!("{HEAD}{{0 1,1}}\n"), 2, 7, &["expected 'index value'", "got '1'"]);
        parse_err(&format!("{HEAD}{{a 1}}\n"), 2, 7, &["expected a 0-based attribute index", "got 'a'"]);
        parse_err(&format!("{HEAD}{{0 1\n"), 2, 7, &["expected a closing '}'"]);
        parse_err(&format!("{HEAD}{{0 1}},{{3}}\n"), 2, 7, &["expected the sparse row to end", "weights"]);
        parse_err(&format!("{HEAD}{{3 0.5}}\n"), 2, 7, &["expected one of {0,1}", "'y1'"]);
        let num_labels = "@relation r\n@attribute a numeric\n@attribute y numeric\n@data\n1,0.5\n";
        parse_err(num_labels, 1, 5, &["expected 0 or 1 for label attribute 'y'", "0.5"]);
        parse_err("@relation r\n@attribute a numeric\n", 0, 2, &["expected an @data line"]);
        parse_err(
            "@relation r\n@attribute s string\n@data\n",
            0,
            2,
            &["attribute 's'", "expected an attribute type", "'string'"],
        );
        parse_err("@relation r\n@attribute 'abc numeric\n@data\n", 0, 2, &["expected a closing '"]);
        parse_err("@relation r\n@attribute\n@data\n", 0, 2, &["expected an attribute name"]);
        parse_err("@relation r\n@attribute a {0,1\n@data\n", 0, 2, &["expected a closing '}'"]);
        parse_err("@relation r\n@attribute a {0,,1}\n@data\n", 0, 2, &["expected a value between the commas"]);
        parse_err(
            "@relation r\n@attribute a numeric extra\n@data\n",
            0,
            2,
            &["expected nothing after the attribute type"],
        );
        parse_err("@relation r\nbogus line\n", 0, 2, &["expected @relation, @attribute or @data", "'bogus line'"]);
        parse_err("@relation r\n@attribute a\n@data\n", 0, 2, &["expected an attribute type"]);
    }

    #[test]
    fn io_error_names_the_path() {
        let e = read_arff("data/x.arff", 1).unwrap_err();
        assert_eq!(e.to_string(), "cannot open data/x.arff: No such file or directory");
    }

    #[test]
    fn quoting_round_trips() {
        for name in
            ["plain", "with space", "q'uote", "back\\slash", "TAG_m\\'usica", "", "%pct", "a{b}", "tab\tnl\n", "\"dq\""]
        {
            let q = quote_name(name);
            let line = format!("{q} numeric");
            let (back, rest) = parse_name(&line).unwrap();
            assert_eq!(back, name, "{q}");
            assert_eq!(rest.trim(), "numeric");
        }
    }

    #[test]
    fn write_then_read() {
        let dir = tempfile::tempdir().unwrap();
        let path: PathBuf = dir.path().join("w.arff");
        let x = CsrRows::from_rows(3, vec![vec![(0, 0.1), (2, -7.25)], vec![], vec![(1, 1e-12)]]).unwrap();
        let y = LabelSets::new(2, vec![vec![1], vec![0, 1], vec![]]).unwrap();
        let mut data = Dataset::new(x.into(), y).unwrap();
        data.feature_names.set(1, "odd 'name' \\ here");
        write_arff(&path, &data, "my relation").unwrap();
        assert_eq!(read_arff(&path, 2).unwrap(), data);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.ends_with("@data\n{0 0.1,2 -7.25,4 1}\n{3 1,4 1}\n{1 1e-12}\n"), "{text}");
    }
}
