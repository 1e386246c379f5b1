//! The benchmark data sets okr knows by name (`okr data list`, `okr data
//! fetch`, `--dataset NAME`): their files, sizes and SHA-256 checksums (of the
//! files as distributed, the same bytes as the project's data directory holds),
//! and the checksum of a file on disk. With the `download` feature,
//! `fetch` downloads a set from a mirror and writes a file only when its
//! size and checksum are the catalog's.
//!
//! # Example
//! ```
//! use okr_eval::catalog;
//! let emotions = catalog::find("Emotions").expect("in the catalog");
//! assert_eq!(emotions.n_labels, Some(6));
//! assert_eq!(emotions.train_test(), Some(("emotions/emotions-train.arff", "emotions/emotions-test.arff")));
//! // A file counts as there when it has the catalog's size and checksum.
//! let empty = tempfile::tempdir().unwrap();
//! assert!(!emotions.files[0].is_verified_in(empty.path()));
//! ```

use std::io::{self, Read};
use std::path::Path;

use sha2::{Digest, Sha256};

#[cfg(feature = "download")]
mod fetch;
#[cfg(feature = "download")]
pub use fetch::{MAX_TIMEOUT, Outcome, fetch};

/// One file of a data set, at `path` under the data directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataFile {
    /// Path under `OKR_DATA_DIR` (and under a mirror's base URL).
    pub path: &'static str,
    /// SHA-256 of the file, lowercase hex.
    pub sha256: &'static str,
    /// Size in bytes.
    pub bytes: u64,
}

/// A data set of the catalog: its files and, for multi-label sets, the label count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// Name as given to `okr data fetch` and `--dataset`.
    pub name: &'static str,
    /// What it is and where it comes from.
    pub description: &'static str,
    /// Number of labels (the last ARFF attributes) of a multi-label set.
    pub n_labels: Option<usize>,
    /// Its files.
    pub files: &'static [DataFile],
}

impl Entry {
    /// The training and test files of a multi-label set.
    pub fn train_test(&self) -> Option<(&'static str, &'static str)> {
        let find = |part: &str| self.files.iter().find(|f| f.path.ends_with(&format!("-{part}.arff"))).map(|f| f.path);
        Some((find("train")?, find("test")?))
    }

    /// Total size of its files in bytes.
    pub fn bytes(&self) -> u64 {
        self.files.iter().map(|f| f.bytes).sum()
    }
}

impl DataFile {
    /// Whether the file is in `dir` with the catalog's size and SHA-256 (an
    /// unreadable file is not).
    pub fn is_verified_in(&self, dir: &Path) -> bool {
        let path = dir.join(self.path);
        std::fs::metadata(&path).is_ok_and(|m| m.is_file() && m.len() == self.bytes)
            && file_sha256(&path).ok().as_deref() == Some(self.sha256)
    }
}

/// Every data set, in the order `okr data list` prints them.
pub const DATASETS: &[Entry] = &[
    Entry {
        name: "emotions",
        description: "Mulan: music emotions (Trohidis et al. 2008)",
        n_labels: Some(6),
        files: &[
            DataFile {
                path: "emotions/emotions-train.arff",
                sha256: "bbe704106c79bb8fb99c1d1d2e9bde081d6a2daeb01f100862f11fd91a3c1f98",
                bytes: 252080,
            },
            DataFile {
                path: "emotions/emotions-test.arff",
                sha256: "f13d4b746b7b5c8eb484bd751d6ac463d4560dff998a93516a5c1fe35daf6c8f",
                bytes: 132007,
            },
            DataFile {
                path: "emotions/emotions.xml",
                sha256: "dbce8e6ccbbb2fcbfd9e9edbb230d7ed12692c6e13f59fdbc0161fa9b6cf2dc0",
                bytes: 323,
            },
        ],
    },
    Entry {
        name: "yeast",
        description: "Mulan: yeast gene functions (Elisseeff and Weston 2002)",
        n_labels: Some(14),
        files: &[
            DataFile {
                path: "yeast/yeast-train.arff",
                sha256: "e759dc991ff54694a4ff9c4314f3be0d6fd2b1994a4b563f57e416394c6aebbd",
                bytes: 1501117,
            },
            DataFile {
                path: "yeast/yeast-test.arff",
                sha256: "4aaac102bff9669a765bf0b378602e5cc8c3b181048282e2f003117b496d552a",
                bytes: 918515,
            },
            DataFile {
                path: "yeast/yeast.xml",
                sha256: "c3056cc26444b5158b1588d1b73bec9c45429e10f0957ad085903423cb81f247",
                bytes: 526,
            },
        ],
    },
    Entry {
        name: "scene",
        description: "Mulan: scene images (Boutell et al. 2004)",
        n_labels: Some(6),
        files: &[
            DataFile {
                path: "scene/scene-train.arff",
                sha256: "b53ba93bdf412de922e3960389bcee24744fa3e872ce610511fc1d750888b64d",
                bytes: 3127968,
            },
            DataFile {
                path: "scene/scene-test.arff",
                sha256: "ea38d20296b3ff7e220f477a3b802a9bcb2d768881fe6ee163efbc97ea527a42",
                bytes: 3090742,
            },
            DataFile {
                path: "scene/scene.xml",
                sha256: "55d8b247b949ad5c52e5a73d8c6775ec6e5469ce9682465b45b333b68ee4bcc5",
                bytes: 285,
            },
        ],
    },
    Entry {
        name: "enron",
        description: "Mulan: Enron e-mail",
        n_labels: Some(53),
        files: &[
            DataFile {
                path: "enron/enron-train.arff",
                sha256: "2988cefc1cdf7a8004a20ef84615cc8fa1b5d7434c16687283b41454e2d9d194",
                bytes: 607799,
            },
            DataFile {
                path: "enron/enron-test.arff",
                sha256: "2f3aad54a8f54caaab4ab01246fe9dd385ba944a2633028f52747b57eac5474e",
                bytes: 324140,
            },
            DataFile {
                path: "enron/enron.xml",
                sha256: "ed40c92d7f613eed51714912cab10dddc4ce456262137d8fef230d44c7f4457b",
                bytes: 1604,
            },
        ],
    },
    Entry {
        name: "bibtex",
        description: "Mulan: Bibtex tag recommendation (Katakis et al. 2008)",
        n_labels: Some(159),
        files: &[
            DataFile {
                path: "bibtex/bibtex-train.arff",
                sha256: "8dcc9de6e0b2cebaec8c1f4fac78431adeeb73cfd3ab879b530a66d366e59174",
                bytes: 2292961,
            },
            DataFile {
                path: "bibtex/bibtex-test.arff",
                sha256: "9b03329cde64d3f994bdf7fbbac3f3b10fe185c311cb9ae725475f59c7f3f922",
                bytes: 1215637,
            },
            DataFile {
                path: "bibtex/bibtex.xml",
                sha256: "08fe20013c1e75dcf1888c185f5187c95e76495b8518ce289b4d3afce38d1232",
                bytes: 5880,
            },
        ],
    },
    Entry {
        name: "corel5k",
        description: "Mulan: Corel5k image annotation (Duygulu et al. 2002)",
        n_labels: Some(374),
        files: &[
            DataFile {
                path: "corel5k/Corel5k-train.arff",
                sha256: "d285b9e44171c3e760a7cb7fbceb68d7212fe6d0ffe3cd249f0e03cc55fe0b39",
                bytes: 7879772,
            },
            DataFile {
                path: "corel5k/Corel5k-test.arff",
                sha256: "1907f52eb64cac755e24265990c6674ca209ebd868a967d9d0a36ef42e888cac",
                bytes: 895771,
            },
            DataFile {
                path: "corel5k/corel5k.xml",
                sha256: "54ef6a6ccb7ca9b77524052b34b306d5d501661a5609b9d1cc7085b2b597679d",
                bytes: 11222,
            },
        ],
    },
    Entry {
        name: "delicious",
        description: "Mulan: Delicious bookmarks (Tsoumakas et al. 2008)",
        n_labels: Some(983),
        files: &[
            DataFile {
                path: "delicious/delicious-train.arff",
                sha256: "030186cdb542ebdd32052fcdbb1ebe30115b3a22518c1b4b198c45eb827aebe1",
                bytes: 3056590,
            },
            DataFile {
                path: "delicious/delicious-test.arff",
                sha256: "2dfb01723a819914b0ca83361177ed413ce3f2169851d9f228d4692915d63944",
                bytes: 757565,
            },
            DataFile {
                path: "delicious/delicious.xml",
                sha256: "895a02309299386dac2a0dd6cd02c344e36ecd5e6c0067af37fdb400d29cd195",
                bytes: 34303,
            },
        ],
    },
    Entry {
        name: "usps",
        description: "USPS handwritten digits, the ESL zipcode data (label v1 .. v256)",
        n_labels: None,
        files: &[
            DataFile {
                path: "usps/usps_train.txt",
                sha256: "1d0a7cc38ec728b7f89be639cf040ccbfa1984a9a47af6985840aea5f2883a1b",
                bytes: 14468337,
            },
            DataFile {
                path: "usps/usps_test.txt",
                sha256: "cffa5b0987115ae47f1657f5012a3460b3b61fffa947c49368136a073805a364",
                bytes: 3976000,
            },
        ],
    },
];

/// The data set called `name` (case-insensitive).
pub fn find(name: &str) -> Option<&'static Entry> {
    DATASETS.iter().find(|d| d.name.eq_ignore_ascii_case(name))
}

/// Lowercase hex SHA-256 of `bytes`.
///
/// # Example
/// ```
/// assert_eq!(
///     okr_eval::catalog::sha256_hex(b"abc"),
///     "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
/// );
/// ```
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn hex(digest: &[u8]) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// Lowercase hex SHA-256 of the file at `path`, read in blocks.
///
/// # Errors
/// The I/O error of opening or reading the file.
pub fn file_sha256(path: &Path) -> io::Result<String> {
    let mut file = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            return Ok(hex(&hasher.finalize()));
        }
        hasher.update(&buf[..n]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalog_is_consistent() {
        for d in DATASETS {
            assert!(!d.files.is_empty(), "{}", d.name);
            for f in d.files {
                assert!(f.path.starts_with(&format!("{}/", d.name)), "{}", f.path);
                assert_eq!(f.sha256.len(), 64);
                assert!(f.sha256.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
            }
            assert_eq!(d.n_labels.is_some(), d.train_test().is_some(), "{}", d.name);
        }
        assert_eq!(find("Emotions").map(|d| d.n_labels), Some(Some(6)));
        assert!(find("mnist").is_none());
    }

    /// The checksums are those of the project's data directory, where it exists.
    #[test]
    fn checksums_match_the_data_directory() {
        let dir = crate::data_dir();
        for d in DATASETS {
            for f in d.files {
                let path = dir.join(f.path);
                let Ok(bytes) = std::fs::read(&path) else { continue };
                assert_eq!(bytes.len() as u64, f.bytes, "{}", f.path);
                assert_eq!(sha256_hex(&bytes), f.sha256, "{}", f.path);
            }
        }
    }

    #[test]
    fn sizes_and_checksums_of_files_on_disk() {
        // SHA-256 of "abc" (FIPS 180-2, appendix B.1).
        const ABC: &str = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        let dir = tempfile::tempdir().unwrap();
        let file = DataFile { path: "set/a.txt", sha256: ABC, bytes: 3 };
        assert!(!file.is_verified_in(dir.path()), "missing");
        std::fs::create_dir(dir.path().join("set")).unwrap();
        std::fs::write(dir.path().join("set/a.txt"), b"abd").unwrap();
        assert!(!file.is_verified_in(dir.path()), "same size, other bytes");
        std::fs::write(dir.path().join("set/a.txt"), b"abc").unwrap();
        assert_eq!(file_sha256(&dir.path().join("set/a.txt")).unwrap(), ABC);
        assert!(file.is_verified_in(dir.path()));
        std::fs::write(dir.path().join("set/a.txt"), b"abcd").unwrap();
        assert!(!file.is_verified_in(dir.path()), "longer");
        let entry = Entry { name: "set", description: "", n_labels: None, files: &[] };
        assert_eq!(entry.bytes(), 0);
        assert_eq!(find("emotions").unwrap().bytes(), 252080 + 132007 + 323);
    }
}
