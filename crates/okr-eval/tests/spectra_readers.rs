//! The MGF and MSP readers on small hand-made libraries (`tests/data/small.mgf`,
//! with a byte-order mark; `tests/data/small.msp`, with CRLF line ends), on
//! bounded and malformed inputs, and on matchms' `pesticides.mgf` when
//! `OKR_PESTICIDES_MGF` names it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use okr_eval::{Error, read_mgf, read_msp};
use okr_kernels::IonMode;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name)
}

#[test]
fn small_mgf_every_field() {
    let lib = read_mgf(data("small.mgf")).unwrap();
    assert_eq!(lib.len(), 3);
    let (a, b, c) = (lib.spectra.spectrum(0), lib.spectra.spectrum(1), lib.spectra.spectrum(2));
    assert_eq!(a.peaks(), &[(70.786774, 213.612045), (94.917038, 10964.588867), (155.046, 1200.5)]);
    assert_eq!((a.precursor_mz(), a.charge(), a.ion_mode()), (Some(183.057), Some(1), Some(IonMode::Negative)));
    // Peaks sorted by m/z, a third column ignored, repeated m/z kept.
    assert_eq!(b.peaks(), &[(91.054, 100.0), (120.08, 15.0), (120.08, 30.0)]);
    assert_eq!((b.precursor_mz(), b.charge(), b.ion_mode()), (Some(281.099), Some(2), Some(IonMode::Positive)));
    assert_eq!((c.charge(), c.n_peaks()), (Some(-1), 1));

    let m = &lib.metadata;
    assert_eq!(m[0].line, 1);
    assert_eq!(m[0].name.as_deref(), Some("Hand-made A M-H"));
    assert_eq!(m[0].smiles.as_deref(), Some("C1=CC=C2C(=C1)NC(=N2)C3=CC=CO3"));
    assert!(m[0].inchi.as_deref().unwrap().starts_with("InChI=1S/C11H8N2O/c1-2"));
    assert_eq!(m[0].inchikey_first_block(), Some("AAAAAAAAAAAAAA"));
    assert_eq!(m[0].other.get("spectrumid").map(String::as_str), Some("HAND00001"));
    assert_eq!(m[0].other.get("inchiaux").map(String::as_str), Some("N/A"));
    assert_eq!(m[0].other.get("mslevel").map(String::as_str), Some("2"));
    assert_eq!(m[0].formula, None);
    // TITLE stands in for a missing NAME; empty SMILES / InChI are missing.
    assert_eq!(m[1].name.as_deref(), Some("Hand-made B, second spectrum"));
    assert_eq!((m[1].smiles.as_deref(), m[1].inchi.as_deref()), (None, None));
    assert_eq!(m[1].formula.as_deref(), Some("C14H12N2O4"));
    assert_eq!(m[1].line, 17);
    // Two spectra of structure A (other stereo block).
    assert_eq!(m[2].inchikey_first_block(), m[0].inchikey_first_block());
}

#[test]
fn small_msp_every_field() {
    let lib = read_msp(data("small.msp")).unwrap();
    assert_eq!(lib.len(), 3);
    let (c, d, e) = (lib.spectra.spectrum(0), lib.spectra.spectrum(1), lib.spectra.spectrum(2));
    assert_eq!(c.peaks(), &[(57.0346, 6.2), (69.0346, 4.1), (97.0295, 100.0), (113.0244, 12.0), (141.0193, 55.5)]);
    assert_eq!((c.precursor_mz(), c.charge(), c.ion_mode()), (Some(141.0193), None, Some(IonMode::Negative)));
    assert!(d.is_empty());
    assert_eq!((d.precursor_mz(), d.charge(), d.ion_mode()), (Some(428.31), Some(1), Some(IonMode::Positive)));
    assert_eq!(e.peaks(), &[(12.0, 0.0), (24.0, 0.0), (25.0, 2.0)]);

    let m = &lib.metadata;
    assert_eq!((m[0].line, m[1].line, m[2].line), (1, 19, 26));
    assert_eq!(m[0].name.as_deref(), Some("Hand-made C"));
    assert_eq!(m[0].smiles.as_deref(), Some("C1=C(OC=C(C1=O)O)CO"));
    assert_eq!(m[0].formula.as_deref(), Some("C6H6O4"));
    assert_eq!(m[0].inchikey.as_deref(), Some("CCCCCCCCCCCCCC-UHFFFAOYSA-N"));
    assert!(m[0].inchi.as_deref().unwrap().starts_with("InChI=1S/C6H6O4/"));
    assert_eq!(m[0].other.get("precursor_type").map(String::as_str), Some("[M-H]-"));
    assert_eq!(m[0].other.get("db#").map(String::as_str), Some("HAND0003"));
    assert_eq!(m[0].other.get("comments").map(String::as_str), Some("\"computed SMILES=C1=C(OC=C(C1=O)O)CO\""));
    assert_eq!(m[2].inchikey_first_block(), Some("CCCCCCCCCCCCCC"));
}

/// `/dev/zero`, a file with a NUL byte and a missing file are clean errors.
#[test]
fn unreadable_inputs_are_clean_errors() {
    #[cfg(unix)]
    for err in [read_mgf("/dev/zero").unwrap_err(), read_msp("/dev/zero").unwrap_err()] {
        assert!(matches!(err, Error::NotText { offset: 0, .. }), "{err}");
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nul.mgf");
    std::fs::write(&path, b"BEGIN IONS\n1 2\0\nEND IONS\n").unwrap();
    assert!(matches!(read_mgf(&path), Err(Error::NotText { offset: 14, .. })));
    assert!(matches!(read_msp(dir.path().join("missing.msp")), Err(Error::Io { .. })));
    // A very long line is a parse error with a short excerpt, not a panic.
    let long = format!("BEGIN IONS\n1 {}\nEND IONS\n", "9".repeat(1 << 20));
    std::fs::write(&path, long).unwrap();
    match read_mgf(&path) {
        Err(e @ Error::Parse { line: 2, .. }) => assert!(e.to_string().len() < 200, "{e}"),
        other => panic!("{other:?}"),
    }
}

/// The reader parses the whole of matchms 0.33.1's `tests/testdata/pesticides.mgf`
/// (76 GNPS spectra): set `OKR_PESTICIDES_MGF` to its path
/// (`pip download --no-deps --no-binary :all: matchms==0.33.1`). Skipped
/// otherwise. The file carries InChI but no InChIKey, so structures are
/// counted by their InChI skeleton (formula, connections and hydrogens: the
/// layers the first InChIKey block hashes).
#[test]
fn pesticides_mgf_when_present() {
    let Some(path) = std::env::var_os("OKR_PESTICIDES_MGF") else {
        println!("note: OKR_PESTICIDES_MGF not set; skipping");
        return;
    };
    let lib = read_mgf(&path).unwrap_or_else(|e| panic!("{e}"));
    let n = lib.len();
    let peaks: usize = lib.spectra.iter().map(|s| s.n_peaks()).sum();
    let with_smiles = lib.metadata.iter().filter(|m| m.smiles.is_some()).count();
    let skeletons: BTreeSet<String> = lib
        .metadata
        .iter()
        .filter_map(|m| m.inchi.as_deref())
        .map(|i| i.split('/').take_while(|l| !l.starts_with(['b', 't', 'm', 's', 'i'])).collect::<Vec<_>>().join("/"))
        .collect();
    let inchikey_blocks: BTreeSet<&str> = lib.metadata.iter().filter_map(|m| m.inchikey_first_block()).collect();
    println!(
        "pesticides.mgf: {n} spectra, {peaks} peaks, {with_smiles} with SMILES, {} distinct InChI skeletons, \
         {} distinct InChIKey first blocks",
        skeletons.len(),
        inchikey_blocks.len()
    );
    assert_eq!((n, peaks, with_smiles), (76, 4721, 76));
    // RDKit 2026.9 gives 43 distinct first InChIKey blocks from these InChI
    // (and 45 from the SMILES, which disagree with the InChI for a few entries).
    assert_eq!(skeletons.len(), 43);
    assert!(inchikey_blocks.is_empty());
    assert!(lib.spectra.iter().all(|s| s.ion_mode() == Some(IonMode::Negative) && s.precursor_mz().is_some()));
    assert!(lib.spectra.iter().all(|s| s.n_peaks() > 0));
}
