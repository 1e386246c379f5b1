//! The README quotes only figures that a committed record shows (issue 37).
//!
//! A *figure* is a number in README.md's prose or tables (not in code
//! blocks or inline code) that has a decimal point (`46.12`, `0.38 s`) or a
//! unit (`1.26x`, `85%`, `775 s`, `221 GFLOP/s`). Each must be present in a
//! record under docs/results (a Markdown or JSON file): some number there
//! that rounds to it at the precision quoted (46.1249 shows 46.12; a
//! percentage may be stored as a fraction). Numbers that are requirements,
//! not measurements (versions), are listed in [`NOT_FIGURES`] with the
//! reason. The test below runs in `cargo test --workspace`, so in
//! `cargo xtask test` and CI: a figure without a record fails the run.

use std::path::Path;

use anyhow::{Context, Result};

/// README numbers that are not measurements: `(text, why)`.
pub const NOT_FIGURES: &[(&str, &str)] = &[
    ("1.90", "the minimum Rust version (rust-version)"),
    ("3.10", "the minimum Python version of the source build (requires-python)"),
    ("3.11", "the minimum Python version of the abi3 wheel (abi3-py311)"),
    ("2.17", "the glibc of the manylinux2014 wheel tag"),
];

/// Units that make an integer a figure.
const UNITS: &[&str] = &["x", "%", " s", " ms", " min", " GB", " MB", " GiB", " MiB", " GFLOP/s"];

/// One number quoted by the README.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    /// 1-based line of README.md.
    pub line: usize,
    /// The number as written, with its unit.
    pub text: String,
    /// Its value.
    pub value: f64,
    /// Digits after the decimal point.
    pub decimals: i32,
    /// Whether it is a percentage.
    pub percent: bool,
}

/// The text of `line` without inline code spans.
fn prose(line: &str) -> String {
    line.split('`').step_by(2).collect::<Vec<_>>().join(" ")
}

/// The figures of `readme` (see the module documentation).
pub fn quoted_figures(readme: &str) -> Vec<Figure> {
    let mut out = Vec::new();
    let mut in_code = false;
    for (i, raw) in readme.lines().enumerate() {
        if raw.trim_start().starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code {
            continue;
        }
        // Link targets name files, not figures.
        let line = prose(raw);
        let line = strip_link_targets(&line);
        let b = line.as_bytes();
        let mut j = 0;
        while j < b.len() {
            let starts = b[j].is_ascii_digit()
                && (j == 0 || !(b[j - 1].is_ascii_alphanumeric() || b"._-/:".contains(&b[j - 1])));
            if !starts {
                j += 1;
                continue;
            }
            let mut end = j;
            while end < b.len() && b[end].is_ascii_digit() {
                end += 1;
            }
            let mut decimals = 0;
            if end + 1 < b.len() && b[end] == b'.' && b[end + 1].is_ascii_digit() {
                end += 1;
                let frac = end;
                while end < b.len() && b[end].is_ascii_digit() {
                    end += 1;
                }
                decimals = (end - frac) as i32;
            }
            // Part of an identifier or a longer token (x86_64, 1e-5, 2000/120).
            if end < b.len() && (b[end].is_ascii_alphabetic() && b[end] != b'x' || b"_/".contains(&b[end])) {
                j = end;
                continue;
            }
            let rest = &line[end..];
            let unit = UNITS.iter().find(|u| {
                rest.starts_with(**u) && !rest[u.len()..].chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
            });
            let number = &line[j..end];
            if (decimals > 0 || unit.is_some()) && !NOT_FIGURES.iter().any(|(t, _)| *t == number) {
                out.push(Figure {
                    line: i + 1,
                    text: format!("{number}{}", unit.copied().unwrap_or("")),
                    value: number.parse().expect("digits with at most one point"),
                    decimals,
                    percent: unit.is_some_and(|u| *u == "%"),
                });
            }
            j = end;
        }
    }
    out
}

/// `line` with the `(target)` of every Markdown link `[text](target)` removed.
fn strip_link_targets(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find("](") {
        out.push_str(&rest[..=at]);
        rest = &rest[at + 2..];
        match rest.find(')') {
            Some(close) => rest = &rest[close + 1..],
            None => break,
        }
    }
    out.push_str(rest);
    out
}

/// Every number in `text` (a record), as written in any notation.
pub fn record_numbers(text: &str, into: &mut Vec<f64>) {
    let b = text.as_bytes();
    let mut j = 0;
    while j < b.len() {
        if !(b[j].is_ascii_digit() || b[j] == b'-' && j + 1 < b.len() && b[j + 1].is_ascii_digit()) {
            j += 1;
            continue;
        }
        let mut end = j + 1;
        while end < b.len()
            && (b[end].is_ascii_digit()
                || b".eE".contains(&b[end])
                || (b"+-".contains(&b[end]) && b"eE".contains(&b[end - 1])))
        {
            end += 1;
        }
        let token = text[j..end].trim_end_matches(['.', 'e', 'E']);
        if let Ok(v) = token.parse::<f64>() {
            into.push(v.abs());
        }
        j = end;
    }
}

/// Whether `v` shows `f` at the precision `f` is quoted with.
fn shows(v: f64, f: &Figure) -> bool {
    let half = 0.5 * 10f64.powi(-f.decimals) + 1e-9 * f.value.abs().max(1.0);
    (v - f.value).abs() <= half || f.percent && (100.0 * v - f.value).abs() <= half
}

/// The figures of `readme` that no number of `records` shows.
pub fn unrecorded(readme: &str, records: &[f64]) -> Vec<Figure> {
    let mut sorted = records.to_vec();
    sorted.sort_by(f64::total_cmp);
    quoted_figures(readme)
        .into_iter()
        .filter(|f| {
            let lo = sorted.partition_point(|&v| v < f.value - 1.0);
            let hi = sorted.partition_point(|&v| v <= f.value + 1.0);
            let near = sorted[lo..hi].iter().any(|&v| shows(v, f));
            !(near || f.percent && sorted.iter().any(|&v| v <= 1.0 && shows(v, f)))
        })
        .collect()
}

/// The numbers of every `.md` and `.json` record in `dir`.
pub fn records_in(dir: &Path) -> Result<Vec<f64>> {
    let mut values = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "md" || e == "json") {
            let text = std::fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
            record_numbers(&text, &mut values);
        }
    }
    Ok(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_figure_the_readme_quotes_is_in_a_committed_record() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
        let records = records_in(&root.join("docs/results")).unwrap();
        let missing = unrecorded(&readme, &records);
        let list: Vec<String> = missing.iter().map(|f| format!("README.md:{}: {}", f.line, f.text)).collect();
        assert!(list.is_empty(), "figures without a record under docs/results:\n{}", list.join("\n"));
        // The check reads the README's figures at all (not an empty pass).
        assert!(quoted_figures(&readme).len() > 100);
    }

    #[test]
    fn a_figure_without_a_record_is_reported() {
        let readme = "numpy took about 4.3 s; okr 2.30 s, F1 46.12 (1.26x, 85%).\n\
                      ```sh\nokr fit --lambda 1.5\n```\nRust 1.90, `uniform:1500`, x86_64, 2000/120 rows, [a](docs/1.5.md).\n";
        let figures: Vec<String> = quoted_figures(readme).iter().map(|f| f.text.clone()).collect();
        assert_eq!(figures, ["4.3 s", "2.30 s", "46.12", "1.26x", "85%"]);
        let mut records = Vec::new();
        record_numbers("| okr | 2.3041 | 46.1249 | 1.2612 | 0.852 |\n{\"t\": 4.36e0}", &mut records);
        let missing: Vec<String> = unrecorded(readme, &records).iter().map(|f| f.text.clone()).collect();
        // 4.36 does not show 4.3 at one decimal; 0.852 shows 85% as a fraction.
        assert_eq!(missing, ["4.3 s"]);
    }
}
