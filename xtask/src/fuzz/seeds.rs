//! Seed inputs per target: the first KB of each shared data file of the
//! target's format (`OKR_DATA_DIR`), files written by okr's own writers from
//! a small stand-in, and small hand-made files. The option byte that some
//! targets read first (see [`okr_eval::fuzz`]) is prepended where needed.

use std::path::Path;

use okr_eval::StandinPreset;

/// How much of a data file a seed keeps.
const SEED_BYTES: usize = 4 << 10;

/// The first [`SEED_BYTES`] of `path`, or `None` if it cannot be read.
fn head(path: &Path) -> Option<Vec<u8>> {
    let mut bytes = std::fs::read(path).ok()?;
    bytes.truncate(SEED_BYTES);
    Some(bytes)
}

/// Heads of the files under `dir` (one level of sub-folders) whose name ends with `suffix`.
fn data_files(dir: &Path, suffix: &str) -> Vec<Vec<u8>> {
    fn list(d: &Path) -> Vec<std::path::PathBuf> {
        std::fs::read_dir(d).map(|it| it.flatten().map(|e| e.path()).collect()).unwrap_or_default()
    }
    let mut paths = list(dir);
    let subdirs: Vec<_> = paths.iter().filter(|p| p.is_dir()).cloned().collect();
    for d in subdirs {
        paths.extend(list(&d));
    }
    paths.retain(|p| p.is_file() && p.to_string_lossy().ends_with(suffix));
    paths.sort();
    paths.iter().filter_map(|p| head(p)).collect()
}

/// A file written by an okr writer from a small stand-in.
fn written(write: impl FnOnce(&Path, &okr_eval::Dataset) -> okr_eval::Result<()>, sparse: bool) -> Vec<Vec<u8>> {
    let preset = if sparse { StandinPreset::Bibtex } else { StandinPreset::Emotions };
    let Ok((train, _)) = preset.spec().sizes(6, 1).generate() else { return Vec::new() };
    let Ok(dir) = tempfile::tempdir() else { return Vec::new() };
    let path = dir.path().join("seed");
    if write(&path, &train).is_err() {
        return Vec::new();
    }
    head(&path).into_iter().collect()
}

fn with_option(opt: u8, files: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
    files
        .into_iter()
        .map(|f| {
            let mut v = vec![opt];
            v.extend(f);
            v
        })
        .collect()
}

fn hand(texts: &[&str]) -> Vec<Vec<u8>> {
    texts.iter().map(|t| t.as_bytes().to_vec()).collect()
}

/// The seeds of `target`.
pub fn for_target(target: &str) -> Vec<Vec<u8>> {
    let data = okr_eval::data_dir();
    match target {
        "arff" => {
            let mut s = with_option(6, data_files(&data, ".arff"));
            s.extend(with_option(6, written(|p, d| okr_eval::write_arff(p, d, "seed"), false)));
            s.extend(with_option(3, written(|p, d| okr_eval::write_arff(p, d, "seed"), true)));
            s.extend(with_option(
                1,
                hand(&["@relation t\n@attribute 'x 1' numeric\n@attribute y {0,1}\n@data\n{0 2.5,1 1}\n{}\n1.5,0\n"]),
            ));
            s
        }
        "svmlight" => {
            let mut s = with_option(0, written(|p, d| okr_eval::write_svmlight(p, d, false), true));
            s.extend(with_option(1, written(|p, d| okr_eval::write_svmlight(p, d, true), false)));
            s.extend(with_option(6, hand(&["# c\n1,0 3:2.5 1:1 # t\n\n 2:-1\n4\n3:1e3", "0 16777216:1\n"])));
            s
        }
        "xc" => {
            let mut s = written(|p, d| okr_eval::write_xc(p, d), true);
            s.extend(hand(&["3 4 2\n1 0:1\n\n 3:1\n0,1 1:2 # x", "1 16777216 16777216\n16777215 16777215:1\n"]));
            s
        }
        "csv" => {
            let mut s = with_option(6, written(|p, d| okr_eval::write_csv(p, d), false));
            s.extend(with_option(
                2,
                hand(&["height,\"weight, kg\",tall,heavy\n1.8,90,1,1\n1.6,55,0,0\n", "0,1,2,3\n0.5,1,1,0\n"]),
            ));
            s.extend(with_option(0x21, hand(&["1,2,0\r\n3, 4 ,1\r\n\r\n"])));
            s
        }
        "candidates" => with_option(5, hand(&["# candidates\n2,0\n\n1\n", "0,1,2,3,4\n4\n\n"])),
        "anchors" => hand(&["0,1,2\n3\n", "7\n\n8, 9\n"]),
        "sample-weights" => hand(&["# weights\n1\n2.5\n\n0.5\n", "1e-3\n-1\nnan\ninf\n0\n"]),
        "ratings" => {
            let mut s = data_files(&data, "_ratings.csv");
            s.extend(hand(&["user,item,rating\n0,4,-1.5\n2,0,3\n"]));
            s
        }
        "label-ranking" => {
            let mut s = data_files(&data.join("label_ranking"), ".csv");
            s.extend(hand(&["2,1,3\n0.5,1,2,3\n-1,3,1,2\n"]));
            s
        }
        "tu" => {
            let mut s = Vec::new();
            for name in ["MUTAG", "PTC_MR"] {
                let dir = data.join("tudataset").join(name);
                let parts: Vec<Vec<u8>> = ["A", "graph_indicator", "graph_labels", "node_labels", "edge_labels"]
                    .iter()
                    .filter_map(|p| head(&dir.join(format!("{name}_{p}.txt"))))
                    .collect();
                if parts.len() >= 3 {
                    let refs: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
                    s.push(okr_eval::fuzz::join_tu_parts(&refs));
                }
            }
            s.push(okr_eval::fuzz::join_tu_parts(&[b"1, 2\n2, 1\n3, 3\n", b"1\n1\n2\n", b"1\n-1\n", b"0\n1\n0\n"]));
            s
        }
        "per-query" => hand(&[
            "okr-candidates 1 inline\n# comment\nquery q1 0\n3 1 4\n*0 2\n\nquery q2 1\n-\n",
            "okr-candidates 1 inline\nquery v 0\n0.5 -1 2e3 0 1\n*1,1,1,1,1\n",
            "okr-candidates 1 inline\nquery r 2\n1 2 3 4 5\n*5,4,3,2,1\n",
            "okr-candidates 1 pool\nquery a 0\n12 40 *7\n3\nquery b 1\n0 0 1\n",
            "0 1\n2 3 4\n-\n",
        ]),
        "model" => {
            // The golden model files of every estimator.
            let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../crates/okr-estimators/tests/fixtures");
            let mut paths: Vec<_> = std::fs::read_dir(&dir).into_iter().flatten().flatten().map(|e| e.path()).collect();
            paths.retain(|p| p.extension().is_some_and(|e| e == "okrmodel"));
            paths.sort();
            // Whole files: a cut model file stops at the length check.
            paths.iter().filter_map(|p| std::fs::read(p).ok()).collect()
        }
        "usps" => {
            let mut s = data_files(&data.join("usps"), ".txt");
            let line = std::iter::once("3".to_string()).chain((0..256).map(|j| format!("{:.4}", (j % 7) as f64 / 7.0)));
            s.push(format!("{}\n", line.collect::<Vec<_>>().join(" ")).into_bytes());
            s
        }
        "mgf" => {
            let mut s = data_files(&data, ".mgf");
            s.extend(hand(&[
                "BEGIN IONS\nPEPMASS=183.057 1200\nCHARGE=1-\nIONMODE=negative\nNAME=Fuberidazole M-H\n\
                 SMILES=C1=CC=C2C(=C1)NC(=N2)C3=CC=CO3\nINCHI=InChI=1S/C11H8N2O/c1-2-5-9-8(4-1)12-11(13-9)10-6-3-7-14-10\n\
                 INCHIKEY=XXXXXXXXXXXXXX-UHFFFAOYSA-N\n70.786774\t213.612045\n94.917038\t10964.588867\nEND IONS\n\n\
                 BEGIN IONS\nTITLE=t\nPEPMASS=0.0\nCHARGE=2+ and 3+\n1e2 5 1+\nEND IONS\n",
                "# comment\r\nCOM=global\r\nBEGIN IONS\r\nEND IONS\r\n",
            ]));
            s
        }
        "msp" => {
            let mut s = data_files(&data, ".msp");
            s.extend(hand(&[
                "Name: ADP\nInChIKey: XTWYTFMLZFPYCI-UHFFFAOYSA-N\nSMILES: C1=NC2=C(C(=N1)N)N=CN2\n\
                 PrecursorMZ: 428.31\nIon_mode: POSITIVE\nCharge: 1+\nFormula: C10H15N5O10P2\nNum Peaks: 3\n\
                 135.0 83; 136.0 999;\n210 5 \"y1\"\n\nName: empty\nNum Peaks: 0\n",
                "Name: JWH 081\r\nNum peaks: 4\r\n  40  147;  41   57;\r\n  42   13;  43   52;\r\n",
            ]));
            s
        }
        "npy" => {
            use okr_eval::fuzz::npy_bytes;
            let f8: Vec<u8> = [1.0f64, 0.25, 0.25, 1.0].iter().flat_map(|v| v.to_le_bytes()).collect();
            let f4: Vec<u8> = [1.0f32, 0.5, 0.5, 1.0, 0.0, 2.0].iter().flat_map(|v| v.to_be_bytes()).collect();
            vec![
                npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }", &f8),
                npy_bytes("{'descr': '>f4', 'fortran_order': True, 'shape': (2, 3), }", &f4),
                // C4: a shape whose product wraps.
                npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", &f8),
            ]
        }
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_target_has_seeds() {
        for (name, _) in super::super::targets() {
            assert!(!for_target(name).is_empty(), "{name}");
        }
    }
}
